"""FieldState: what the Field's mixins share, declared once for type checkers.

:class:`chitta.field.Field` is put together from mixins (``field_commit``,
``field_write``, ``field_puts``, ``field_maintain``, ``field_read``,
``field_recall``, ``field_replay``, ``field_checkpoint``, ``field_link``,
``field_lifecycle``). Each mixin subclasses this class, so a type checker sees
in every mixin the attributes ``Field.__init__`` sets and the methods one mixin
calls on another; mypy checks those declarations against the real definitions
(``Field.__init__``'s assignments, each method's override).

Nothing here exists at run time but the annotations: the methods are declared
under ``TYPE_CHECKING`` only, so method lookup on a Field is what it would be
without this class. Add a declaration here when a mixin starts to use another
mixin's method or a new attribute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

from chitta.organs import Organ

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    import numpy as np
    import numpy.typing as npt

    from chitta import _core, ops
    from chitta.ops.code_columns import CodeColumns
    from chitta.encode.field_encoding import FieldEncoding
    from chitta.model import Memory
    from chitta.ops import Op
    from chitta.organs.encoder import EncoderOrgan
    from chitta.organs.graph import GraphOrgan
    from chitta.organs.memories import MemoriesOrgan
    from chitta.organs.recall_index import RecallIndexOrgan
    from chitta.organs.registry import Routes
    from chitta.organs.settings import SettingsOrgan
    from chitta.ops.put_columns import PutColumns
    from chitta.recall.engine import RecallEngine, RecallSettings


class ColumnOrgan(Organ, Protocol):
    """A put organ that takes a run of puts as columns (the others get PutPayload ops)."""

    def apply_columns(self, cols: PutColumns) -> None: ...


class VectorSinkOrgan(ColumnOrgan, Protocol):
    """The column organ whose vector matrix replay decodes put runs into (no copy)."""

    def vector_sink(self, expect: int) -> Callable[[int, int], npt.NDArray[np.float32] | None]: ...
    def end_vector_sink(self, *, applied: bool) -> None: ...


class CodeOrgan(Organ, Protocol):
    """An organ that takes a run of sparse codes as arrays (CodeColumns)."""

    def apply_code_columns(self, codes: CodeColumns) -> None: ...


def takes_columns(organ: Organ) -> TypeGuard[ColumnOrgan]:
    return hasattr(organ, "apply_columns")


def has_vector_sink(organ: ColumnOrgan) -> TypeGuard[VectorSinkOrgan]:
    return hasattr(organ, "vector_sink")


def takes_code_columns(organ: Organ) -> TypeGuard[CodeOrgan]:
    return hasattr(organ, "apply_code_columns")


class FieldState:
    """The state of a Field (set in ``Field.__init__`` and ``_fresh_organs``)."""

    # ---- the log and how this handle uses it (Field.__init__) ------------------------
    _closed: bool
    _path: Path
    _durability: str
    _salvage: bool
    _log: _core.SegmentLog
    _read_only: bool
    _instance: int
    _clock: Callable[[], float]
    _lock: threading.RLock
    _remote: Any  # chitta.remote.Replicator or None (chitta/remote/attach.py)
    _recall_settings: RecallSettings | None
    _pending_puts: _core.PutQueue  # remember()'s plain path (field_commit.py)
    _fast_put: Callable[[str], int | None] | None
    _encoding: FieldEncoding
    _embedded_writes: int
    _since_learning: int
    salvaged: list[dict[str, Any]]
    checkpoint_loaded: str | None
    _checkpoint_applied: int
    _checkpoint_bytes: int

    # ---- the organs and the routes to them (Field._fresh_organs) ----------------------
    _memories: MemoriesOrgan
    _graph: GraphOrgan
    _settings: SettingsOrgan
    _index: RecallIndexOrgan
    _encoder_organ: EncoderOrgan
    _organs: list[Organ]
    _registry: Routes
    _routes: dict[int, tuple[Organ, ...]]
    _put_organs: tuple[Organ, ...]
    _column_organs: tuple[ColumnOrgan, ...]
    _op_organs: tuple[Organ, ...]  # the other put organs
    _vector_sink_organ: VectorSinkOrgan | None
    _sink: Any  # during a replay: that organ's sink
    _code_organs: tuple[CodeOrgan, ...]
    _put_appliers: tuple[Callable[[ops.PutPayload], None], ...]
    _engine: RecallEngine
    _applied: int
    _unrouted: int
    _vocab_saved: Any  # the checkpoint's word table (chitta.checkpoint.vocab.VocabTable) until attached

    if TYPE_CHECKING:
        # ---- methods one mixin calls on another (defined where the comment says) ------
        @property
        def path(self) -> Path: ...  # field.py
        @property
        def read_only(self) -> bool: ...  # field.py
        @property
        def instance_id(self) -> int | None: ...  # field.py
        def _fresh_organs(self) -> None: ...  # field.py

        def _check_open(self) -> None: ...  # field_commit.py
        def _check_writable(self) -> None: ...
        def _apply_pending(self) -> None: ...
        def _now_ms(self) -> int: ...
        def _commit(self, op: Op) -> int: ...
        def _commit_group(self, group: Sequence[Op]) -> None: ...
        def _new_id(self) -> int: ...
        def _live_id(self, id: object) -> int: ...

        def _put_op(  # field_puts.py
            self,
            mid: int,
            text: object,
            kind: object = ...,
            realm: object = ...,
            session: object = ...,
            source_tool: object = ...,
            tags: object = ...,
            confidence: object = ...,
            embedding: object = ...,
            meta: object = ...,
            at: object = ...,
        ) -> ops.PutPayload: ...
        def _vector_dim(self) -> int | None: ...
        def _with_vectors(self, puts: list[ops.PutPayload]) -> list[Op]: ...

        def _after_embedded_writes(self, n: int) -> None: ...  # field_maintain.py
        def _vocab_sync(self, *, progress: bool = False) -> int: ...  # field_vocab.py
        def _lifecycle_maintain(self) -> dict[str, int]: ...  # field_lifecycle.py
        def memories(self) -> Iterator[Memory]: ...  # field_read.py
