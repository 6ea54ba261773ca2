"""The Field: one chitta memory store, as seen by one process.

The coordinator owns the segment log (native, ``chitta._core.SegmentLog``) and
the organs. Every change is validated, encoded as a typed op, appended to this
instance's segment, and only then applied to the organs. Opening a field and
``refresh()`` replay what the log holds (every instance's records, merged by
``(seqno, instance_id)``) into the organs. Nothing is applied that is not in
the log; nothing in the log is applied twice.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from chitta import _core, ops
from chitta import _validate as v
from chitta.checkpoint.snapshot import CheckpointInfo
from chitta.encode.field_encoding import FieldEncoding
from chitta.errors import (
    ChittaError,
    ClosedError,
    InvalidArgument,
    NotAFieldError,
    NotFound,
)
from chitta.field_lifecycle import LifecycleMixin
from chitta.field_link import LinkMixin
from chitta.field_recall import RecallMixin
from chitta.field_replay import ReplayMixin
from chitta.field_write import PENDING_LIMIT, WriteMixin, drainer, infer_harness, queued_columns
from chitta.model import FieldStats, Memory
from chitta.ops import Op, OpType
from chitta.organs import Organ
from chitta.organs.encoder import EncoderOrgan
from chitta.organs.graph import GraphOrgan
from chitta.organs.memories import MemoriesOrgan
from chitta.organs.recall_index import RecallIndexOrgan
from chitta.organs.settings import SettingsOrgan
from chitta.recall.engine import RecallEngine, RecallSettings
from chitta.recall.presets import settings_for

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


class Field(WriteMixin, RecallMixin, ReplayMixin, LinkMixin, LifecycleMixin):
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
        if path is None:
            path = default_path()
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidArgument(f"path must be a str or os.PathLike, not {type(path).__name__}")
        if isinstance(path, str) and not path.strip():
            raise InvalidArgument("path is empty")
        root = Path(path).expanduser().absolute()
        if durability not in DURABILITIES:
            raise InvalidArgument(f"durability must be one of {DURABILITIES}, not {durability!r}")
        if instance_id is not None:
            if isinstance(instance_id, bool) or not isinstance(instance_id, int):
                raise InvalidArgument("instance_id must be an int or None")
            if not 1 <= instance_id <= _MAX_INSTANCE:
                raise InvalidArgument(f"instance_id must be between 1 and 2**32-1, got {instance_id}")
        if segment_bytes is None:
            segment_bytes = DEFAULT_SEGMENT_BYTES
        elif isinstance(segment_bytes, bool) or not isinstance(segment_bytes, int) or segment_bytes < 1024:
            raise InvalidArgument("segment_bytes must be an int >= 1024")
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
        # remember()'s plain path is one native call (chitta/field_write.py): it appends
        # and queues (id, ms, text) here; the organs take the queue as one run of
        # columns (_apply_pending) before any read or other write of this handle, so
        # every public call sees its writes. It also holds this instance's id counter.
        self._pending_puts = self._log.put_queue(
            clock=None if self._clock is time.time else self._clock, max_text_bytes=v.MAX_TEXT_BYTES
        )
        self._pending_puts.set_drain(drainer(self), PENDING_LIMIT)
        self._fast_put: Callable[[str], int | None] | None = None  # set once open and writable
        self._embedded_writes = 0
        self._since_learning = 0  # embedded writes since this handle's last learning step
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
        self._memories = MemoriesOrgan()
        self._graph = GraphOrgan()
        self._settings = SettingsOrgan()
        self._index = RecallIndexOrgan()
        self._encoder_organ = EncoderOrgan()
        self._organs: list[Organ] = [self._memories, self._graph, self._settings, self._index, self._encoder_organ]
        routes: dict[int, list[Organ]] = {}
        for organ in self._organs:
            for op_type in organ.handles:
                routes.setdefault(int(op_type), []).append(organ)
        self._routes: dict[int, tuple[Organ, ...]] = {code: tuple(o) for code, o in routes.items()}
        self._put_organs = self._routes[int(OpType.PutPayload)]
        # Organs that take a run of puts as columns (PutColumns); the others get PutPayload ops.
        self._column_organs = tuple(o for o in self._put_organs if hasattr(o, "apply_columns"))
        self._op_organs = tuple(o for o in self._put_organs if not hasattr(o, "apply_columns"))
        # The organ whose vector matrix replay decodes put runs into (no copy when applied).
        self._vector_sink_organ = next((o for o in self._column_organs if hasattr(o, "vector_sink")), None)
        self._sink: Any = None  # during a replay: that organ's sink
        # Organs that take a run of sparse codes as arrays (CodeColumns): replay decodes those runs natively.
        self._code_organs = tuple(
            o for o in self._routes.get(int(OpType.UpdateSparseCode), ()) if hasattr(o, "apply_code_columns")
        )
        # remember()'s fast path (chitta/field_write.py): one bound method per organ.
        self._put_appliers = tuple(getattr(o, "apply_put", o.apply) for o in self._put_organs)
        self._engine = RecallEngine(self._memories, self._index, self._graph, settings=self._recall_settings)
        self._applied = 0
        self._unrouted = 0  # valid ops no organ of this version keeps state for

    def _load_checkpoint(self) -> None:
        """Start from the live checkpoint, if there is a usable one; the log stays
        the truth: anything wrong with it and the field is rebuilt from the log."""
        import warnings

        from chitta.checkpoint import snapshot
        from chitta.errors import CheckpointIgnored

        loaded = snapshot.try_load(self)
        if loaded is None:
            return
        try:
            snapshot.restore(self, loaded)
        except (ChittaError, KeyError, TypeError, ValueError, IndexError) as exc:
            warnings.warn(
                f"checkpoint {loaded.path.name} ignored, the field is rebuilt from its log: "
                f"{type(exc).__name__}: {exc}",
                CheckpointIgnored,
                stacklevel=3,
            )
            self._fresh_organs()
            return
        self.checkpoint_loaded = loaded.path.name
        self._checkpoint_applied = self._applied
        self._checkpoint_bytes = sum(int(p[1]) for p in loaded.state["watermark"]["positions"])

    def checkpoint(self) -> CheckpointInfo:
        """Write the field's derived state as a new checkpoint (``<root>/checkpoint/``)
        so that later opens load it and replay only what came after.

        Everything this handle wrote is pushed to the OS first; the checkpoint is
        built by a separate read-only view, so writers (this one included) go on
        appending meanwhile. LockedError if another process is writing one."""
        self._check_open()
        if not self._read_only:
            self._log.flush()
        from chitta.checkpoint.run import write_checkpoint

        info = write_checkpoint(self._path)
        assert info is not None  # no policy: always written
        with self._lock:  # what this handle counts as "since the last checkpoint" starts over
            self._checkpoint_applied = self._applied
            self._checkpoint_bytes = int(self._log.stats()["bytes"])
            self.checkpoint_loaded = Path(info.path).name
        return info

    # ---- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        """Flush what is buffered and release this instance. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._fast_put = None
        self.__dict__.pop("remember", None)
        self._log.close()

    def __enter__(self) -> Field:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self)} memories"
        return f"<chitta.Field {str(self._path)!r} {state}>"

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

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the field is closed")
        if self._pending_puts:
            self._apply_pending()

    def _check_writable(self) -> None:
        if self._closed:
            raise ClosedError("the field is closed")
        if self._read_only:
            raise InvalidArgument("the field was opened read_only")
        if self._pending_puts:
            self._apply_pending()

    def _apply_pending(self) -> None:
        """Apply the puts remember() queued, in the order queued, as one run
        (the organs' batch path). Threads may queue more meanwhile: ``take``
        moves out what is queued at that moment, the rest waits for the next run."""
        with self._lock:
            taken = self._pending_puts.take()
            if taken is None:
                return
            cols = queued_columns(*taken)
            for organ in self._column_organs:
                organ.apply_columns(cols)
            if self._op_organs:
                puts: list[Op] = list(cols.ops())
                for organ in self._op_organs:
                    organ.apply_run(OpType.PutPayload, puts)
            self._applied += len(cols)

    def _route(self, op: Op) -> None:
        organs = self._routes.get(int(op.op_type))
        if organs is None:
            self._unrouted += 1
        else:
            for organ in organs:
                organ.apply(op)
        self._applied += 1

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _reembed(self) -> None:
        """Re-embed every live memory with this handle's embedder (progress shown),
        logging the new vectors, codes and the embedder record."""
        from rich.progress import Progress

        if not self._encoding.enabled:
            raise InvalidArgument("reembed=True needs an embedder")
        ids = [mid for mid in self._memories.live_ids()]
        embedder = self._encoding.embedder
        assert embedder is not None
        now = self._now_ms()
        from chitta.encode.sparse import SparseEncoder

        setup: list[Op] = [
            ops.ConfigureField(key="embedder", value={"name": embedder.name, "family": embedder.family, "dim": embedder.dim}, at_ms=now)
        ]
        encoder = self._encoder_organ.encoder
        if encoder is None or encoder.dim != embedder.dim:
            setup.append(SparseEncoder(embedder.dim).init_op(at_ms=now))
        self._commit_group(setup)
        encoder = self._encoder_organ.encoder
        assert encoder is not None
        from chitta.encode.field_encoding import code_ops

        with Progress(transient=True) as progress:
            task = progress.add_task("re-embedding", total=len(ids))
            for lo in range(0, len(ids), 256):
                chunk = ids[lo : lo + 256]
                texts = [self._memories.get(mid).text for mid in chunk]  # type: ignore[union-attr]
                vecs = self._encoding.embed(texts)
                group: list[Op] = [
                    ops.UpdateMemoryContent(id=mid, at_ms=now, embedding=vecs[j].astype("<f4").tobytes())
                    for j, mid in enumerate(chunk)
                ]
                group.extend(code_ops(encoder, chunk, vecs))
                self._commit_group(group)
                progress.advance(task, len(chunk))

    def refresh(self) -> int:
        """Apply what other instances appended since the last look. Returns records read."""
        self._check_open()
        with self._lock:
            return self._replay()

    # ---- writing: chitta/field_write.py; recall: chitta/field_recall.py --------------
    def flush(self) -> None:
        """Push buffered records to the OS (matters for ``durability="buffered"``)."""
        self._check_open()
        self._log.flush()

    def sync(self) -> None:
        """Make everything this instance wrote durable on disk now."""
        self._check_open()
        self._log.sync()

    # ---- reading --------------------------------------------------------------------
    def get(self, id: int) -> Memory:
        """The live memory with this id; NotFound if it never existed or was forgotten."""
        self._check_open()
        mid = v.memory_id(id)
        memory = self._memories.get(mid)
        if memory is None:
            raise NotFound(f"no memory with id {mid}")
        return memory

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

    def ids(self) -> list[int]:
        """Ids of all live memories, in the order they were applied."""
        self._check_open()
        return list(self._memories.live_ids())

    def memories(self) -> Iterator[Memory]:
        """Every live memory (a snapshot of ids taken at the call)."""
        for mid in self.ids():
            memory = self._memories.get(mid)
            if memory is not None:
                yield memory

    def stats(self) -> FieldStats:
        self._check_open()
        s = self._log.stats()
        return FieldStats(
            path=str(self._path),
            instance_id=self.instance_id,
            memories=len(self._memories),
            forgotten=self._memories.forgotten,
            records_applied=self._applied,
            instances=len(s["instances"]),
            segments=int(s["segments"]),
            bytes=int(s["bytes"]),
            max_seqno=int(self._log.clock),
            embedding_dim=self._memories.embedding_dim,
            durability=self._durability,
            read_only=self.read_only,
            checkpoint=self.checkpoint_loaded,
            records_since_checkpoint=self._applied - self._checkpoint_applied,
            bytes_since_checkpoint=max(0, int(s["bytes"]) - self._checkpoint_bytes),
        )


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
    """
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
