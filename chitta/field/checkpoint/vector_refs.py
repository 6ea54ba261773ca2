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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta.errors import ChittaError, CorruptionError
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint.mapped_vectors import MappedVectors
from chitta.ops import OpType
from chitta.ops.put_columns import NO_OFFSET

REF_MAGIC = b"CHITVREF"
REF_VERSION = 1
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
    in replay order. Damaged records are skipped (the writer's check then finds any gap).
    Runs of puts (at the top level or inside a Batch) go through the native column
    decoder, which reports where each vector's bytes lie; other records are decoded and
    their vectors found in their payload."""
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
    seg_index, offsets = result.segment_index, result.offsets
    limit = np.array([stop.get(n, 0) for n in names], np.uint64)
    read = (
        offsets < limit[seg_index] if len(names) else np.zeros(0, bool)
    )  # before the view's watermark
    for op_type, lo, hi in result.op_runs():
        if op_type == _PUT:
            keep = read[lo:hi]
            if keep.any() and not _put_refs(result, lo, hi, keep, found):
                for i in range(lo, hi):
                    if read[i]:
                        _record_refs(result, i, found)
        elif op_type in (_BATCH, _CONTENT):
            for i in range(lo, hi):
                if read[i] and not (op_type == _BATCH and _batch_refs(result, i, found)):
                    _record_refs(result, i, found)
    return found


def _put_refs(
    result: Any,
    lo: int,
    hi: int,
    keep: npt.NDArray[np.bool_] | None,
    found: dict[int, tuple[str, int]],
) -> bool:
    """The vectors of puts ``[lo, hi)`` of ``result`` (rows where ``keep``, or all) into
    ``found``, in row order; False when a record there does not decode."""
    try:
        cols = ops.decode_put_columns(result, lo, hi)
    except (ChittaError, ValueError, TypeError):
        return False
    names = result.segments
    rows = cols.vector_rows
    assert cols.vector_at is not None and cols.vector_seg is not None  # the native decoder's
    at, seg = cols.vector_at, cols.vector_seg
    late = {int(r) for r in rows[at == NO_OFFSET].tolist()}  # read by the fallback decoder
    late.update(r for r, op in cols.extras.items() if op.embedding and r not in late)
    if keep is not None and not keep.all():
        late = {r for r in late if keep[r]}
        sel = keep[rows]
        rows, at, seg = rows[sel], at[sel], seg[sel]
    ids = cols.ids[rows].tolist()
    if not late:  # the usual case: every vector read in place
        found.update(zip(ids, zip([names[k] for k in seg.tolist()], at.tolist())))
        return True
    entries: list[tuple[int, int, str, int]] = [
        (r, mid, names[k], a)
        for r, mid, k, a in zip(rows.tolist(), ids, seg.tolist(), at.tolist())
        if r not in late
    ]
    for r in late:  # a vector another decoder read, or of another width: found in its payload
        op = cols.op(r)
        if op.embedding:
            payload = result.payload(lo + r)
            where = _find(payload, bytes(op.embedding), 0)
            if where >= 0:
                name = names[int(result.segment_index[lo + r])]
                entries.append((r, int(op.id), name, int(result.payload_offsets[lo + r]) + where))
    for _r, mid, name, a in sorted(entries):
        found[mid] = (name, a)
    return True


def _batch_refs(result: Any, index: int, found: dict[int, tuple[str, int]]) -> bool:
    """The vectors of Batch record ``index`` into ``found`` through the native readers (its
    puts as columns); False when the Batch is not the plain shape or does not decode."""
    inner = _core._unpack_batch(result, index)
    if inner is None:
        return False
    for t, lo, hi in inner.op_runs():
        if t == _PUT and not _put_refs(inner, lo, hi, None, found):
            return False  # what it already found is found again, in order, by the general path
        if t == _CONTENT:
            for j in range(lo, hi):
                _record_refs(inner, j, found)
    return True


def _record_refs(result: Any, index: int, found: dict[int, tuple[str, int]]) -> None:
    """The vectors of record ``index`` through the general decoder, each found in the
    record's payload by its bytes (skipped when the record does not decode)."""
    payload = result.payload(index)
    try:
        pairs = _vectors_of(int(result.op_types[index]), payload)
    except (ChittaError, ValueError, TypeError):
        return
    base = int(result.payload_offsets[index])
    name = result.segments[int(result.segment_index[index])]
    cursor = 0  # a Batch's vectors lie in its payload in the order of its ops
    for mid, blob in pairs:
        where = _find(payload, blob, cursor)
        if where < 0:
            where = _find(payload, blob, 0)
        if where >= 0:
            found[mid] = (name, base + where)
            cursor = where + len(blob)


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
    mine = np.ascontiguousarray(vecs, "<f4")
    try:  # compared where they lie, bit for bit (NaNs too), without a copy
        mapped = MappedVectors(root, segments, seg, offs, int(vecs.shape[1]) if width else 0)
        if len(mine) and mapped.first_different(mine) >= 0:
            return None  # some reference does not give the view's vector: keep a copy instead
    except CorruptionError:
        return None
    return refs, fmt.crc32c(mine if len(mine) else b"")


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
