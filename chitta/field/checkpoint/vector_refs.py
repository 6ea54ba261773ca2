"""Vector references (checkpoint state 10, docs/FORMAT.md §8, ``vectors.ref``).

Every vector a memory holds was written into the log as raw float32 bytes (a
PutPayload's ``embedding``, inside a Batch too, or an UpdateMemoryContent's from
the background embedder). A state-10 checkpoint stores, instead of a second copy
(``vectors.emb``), where those bytes lie: a segment and the byte offset of the
row inside it, plus the CRC-32C of all referenced bytes in row order. Segments
are never rewritten (FORMAT.md §5: a torn tail is cut only past the last whole
record, salvage starts a new segment; ``remote repair`` removes segments only
together with ``checkpoint/``), so the bytes of a record the writer read stay.

``vectors.ref``::

    magic "CHITVREF" | u32 version | u32 dim | u64 count |
    count x u64 id | count x u32 segment (index into the state's list) | count x u64 offset | u32 crc32c
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta.errors import ChittaError, CorruptionError
from chitta.field.checkpoint import format as fmt
from chitta.ops import OpType

REF_MAGIC = b"CHITVREF"
REF_VERSION = 1
_RECORD_HEAD = 21  # bytes before a record's payload (segment format 2.0)
_PUT, _BATCH = int(OpType.PutPayload), int(OpType.Batch)
_CONTENT = int(OpType.UpdateMemoryContent)


@dataclass
class VectorRefs:
    """Where each vector row's bytes lie: ``segments[seg[i]]`` at byte ``offsets[i]``."""

    ids: npt.NDArray[np.uint64]
    segments: list[str]
    seg: npt.NDArray[np.uint32]
    offsets: npt.NDArray[np.uint64]
    positions: list[Any]  # the watermark these references were taken at (records before it)


def _scan(root: Path, start: list[Any] | None, stop: dict[str, int]) -> dict[int, tuple[str, int]]:
    """id -> (segment, byte offset) of the last vector written for it in the records
    after ``start`` (the whole log when None) and before ``stop`` (segment -> read position),
    in replay order. Damaged records are skipped (the writer's check then finds any gap)."""
    log = _core.SegmentLog(str(root), read_only=True, create=False, salvage=True)
    try:
        if start is not None:
            log.seed_positions(
                [(str(n), int(o), int(s), bool(h), bool(d)) for n, o, s, h, d in start], 0
            )
        result = log.read_new(commit=False)
    finally:
        log.close()
    found: dict[int, tuple[str, int]] = {}
    names = result.segments
    seg_index, offsets, types = result.segment_index, result.offsets, result.op_types
    for i in range(len(result)):
        op_type = int(types[i])
        if op_type not in (_PUT, _BATCH, _CONTENT):
            continue
        name = names[int(seg_index[i])]
        at = int(offsets[i])
        if at >= stop.get(name, 0):
            continue  # past what the checkpoint's view read
        payload = result.payload(i)
        try:
            pairs = _batch_vectors(result, i) if op_type == _BATCH else None
            if pairs is None:
                pairs = _vectors_of(op_type, payload)
        except (ChittaError, ValueError, TypeError):
            continue
        cursor = 0  # a Batch's vectors lie in its payload in the order of its ops
        for mid, blob in pairs:
            where = _find(payload, blob, cursor)
            if where < 0:
                where = _find(payload, blob, 0)
            if where >= 0:
                found[mid] = (name, at + _RECORD_HEAD + where)
                cursor = where + len(blob)
    return found


def _find(payload: bytes, blob: bytes, start: int) -> int:
    """Where ``blob`` first occurs in ``payload`` from ``start`` (-1: nowhere): its first
    16 bytes searched, each hit compared whole (bytes.find of a 1.5 KB needle is ~10 us)."""
    head = blob[:16]
    where = payload.find(head, start)
    while where >= 0:
        if payload[where : where + len(blob)] == blob:
            return where
        where = payload.find(head, where + 1)
    return -1


def _batch_vectors(result: Any, index: int) -> list[tuple[int, bytes]] | None:
    """The vectors of Batch record ``index`` through the native readers (its puts as columns),
    in order; None when the Batch is not the plain shape (the general decoder then reads it)."""
    inner = _core._unpack_batch(result, index)
    if inner is None:
        return None
    out: list[tuple[int, bytes]] = []
    for op_type, start, end in inner.op_runs():
        if op_type == _PUT:
            cols = ops.decode_put_columns(inner, start, end)
            ids = cols.ids.tolist()
            blob = np.ascontiguousarray(cols.vectors, "<f4").tobytes()
            w = int(cols.vectors.shape[1]) * 4 if cols.vectors.ndim == 2 else 0
            by_row = {
                row: (ids[row], blob[k * w : (k + 1) * w])
                for k, row in enumerate(cols.vector_rows.tolist())
            }
            for row, op in cols.extras.items():  # a vector of another width: kept in its op
                if row not in by_row and op.embedding:
                    by_row[row] = (int(op.id), bytes(op.embedding))
            out.extend(by_row[row] for row in sorted(by_row))
        elif op_type == _CONTENT:
            for j in range(start, end):
                out.extend(_vectors_of_op(ops.decode(op_type, inner.payload(j))))
    return out


def _vectors_of(op_type: int, payload: bytes) -> list[tuple[int, bytes]]:
    """(id, vector bytes) of every vector a record writes, in order."""
    op: Any = ops.decode(op_type, payload)
    if op_type == _BATCH:
        out: list[tuple[int, bytes]] = []
        for inner in op.unpack():
            out.extend(_vectors_of_op(inner))
        return out
    return _vectors_of_op(op)


