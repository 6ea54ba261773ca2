"""Divergence: this machine's copy of an instance disagrees with the bucket.

After a local power loss a segment may be shorter than what was shipped (the
page cache held bytes the bucket already has), or, when the same instance was
reopened (``instance_id=``) and wrote on, hold other bytes where the bucket
has the lost ones. ``check`` finds both (sizes, and the bytes of the object at
the local end). A shorter copy that is a prefix of the bucket's is completed by
the fetcher (the lost records come back); anything else is reported in
``remote_status()["diverged"]`` and never shipped. ``repair`` (with no process
open on the field) moves the disagreeing local segments of each such instance
into ``quarantine/`` and fetches the bucket's bytes in their place; the field
then continues on new instances.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from chitta.errors import RemoteError
from chitta.remote import cover, layout
from chitta.remote.cover import Piece
from chitta.remote.local import live_elsewhere, local_segments, read_range, segment_name
from chitta.remote.store import ObjectStore

SHORTER, DIFFERS = "shorter", "differs"
REPAIR_HINT = (
    "close every process on this field, then run chitta.remote.diverge.repair(path, remote) "
    "(the local bytes go to quarantine/, the bucket's are fetched; docs/REMOTE.md section 9)"
)


def check(
    root: Path, store: ObjectStore, field_id: bytes, inst: int, found: list[Piece]
) -> tuple[str, str] | None:
    """(kind, why) when the local copy of ``inst`` disagrees with the bucket's objects
    ``found`` (its whole listing), None when it agrees as far as can be seen."""
    local = dict(local_segments(root).get(inst, ()))
    for (_i, first), segment in cover.by_segment(found).items():
        name = segment_name(inst, first)
        chosen = cover.cover(segment, 0)
        bucket_end = chosen[-1].end if chosen else 0
        size = local.get(first)
        if size is None:
            if bucket_end and any(f > first for f in local):
                return (
                    DIFFERS,
                    f"the bucket holds {name} ({bucket_end} bytes), which this machine lacks",
                )
            continue
        if size == bucket_end or bucket_end == 0:
            continue
        edge = min(size, bucket_end)
        holder = next((p for p in chosen if p.ck.offset < edge <= p.end), None)
        if holder is not None:
            got = store.get(holder.key)
            if got is not None:
                payload = layout.decode_chunk(field_id, holder.ck, got[0])
                mine = read_range(
                    root / "segments" / name, holder.ck.offset, edge - holder.ck.offset
                )
                if mine != payload[: edge - holder.ck.offset]:
                    return DIFFERS, (
                        f"{name} on this machine differs from the bucket's before offset {edge}: "
                        "it was rewritten after a loss of local data"
                    )
        if size < bucket_end:
            return SHORTER, (
                f"{name} on this machine has {size} bytes, the bucket {bucket_end}: local data was "
                "lost after it was shipped (a power loss?)"
            )
    return None


def _quarantine(root: Path, seg: Path, why: str) -> str:
    qdir = root / "quarantine"
    qdir.mkdir(mode=0o700, exist_ok=True)
    base = qdir / f"{seg.name}.0"
    data = seg.read_bytes()
    with open(f"{base}.bin", "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    report = {
        "segment": seg.name,
        "offset": 0,
        "bytes": len(data),
        "why": "remote_diverged",
        "detail": why,
        "time_ms": int(time.time() * 1000),
    }
    with open(f"{base}.json", "w") as f:
        json.dump(report, f)
        f.flush()
        os.fsync(f.fileno())
    seg.unlink()
    return f"{base}.bin"


def repair(path: str | os.PathLike[str], remote: str) -> dict[str, Any]:
    """Replace every disagreeing local instance by the bucket's bytes (the local ones
    kept in quarantine/). Returns {instance hex: {"why", "quarantined"}}."""
    from chitta.remote.attach import field_id
    from chitta.remote.fetch import Fetcher
    from chitta.remote.ship import Progress
    from chitta.remote.url import parse_url

    root = Path(path).expanduser().absolute()
    store = ObjectStore(parse_url(remote))
    fid = bytes.fromhex(field_id(root, store, create=False))
    report: dict[str, Any] = {}
    for inst, segs in local_segments(root).items():
        found = cover.pieces(store.list(layout.instance_prefix(inst)).keys)
        verdict = check(root, store, fid, inst, found)
        if verdict is None or verdict[0] == SHORTER:  # a prefix: the fetch below completes it
            continue
        if live_elsewhere(root, inst):
            raise RemoteError(
                f"instance {inst:08x} is open in another process; close it, then repair again"
            )
        moved = [
            _quarantine(root, root / "segments" / segment_name(inst, first), verdict[1])
            for first, _ in segs
        ]
        report[f"{inst:08x}"] = {"why": verdict[1], "quarantined": moved}
    if report:  # derived caches that may describe the quarantined bytes
        (root / "MANIFEST").unlink(missing_ok=True)
        shutil.rmtree(root / "checkpoint", ignore_errors=True)
    Fetcher(root, store, fid, 0, Progress()).pull_once()  # the bucket's bytes in their place
    return report
