"""A run of PutPayload ops as columns: what replay and the deferred ``remember``
queue hand to the organs (``organ.apply_columns``), so that a million puts
never become a million Python objects.

Every row is one put, in log order. Numbers, labels, texts and the vectors of
the run's common width are columns; a row that carries anything else (tags,
meta, artifacts, or a vector of another width) also keeps its whole op in
``extras``. ``PutColumns.from_puts`` is the reference constructor: a native
decoder must build an equal object (``same_as``) from the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from chitta.ops import PutPayload

LABELS = ("kind", "realm", "session", "source_tool", "harness")
"""The label fields of a put, each a ``LabelColumn``."""

NO_OFFSET = (1 << 64) - 1
"""``PutColumns.vector_at`` of a vector whose bytes the native decoder did not read in place."""


@dataclass(frozen=True, slots=True, eq=False)
class LabelColumn:
    """One label field of a run: ``values[codes[row]]`` is the row's value."""

    codes: npt.NDArray[np.uint32]  # (n,)
    values: tuple[str | None, ...]  # the run's distinct values, in first-seen order

    def __getitem__(self, row: int) -> str | None:
        return self.values[int(self.codes[row])]

    @classmethod
    def of(cls, values: Sequence[str | None]) -> LabelColumn:
        table: dict[str | None, int] = {}
        codes = np.fromiter(
            (table.setdefault(v, len(table)) for v in values), np.uint32, len(values)
        )
        return cls(codes, tuple(table))


@dataclass(frozen=True, slots=True, eq=False)
class PutColumns:
    ids: npt.NDArray[np.uint64]  # (n,)
    created_ms: npt.NDArray[np.int64]
    written_ms: npt.NDArray[np.int64]  # as recorded: 0 = unknown
    confidence: npt.NDArray[np.float64]
    strength: npt.NDArray[np.float64]
    labels: dict[str, LabelColumn]  # every name in LABELS
    text_arena: bytes  # the UTF-8 texts back to back
    text_offsets: npt.NDArray[np.int64]  # (n + 1,): row i's text is arena[off[i]:off[i+1]]
    vector_rows: npt.NDArray[np.int64]  # ascending rows whose vector is in ``vectors``
    vectors: npt.NDArray[np.float32]  # (len(vector_rows), dim); (0, 0) when none
    extras: dict[
        int, PutPayload
    ]  # row -> its whole op: rows with tags, meta, artifacts or an odd vector
    # Where each ``vectors`` row was read from (native decoder only; None when built from
    # ops): its segment (index into the read result's ``segments``) and the byte offset of
    # its float32 bytes in that file, NO_OFFSET for a row the fallback decoder read.
    vector_seg: npt.NDArray[np.uint32] | None = None
    vector_at: npt.NDArray[np.uint64] | None = None
    # The names ``vector_seg`` indexes (the read result's segments; None when built from ops).
    vector_segments: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, row: int) -> str:
        off = self.text_offsets
        return self.text_arena[int(off[row]) : int(off[row + 1])].decode()

    def texts(self) -> list[str]:
        off = self.text_offsets.tolist()
        arena = self.text_arena
        return [arena[a:b].decode() for a, b in pairwise(off)]

    def op(self, row: int) -> PutPayload:
        """The put of ``row``, rebuilt (equal to the op the run was made of)."""
        extra = self.extras.get(row)
        if extra is not None:
            return extra
        at = int(np.searchsorted(self.vector_rows, row))
        embedding = None
        if at < len(self.vector_rows) and int(self.vector_rows[at]) == row:
            embedding = self.vectors[at].astype("<f4").tobytes()
        labels = {name: col[row] for name, col in self.labels.items()}
        return PutPayload(
            id=int(self.ids[row]),
            text=self.text(row),
            created_ms=int(self.created_ms[row]),
            confidence=float(self.confidence[row]),
            strength=float(self.strength[row]),
            embedding=embedding,
            written_ms=int(self.written_ms[row]),
            **labels,  # type: ignore[arg-type]
        )

    def ops(self) -> list[PutPayload]:
        return [self.op(row) for row in range(len(self))]

    @classmethod
    def from_puts(cls, puts: Sequence[PutPayload]) -> PutColumns:
        """The reference constructor (the deferred ``remember`` queue may use it)."""
        n = len(puts)
        texts = [p.text.encode() for p in puts]
        offsets = np.zeros(n + 1, np.int64)
        if n:
            np.cumsum([len(t) for t in texts], out=offsets[1:])
        widths: dict[int, int] = {}
        for p in puts:
            if p.embedding is not None and len(p.embedding) and not len(p.embedding) % 4:
                widths[len(p.embedding)] = widths.get(len(p.embedding), 0) + 1
        # The common width: the most frequent whole-float32 one (an empty or partial vector is an extra);
        # ties go to the wider (any fixed rule works, this one is documented).
        width = max(widths, key=lambda w: (widths[w], w)) if widths else 0
        vector_rows = [
            i for i, p in enumerate(puts) if p.embedding is not None and len(p.embedding) == width
        ]
        if vector_rows and width:
            blob = b"".join(puts[i].embedding for i in vector_rows)  # type: ignore[misc]
            vectors = (
                np.frombuffer(blob, "<f4").astype(np.float32).reshape(len(vector_rows), width // 4)
            )
        else:
            vectors = np.zeros((0, 0), np.float32)
            vector_rows = []
        extras = {
            i: p
            for i, p in enumerate(puts)
            if p.tags
            or p.meta is not None
            or p.artifacts
            or (p.embedding is not None and (not width or len(p.embedding) != width))
        }
        return cls(
            ids=np.array([p.id for p in puts], np.uint64).reshape(
                n
            ),  # (fromiter overflows at 2**63)
            created_ms=np.fromiter((p.created_ms for p in puts), np.int64, n),
            written_ms=np.fromiter((p.written_ms for p in puts), np.int64, n),
            confidence=np.fromiter((p.confidence for p in puts), np.float64, n),
            strength=np.fromiter((p.strength for p in puts), np.float64, n),
            labels={name: LabelColumn.of([getattr(p, name) for p in puts]) for name in LABELS},
            text_arena=b"".join(texts),
            text_offsets=offsets,
            vector_rows=np.array(vector_rows, np.int64),
            vectors=vectors,
            extras=extras,
        )

    def same_as(self, other: PutColumns) -> bool:
        """Equal content: every column, label value per row, and extra op."""
        n = len(self)
        if len(other) != n or self.text_arena != other.text_arena:
            return False
        for name in (
            "ids",
            "created_ms",
            "written_ms",
            "confidence",
            "strength",
            "text_offsets",
            "vector_rows",
        ):
            if not np.array_equal(getattr(self, name), getattr(other, name)):
                return False
        if (
            self.vectors.tobytes() != other.vectors.tobytes()
            or self.vectors.shape[0] != other.vectors.shape[0]
        ):
            return False
        for name in LABELS:
            mine, theirs = self.labels[name], other.labels[name]
            if [mine[i] for i in range(n)] != [theirs[i] for i in range(n)]:
                return False
        return self.extras == other.extras
