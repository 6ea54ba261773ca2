"""Where a record this handle appended left its vectors' bytes in the log (D-088).

The memories organ keeps a vector it was handed by its own write as a reference into
the segment file (as a state-10 checkpoint's vectors are kept, ``MappedVectors``),
not as a second copy in memory. The write path appends with ``append_placed`` (the
segment and the payload's file offset) and finds each embedding's bytes in the
encoded payload; any place holding the same bytes is a correct reference, so the
search needs no knowledge of the encoding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chitta import ops
from chitta.ops import Op
from chitta.ops.put_columns import NO_OFFSET, PutColumns


@dataclass(frozen=True)
class LogPlace:
    """The record's segment (under ``root``) and, per embedding bytes object of its
    ops (by ``id``), the file offset of a copy of those bytes."""

    root: Path
    segment: str
    at: dict[int, int]


def embeddings(group: Sequence[Op]) -> list[bytes]:
    """The vectors a record's ops carry (puts and content updates), in op order."""
    out: list[bytes] = []
    for op in group:
        t = type(op)
        if t is ops.PutPayload or t is ops.UpdateMemoryContent:
            blob = op.embedding  # type: ignore[attr-defined]
            if blob:
                out.append(blob)
    return out


def place(
    root: Path, segment: str, payload_at: int, payload: bytes, blobs: list[bytes]
) -> LogPlace:
    """Each blob's offset in the segment file: found in ``payload`` (written at file
    offset ``payload_at``) searching on from the previous find, as ops are encoded
    in order. A blob not found (cannot happen for an encoding that stores the bytes
    as they are) gets no entry, and the organ keeps a copy of it."""
    at: dict[int, int] = {}
    cursor = 0
    for blob in blobs:
        hit = payload.find(blob, cursor)
        if hit < 0:
            hit = payload.find(blob)
            if hit < 0:
                continue
        else:
            cursor = hit + len(blob)
        at[id(blob)] = payload_at + hit
    return LogPlace(root, segment, at)


def columns_at(cols: PutColumns, run: Sequence[Op], where: LogPlace | None) -> PutColumns:
    """``cols`` (``PutColumns.from_puts(run)``) with ``vector_at``: each matrix vector's
    file offset (NO_OFFSET where unknown), when ``where`` says where ``run``'s record lies."""
    if where is None or not len(cols.vector_rows):
        return cols
    at = [where.at.get(id(run[r].embedding), NO_OFFSET) for r in cols.vector_rows.tolist()]
    return dataclasses.replace(cols, vector_at=np.array(at, np.uint64))
