"""Opening a field with a remote: field id check, bootstrap, then the Replicator.

``open_remote`` is what ``chitta.open(path, remote=URL)`` calls. Before the
field opens: the bucket is checked, the prefix's ``FIELD`` object is created
or compared with the local ``remote/FIELD_ID`` (a prefix holding another
field is refused), the bucket's newer checkpoint is installed and the other
machines' log fetched. Then the field opens as usual (checkpoint + replay) and
a Replicator is attached as ``field.remote``.
"""

from __future__ import annotations

import functools
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta.errors import InvalidArgument, RemoteError, RemoteUnavailable
from chitta.remote import checkpoints, layout
from chitta.remote.local import local_segments
from chitta.remote.replicator import MODES, Replicator
from chitta.remote.store import ObjectStore
from chitta.remote.url import parse_url

if TYPE_CHECKING:
    from chitta.field import Field

LOCAL_ID = Path("remote") / "FIELD_ID"
# Public calls that append to the log: in sync mode each returns once the bucket has its chunk.
WRITE_METHODS = (
    "remember",
    "remember_many",
    "remember_triplet",
    "forget",
    "update",
    "link",
    "supersede",
    "contradict",
    "confirm",
    "write_gate_pass",
    "restore",
    "learn_encoder",
    "reencode",
    "maintain",
    "demote_pass",
    "surprise_pass",
    "dedup_pass",
    "curate",
    "flush",
    "sync",
)


def _has_records(root: Path) -> bool:
    return any(size > 32 for segs in local_segments(root).values() for _f, size in segs)


def field_id(root: Path, store: ObjectStore, *, create: bool) -> str:
    """The field id shared by the local directory and the prefix (made on first attach)."""
    local_file = root / LOCAL_ID
    local = local_file.read_text().strip() if local_file.is_file() else None
    try:
        got = store.get(layout.FIELD_KEY)
    except RemoteUnavailable:
        if local is not None:
            return local  # attached before: work offline, ship when the store is back
        raise
    remote = layout.decode_field(got[0]) if got is not None else None
    if remote is None:
        if not create:
            raise RemoteError(
                f"{store.url} holds no chitta field; open with create=True to publish this one"
            )
        mine = local or secrets.token_hex(16)
        if not store.put_new(layout.FIELD_KEY, layout.encode_field(mine)):
            return field_id(root, store, create=create)  # another machine created it first
        remote = mine
    if local is not None and local != remote:
        raise RemoteError(
            f"{store.url} holds another field ({remote}) than {root} ({local}); "
            "use another prefix, or a fresh directory to join that field"
        )
    if local is None:
        if got is not None and _has_records(root):
            raise RemoteError(
                f"{store.url} holds another field and {root} already has records of its own; "
                "join it from an empty directory, or use another prefix"
            )
        local_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = local_file.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(remote + "\n")
        os.replace(tmp, local_file)
    return remote


def _sync_wrap(field: Field, name: str, replicator: Replicator) -> None:
    method = getattr(field, name, None)
    if method is None:
        return

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = method(*args, **kwargs)
        replicator.wait_shipped()
        return result

    field.__dict__[name] = call


def open_remote(
    field_class: type[Field],
    path: str | os.PathLike[str] | None,
    remote: str,
    *,
    remote_durability: str = "async",
    remote_timeout: float = 10.0,
    **options: Any,
) -> Field:
    """Open the field at ``path`` replicated through ``remote`` (see the module doc)."""
    from chitta.field import default_path

    if remote_durability not in MODES:
        raise InvalidArgument(
            f"remote_durability must be one of {MODES}, not {remote_durability!r}"
        )
    if (
        isinstance(remote_timeout, bool)
        or not isinstance(remote_timeout, (int, float))
        or not remote_timeout > 0
    ):
        raise InvalidArgument("remote_timeout must be a positive number of seconds")
    if remote_durability == "sync" and options.get("durability") == "buffered":
        raise InvalidArgument(
            "remote_durability='sync' needs durability 'flush' or 'fsync', not 'buffered'"
        )
    url = parse_url(remote)
    root = Path(path if path is not None else default_path()).expanduser().absolute()
    store = ObjectStore(url, timeout=float(remote_timeout))
    read_only = bool(options.get("read_only"))
    create = bool(options.get("create", True)) and not read_only
    known = (root / LOCAL_ID).is_file()
    try:
        store.check_bucket()
    except RemoteUnavailable:
        if not known:
            raise
    fid = field_id(root, store, create=create)
    if not (
        root / "segments"
    ).exists():  # a new field, or joining the prefix's (even read-only: a cache)
        if root.exists() and any(root.iterdir()) and set(os.listdir(root)) != {"remote"}:
            raise InvalidArgument(f"{root} exists, is not empty and is not a chitta field")
        (root / "segments").mkdir(parents=True, exist_ok=True)
    replicator = Replicator(
        root, url, store, fid, mode=remote_durability, timeout=float(remote_timeout)
    )
    if (root / "segments").is_dir():
        try:
            if options.get("load_checkpoint", True) and not read_only:
                checkpoints.bootstrap(root, store, fid)
            replicator.pull()
        except RemoteUnavailable as exc:
            replicator._note_error(exc)  # offline: open what is here, catch up later
    field = field_class(path, **options)
    try:
        replicator.start(field.instance_id)
        field.core.remote = replicator  # the field's hook: close, refresh, stats
        replicator.field = field
        if remote_durability == "sync" and not field.read_only:
            for name in WRITE_METHODS:
                _sync_wrap(field, name, replicator)
    except BaseException:
        replicator.close(drain=0)
        field.close()
        raise
    return field