def _vectors_of_op(op: Any) -> list[tuple[int, bytes]]:
    t = int(op.op_type)
    if t == _PUT and op.embedding:
        return [(int(op.id), bytes(op.embedding))]
    if t == _CONTENT and getattr(op, "embedding", None):
        return [(int(op.id), bytes(op.embedding))]
    return []


def locate(
    root: Path,
    positions: list[Any],
    ids: npt.NDArray[np.uint64],
    vecs: npt.NDArray[np.float32],
    prior: VectorRefs | None,
) -> tuple[VectorRefs, int] | None:
    """References for rows ``ids``/``vecs`` (the view's live vectors) into the log up to
    ``positions`` (the view's watermark), and the CRC-32C of their bytes. ``prior``: the
    references the view's checkpoint held (records after its watermark are scanned), else
    the whole log is. None when some row's bytes cannot be found as they are in ``vecs``
    (the caller then writes ``vectors.emb``)."""
    stop = {str(p[0]): int(p[1]) for p in positions}
    found = _scan(root, prior.positions if prior is not None else None, stop)
    segments: list[str] = []
    seg_of: dict[str, int] = {}
    seg = np.zeros(len(ids), np.uint32)
    offs = np.zeros(len(ids), np.uint64)
    before: dict[int, tuple[str, int]] = {}
    if prior is not None:
        for k, mid in enumerate(prior.ids.tolist()):
            before[mid] = (prior.segments[int(prior.seg[k])], int(prior.offsets[k]))
    width = int(vecs.shape[1]) * 4 if vecs.ndim == 2 else 0
    for k, mid in enumerate(ids.tolist()):
        hit = found.get(mid)
        if hit is not None:
            name, at = hit[0], hit[1]
        elif mid in before:
            name, at = before[mid]
        else:
            return None
        if name not in seg_of:
            seg_of[name] = len(segments)
            segments.append(name)
        seg[k] = seg_of[name]
        offs[k] = at
    refs = VectorRefs(np.ascontiguousarray(ids, np.uint64), segments, seg, offs, positions)
    try:
        back, crc = gather(root, refs, int(vecs.shape[1]) if width else 0)
    except CorruptionError:
        return None
    mine = np.ascontiguousarray(vecs, "<f4")
    if not np.array_equal(back.view(np.uint32), mine.view(np.uint32)):  # bit for bit, NaNs too
        return None  # some reference does not give the view's vector: keep a copy instead
    return refs, crc


def gather(root: Path, refs: VectorRefs, dim: int) -> tuple[npt.NDArray[np.float32], int]:
    """The referenced rows as one (count x dim) float32 matrix, and the CRC-32C of their
    bytes. CorruptionError when a segment is missing or too short for a row."""
    count = len(refs.ids)
    out = np.empty((count, dim), np.float32)
    flat = out.view(np.uint8).reshape(count, dim * 4)
    width = dim * 4
    for k, name in enumerate(refs.segments):
        rows = np.flatnonzero(refs.seg == k)
        if not len(rows):
            continue
        path = root / "segments" / name
        if "/" in name or name in (".", ".."):
            raise CorruptionError(f"vector references name {name!r}, not a segment")
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                data: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        except OSError as exc:
            raise CorruptionError(
                f"vector references: segment {name} cannot be read ({exc.strerror})"
            ) from exc
        starts = refs.offsets[rows]
        if int(starts.max()) + width > size:
            raise CorruptionError(
                f"vector references: segment {name} is shorter ({size} bytes) than a row it holds"
            )
        if len(rows) == count:  # one segment holds every row (the usual case): copy in place
            _core._copy_rows(data, np.ascontiguousarray(starts, np.uint64), flat)
        else:
            part = np.empty((len(rows), width), np.uint8)
            _core._copy_rows(data, np.ascontiguousarray(starts, np.uint64), part)
            flat[rows] = part
        del data
    return out, fmt.crc32c(out if count else b"")


def write_refs(path: Path, refs: VectorRefs, dim: int) -> dict[str, int]:
    count = len(refs.ids)
    size = fmt._write_atomic_file(
        path,
        [
            fmt._HEAD.pack(REF_MAGIC, REF_VERSION, dim, count),
            np.ascontiguousarray(refs.ids, "<u8"),
            np.ascontiguousarray(refs.seg, "<u4"),
            np.ascontiguousarray(refs.offsets, "<u8"),
        ],
    )
    return {"count": count, "dim": dim, "bytes": size}


def read_refs(path: Path, segments: list[str], positions: list[Any]) -> tuple[VectorRefs, int]:
    """(references, dim) of a ``vectors.ref``, checked against the number of segments."""
    body, _version, dim, count = fmt._read_checked(
        path, REF_MAGIC, REF_VERSION, "vector references"
    )
    need = count * 20
    if (count and dim == 0) or need != len(body):
        raise CorruptionError(
            f"vector references {path.name}: {count} rows need {need} bytes, the file has {len(body)}"
        )
    ids = np.frombuffer(body, "<u8", count, 0)
    seg = np.frombuffer(body, "<u4", count, count * 8)
    offs = np.frombuffer(body, "<u8", count, count * 12)
    if count and int(seg.max()) >= len(segments):
        raise CorruptionError(f"vector references {path.name}: a row names no listed segment")
    return VectorRefs(ids, list(segments), seg, offs, positions), int(dim)
