"""Checkpoints in the bucket: publish this machine's, bootstrap from the newest.

Publishing uploads every file of a local checkpoint under
``checkpoint/{name}/`` (create-only), waits until the bucket holds the log the
checkpoint covers (its own instance's shipping), and only then swaps
``checkpoint/CURRENT`` (a JSON record naming the files with their sizes and
CRCs) by a conditional put: If-Match on the ETag read, or If-None-Match when
there is none; a CURRENT of a higher clock is never replaced by a lower one.
Bootstrapping reads CURRENT, downloads and checks the files into a local
``checkpoint/tmp-*`` and publishes them locally (docs/FORMAT.md section 8);
the field then opens from it and checks its watermark against the log as
always, so a checkpoint is never trusted over the log.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta import _core
from chitta.errors import CorruptionError, RemoteError
from chitta.remote import layout
from chitta.remote.store import ObjectStore

if TYPE_CHECKING:
    from chitta.field import Field
    from chitta.remote.replicator import Replicator

_NAME = re.compile(r"^ckpt-([0-9a-f]{16})-[0-9a-f]{8}$")
_FILE = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")


def _clock(name: str) -> int:
    m = _NAME.match(name)
    return int(m.group(1), 16) if m else -1


def read_current(store: ObjectStore, field_id: str) -> tuple[dict[str, Any] | None, str | None]:
    got = store.get(layout.CHECKPOINT_CURRENT)
    if got is None:
        return None, None
    try:
        rec = json.loads(got[0][: 1 << 20])
        name, files = rec["name"], rec["files"]
        ok = rec.get("field_id") == field_id and _NAME.match(name) and isinstance(files, dict)
        ok = ok and all(
            _FILE.match(f) and isinstance(v, list) and len(v) == 2 for f, v in files.items()
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise RemoteError(
            "checkpoint/CURRENT in the bucket is not a chitta record; delete it to republish"
        ) from exc
    if not ok:
        raise RemoteError(
            "checkpoint/CURRENT in the bucket names another field or bad files; delete it"
        )
    return rec, got[1]


def publish(field: Field, replicator: Replicator) -> str:
    """Write a local checkpoint and make it the bucket's. Returns its name."""
    info = field.checkpoint()
    local = Path(info.path)
    store, fid = replicator.store, replicator.field_id
    files: dict[str, list[int]] = {}
    for f in sorted(local.iterdir()):
        if not f.is_file() or not _FILE.match(f.name):
            continue
        data = f.read_bytes()
        files[f.name] = [len(data), _core.crc32c(data)]
        store.put_new(f"checkpoint/{local.name}/{f.name}", data)  # a retry finds the same bytes
    replicator.wait_shipped()  # the log the checkpoint covers is in the bucket before CURRENT names it
    record = json.dumps({"name": local.name, "files": files, "field_id": fid}).encode()
    while True:
        current, etag = read_current(store, fid)
        if current is not None and _clock(current["name"]) >= _clock(local.name):
            return str(current["name"])  # someone published a newer one
        if store.put_swap(layout.CHECKPOINT_CURRENT, record, etag):
            return local.name


def bootstrap(root: Path, store: ObjectStore, field_id: str) -> str | None:
    """Install the bucket's checkpoint locally when it is newer than the local one.
    Returns its local name, None when there was nothing to do."""
    from chitta.field.checkpoint import store as cstore

    current, _etag = read_current(store, field_id)
    if current is None:
        return None
    remote_name = str(current["name"])
    try:
        live = cstore.current(root)
    except CorruptionError:
        live = None
    if live is not None and _clock(live.name) >= _clock(remote_name):
        return None
    with cstore.writer_lock(root):
        temp = cstore.new_temp_dir(root)
        for fname, (size, crc) in current["files"].items():
            got = store.get(f"checkpoint/{remote_name}/{fname}")
            if got is None or len(got[0]) != size or _core.crc32c(got[0]) != crc:
                raise RemoteError(
                    f"the bucket's checkpoint {remote_name} file {fname} is missing or damaged; "
                    "publish a new checkpoint (field.remote.publish_checkpoint())"
                )
            with open(temp / fname, "wb") as fh:
                fh.write(got[0])
                fh.flush()
                os.fsync(fh.fileno())
        final = cstore.publish(root, temp, _clock(remote_name))
        cstore.prune(root, final)
    return final.name
