"""The Field: one chitta memory store, as seen by one process.

The coordinator owns the segment log (native, ``chitta._core.SegmentLog``) and
the organs. Every change is validated, encoded as a typed op, appended to this
instance's segment, and only then applied to the organs. Opening a field and
``refresh()`` replay what the log holds (every instance's records, merged by
``(seqno, instance_id)``) into the organs. Nothing is applied that is not in
the log; nothing in the log is applied twice.

This module opens the field and wires the organs; the methods live in mixins,
one job each: ``field_commit`` (checks, commits, routing, the queue of plain
puts), ``field_write`` and ``field_puts`` (writes), ``field_maintain``
(maintenance passes), ``field_read`` (reads by id, stats), ``field_recall``,
``field_replay`` (replay, refresh), ``field_checkpoint``, ``field_link``,
``field_lifecycle``.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from chitta import _core
from chitta.ops import checks as v
from chitta.encode.field_encoding import FieldEncoding
from chitta.errors import InvalidArgument, NotAFieldError
from chitta.field.checkpoint import CheckpointMixin
from chitta.field.commit import PENDING_LIMIT, CommitMixin, drainer
from chitta.field.lifecycle import LifecycleMixin
from chitta.field.link import LinkMixin
from chitta.field.maintain import MaintainMixin
from chitta.field.puts import PutMixin, infer_harness
from chitta.field.read import ReadMixin
from chitta.field.recall import RecallMixin
from chitta.field.replay import ReplayMixin
from chitta.field.state import has_vector_sink, takes_code_columns, takes_columns
from chitta.field.vocab import VocabMixin
from chitta.field.write import WriteMixin
from chitta.ops import OpType
from chitta.organs import Organ, registry
from chitta.recall.engine import RecallEngine, RecallSettings
from chitta.recall.presets import settings_for

if TYPE_CHECKING:
    from typing_extensions import Self

DURABILITIES = ("flush", "fsync", "buffered")
DEFAULT_SEGMENT_BYTES = 256 << 20
_MAX_INSTANCE = 2**32 - 1

__all__ = ["DURABILITIES", "Field", "default_path", "infer_harness", "open"]


def default_path() -> Path:
    """``$CHITTA_HOME``, else ``$XDG_DATA_HOME/chitta/default`` (``~/.local/share``)."""
    home = os.environ.get("CHITTA_HOME")
    if home:
        return Path(home).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "chitta" / "default"


def _check_field_path(path: Path, create: bool) -> None:
    if path.exists() and not path.is_dir():
        raise NotAFieldError(f"{path} is a file, not a chitta field")
    if (path / "segments").is_dir():
        return
    if not create:
        raise NotAFieldError(f"{path} is not a chitta field (no segments/ directory)")
    if path.exists() and any(path.iterdir()):
        raise NotAFieldError(
            f"{path} exists, is not empty and is not a chitta field; refusing to create one inside it"
        )


class Field(
    WriteMixin,
    PutMixin,
    CommitMixin,
    MaintainMixin,
    ReadMixin,
    CheckpointMixin,
    RecallMixin,
    ReplayMixin,
    VocabMixin,
    LinkMixin,
    LifecycleMixin,
):
    """A chitta field. Use :func:`chitta.open` to get one; close it (or use ``with``)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        instance_id: int | None = None,
        durability: str = "flush",
        create: bool = True,
        read_only: bool = False,
        salvage: bool = False,
        segment_bytes: int | None = None,
        embedder: Any = "auto",
        reembed: bool = False,
        clock: Callable[[], float] | None = None,
        recall_settings: RecallSettings | None = None,
        load_checkpoint: bool = True,
    ) -> None:
        self._closed = True  # until the log is open
        self._remote: Any = None  # chitta.remote.Replicator when opened with remote= (chitta/remote/attach.py)
        if path is None:
            path = default_path()
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidArgument(f"path must be a str or os.PathLike, not {type(path).__name__}")
        if isinstance(path, str) and not path.strip():
            raise InvalidArgument("path is empty")
        root = Path(v.field_path(path)).expanduser().absolute()  # no NUL, UTF-8: before anything is made
        if durability not in DURABILITIES:
            raise InvalidArgument(f"durability must be one of {DURABILITIES}, not {durability!r}")
        if instance_id is not None:
            if isinstance(instance_id, bool) or not isinstance(instance_id, int):
                raise InvalidArgument("instance_id must be an int or None")
            if not 1 <= instance_id <= _MAX_INSTANCE:
                raise InvalidArgument(f"instance_id must be between 1 and 2**32-1, got {instance_id}")
        if segment_bytes is None:
            segment_bytes = DEFAULT_SEGMENT_BYTES
        else:
            segment_bytes = v.segment_bytes(segment_bytes)
        if clock is not None and not callable(clock):
            raise InvalidArgument("clock must be a callable returning epoch seconds")
        for flag, value in (
            ("create", create),
            ("read_only", read_only),
            ("salvage", salvage),
            ("reembed", reembed),
            ("load_checkpoint", load_checkpoint),
        ):
            if not isinstance(value, bool):
                raise InvalidArgument(f"{flag} must be a bool")
        _check_field_path(root, create and not read_only)

        self._path = root
        self._durability = durability
        self._salvage = salvage
        self._log = _core.SegmentLog(
            str(root),
            instance_id=instance_id or 0,
            durability=durability,
            segment_bytes=segment_bytes,
            create=create,
            read_only=read_only,
            salvage=salvage,
        )
        self._closed = False
        self._read_only = read_only
        self._instance = int(self._log.instance_id)
        self._clock = clock or time.time
        self._lock = threading.RLock()
        self._recall_settings = recall_settings
        self._fresh_organs()
        # remember()'s plain path is one native call (chitta/field/write.py): it appends
        # and queues (id, ms, text) here; the organs take the queue as one run of
        # columns (_apply_pending: field_commit.py) before any read or other write, so
        # every public call sees its writes. It also holds this instance's id counter.
        self._pending_puts = self._log.put_queue(
            clock=None if self._clock is time.time else self._clock, max_text_bytes=v.MAX_TEXT_BYTES
        )
        self._pending_puts.set_drain(drainer(self), PENDING_LIMIT)
        self._fast_put: Callable[[str], int | None] | None = None  # set once open and writable
        self._embedded_writes = 0
        self._since_learning: int = 0  # embedded writes since this handle's last learning step
        self.salvaged: list[dict[str, Any]] = []  # what salvage skipped, with where
        self.checkpoint_loaded: str | None = None  # the checkpoint this handle opened from
        self._checkpoint_applied = 0  # records the loaded checkpoint covers
        self._checkpoint_bytes = 0  # segment bytes it covers
        try:
            if load_checkpoint:
                self._load_checkpoint()
            self._replay()
        except BaseException:
            self._log.close()
            self._closed = True
            raise
        self._pending_puts.start_ids(self._memories.next_local_id(self._log.instance_id))
        try:
            self._encoding = FieldEncoding(embedder, recorded=self._settings.get("embedder"), reembed=reembed)
            if self._recall_settings is None:  # the embedder's preferred dense weight (chitta.recall.presets)
                self._recall_settings = self._engine.settings = settings_for(self._encoding.embedder)
            # the field's vocabulary for query expansion when the settings ask for it (chitta.recall.expand),
            # from the checkpoint's table plus the log after it (chitta/field/vocab.py)
            self._attach_vocabulary()
            if reembed and not read_only:
                self._reembed()
        except BaseException:
            self.close()
            raise
        if not read_only and not self._encoding.enabled:
            self._fast_put = self._pending_puts.put
            if type(self).remember is WriteMixin.remember:  # not overridden by a subclass
                # remember(text) alone, natively: skips binding the method's ten keyword
                # defaults; any other call runs the Python method (field_write.py).
                self.__dict__["remember"] = self._pending_puts.remember_entry(WriteMixin.remember, weakref.ref(self))

    def _fresh_organs(self) -> None:
        # Every registered organ, fresh (chitta/organs/registry.py); the built-in ones by name.
        self._organs: list[Organ] = registry.build()
        self._registry = registry.Routes(self._organs)
        self._routes = self._registry.table  # op byte -> organs (a dict: the hot path looks it up per op)
        self._memories = self._registry.organ("memories")  # type: ignore[assignment]
        self._graph = self._registry.organ("graph")  # type: ignore[assignment]
        self._settings = self._registry.organ("settings")  # type: ignore[assignment]
        self._index = self._registry.organ("recall_index")  # type: ignore[assignment]
        self._encoder_organ = self._registry.organ("encoder")  # type: ignore[assignment]
        self._put_organs = self._routes[int(OpType.PutPayload)]
        # Organs that take a run of puts as columns (PutColumns); the others get PutPayload ops.
        self._column_organs = tuple(o for o in self._put_organs if takes_columns(o))
        self._op_organs = tuple(o for o in self._put_organs if not takes_columns(o))
        # The organ whose vector matrix replay decodes put runs into (no copy when applied).
        self._vector_sink_organ = next((o for o in self._column_organs if has_vector_sink(o)), None)
        self._sink: Any = None  # during a replay: that organ's sink
        # Organs that take a run of sparse codes as arrays (CodeColumns): replay decodes those runs natively.
        self._code_organs = tuple(
            o for o in self._routes.get(int(OpType.UpdateSparseCode), ()) if takes_code_columns(o)
        )
        # remember()'s fast path (chitta/field/write.py): one bound method per organ.
        self._put_appliers = tuple(getattr(o, "apply_put", o.apply) for o in self._put_organs)
        self._engine = RecallEngine(self._memories, self._index, self._graph, settings=self._recall_settings)
        self._applied = 0
        self._unrouted = 0  # valid ops no organ of this version keeps state for
        self._vocab_saved: Any = None  # the checkpoint's word table (vocab.emb) until the vocabulary takes it

    # ---- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        """Flush what is buffered and release this instance. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._fast_put = None
        self.__dict__.pop("remember", None)
        self._log.close()
        if self._remote is not None:  # ship what is left (bounded), then stop its threads
            self._remote.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self)} memories"
        return f"<chitta.Field {str(self._path)!r} {state}>"

    def __len__(self) -> int:
        self._check_open()
        return len(self._memories)

    def __contains__(self, id: object) -> bool:
        self._check_open()
        try:
            mid = v.memory_id(id)
        except InvalidArgument:
            return False
        return self._memories.is_live(mid)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def read_only(self) -> bool:
        return bool(self._log.read_only)

    @property
    def instance_id(self) -> int | None:
        """This handle's writer instance (None when read-only)."""
        return self._log.instance_id or None

    @property
    def durability(self) -> str:
        return self._durability

    # ---- organ operations (chitta/field/calls.py) -----------------------------------
    def call(self, name: str, /, **arguments: Any) -> Any:
        """Run an organ's operation by name (the operations of every registered organ,
        also offered by the daemon and as MCP tools); ``arguments`` are checked
        against its JSON schema. InvalidArgument names what to fix."""
        from chitta.field import calls

        return calls.call(self, name, arguments)

    def organ(self, name: str) -> Organ:
        """The organ called ``name`` (chitta.organs.registry), for its queries: tools and
        tests read organ state through it; change it only through ops."""
        self._check_open()
        return self._registry.organ(name)

    @property
    def remote(self) -> Any:
        """The ``chitta.remote.Replicator`` when opened with ``remote=``, else None."""
        return self._remote

    def remote_status(self) -> dict[str, Any] | None:
        """Replication state (lag, errors, chunks) when opened with ``remote=``, else None."""
        return self._remote.status() if self._remote is not None else None

def open(
    path: str | os.PathLike[str] | None = None,
    *,
    instance_id: int | None = None,
    durability: str = "flush",
    create: bool = True,
    read_only: bool = False,
    salvage: bool = False,
    segment_bytes: int | None = None,
    embedder: Any = "auto",
    reembed: bool = False,
    clock: Callable[[], float] | None = None,
    recall_settings: RecallSettings | None = None,
    load_checkpoint: bool = True,
    remote: str | None = None,
    remote_durability: str = "async",
    remote_timeout: float = 10.0,
) -> Field:
    """Open (or create) the field at ``path`` (default: ``$CHITTA_HOME``, else
    ``~/.local/share/chitta/default``).

    ``instance_id`` continues a named writer instance (locked while open);
    without it this handle writes as a fresh random instance. ``durability``:
    ``"flush"`` (default: survives a process crash), ``"fsync"`` (survives power
    loss; concurrent writers share fsyncs), ``"buffered"`` (bulk import; written
    on flush/close). ``salvage=True`` skips damaged records and lists them in
    ``Field.salvaged`` instead of failing.

    ``embedder``: ``"auto"`` (the field's recorded model, else the default
    one; ``$CHITTA_EMBEDDER`` overrides), an Embedder, a model name, or None
    (store no vectors for texts). A different model family than the field's is
    refused unless ``reembed=True``, which re-embeds every memory. ``clock``:
    a callable returning epoch seconds (tests). ``recall_settings``: lane
    weights and pool sizes (default: ``chitta.recall.presets.settings_for``
    the embedder). ``load_checkpoint=False`` ignores the field's
    checkpoint and replays the whole log.

    ``remote``: ``"s3://bucket/prefix"`` (default ``$CHITTA_REMOTE``) shares the field
    with other machines through an S3-compatible object store (docs/REMOTE.md);
    ``remote_durability``: ``"async"`` (shipped in the background) or ``"sync"``
    (each write returns once the bucket holds it; ``RemoteUnavailable`` after
    ``remote_timeout`` seconds).
    """
    remote = remote if remote is not None else (os.environ.get("CHITTA_REMOTE") or None)
    if remote is not None:
        from chitta.remote.attach import open_remote

        return open_remote(
            Field, path, remote, remote_durability=remote_durability, remote_timeout=remote_timeout,
            instance_id=instance_id, durability=durability, create=create, read_only=read_only,
            salvage=salvage, segment_bytes=segment_bytes, embedder=embedder, reembed=reembed, clock=clock,
            recall_settings=recall_settings, load_checkpoint=load_checkpoint,
        )
    return Field(
        path,
        instance_id=instance_id,
        durability=durability,
        create=create,
        read_only=read_only,
        salvage=salvage,
        segment_bytes=segment_bytes,
        embedder=embedder,
        reembed=reembed,
        clock=clock,
        recall_settings=recall_settings,
        load_checkpoint=load_checkpoint,
    )
