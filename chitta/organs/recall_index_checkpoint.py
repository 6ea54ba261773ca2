"""Checkpoints of the recall-index organ: its state map and native sidecars.

Sidecars (docs/FORMAT.md, "Checkpoints"): ``posting.idx``, ``bm25.idx``, the
HNSW graph ``dense.hnsw`` and its delta, ``codes.bin`` (binary codes) and, read
from states 3-7 only, ``units.emb`` (unit vectors in ``vectors.emb``'s order). The native files
carry their own trailing CRC, which the state records and the native loads
check. Reads the memories organ's vectors and live view from the context's
``shared`` map (published by that organ, built before this one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.errors import CorruptionError
from chitta.field.checkpoint import format as fmt

if TYPE_CHECKING:
    from chitta.organs.contract import RestoreContext, SnapshotContext
    from chitta.organs.recall_index import RecallIndexOrgan

CODES = "codes.bin"
POSTING = "posting.idx"
GRAPH = "dense.hnsw"  # the tiered HNSW's base; its delta is dense.delta.hnsw
GRAPH_DELTA = "dense.delta.hnsw"
BM25 = "bm25.idx"  # the keyword index (state version 3; absent: rebuilt from the texts)
UNITS = (
    "units.emb"  # states 3-7 (read, no longer written): the unit vectors, in vectors.emb's order
)


def _record_native(ctx: SnapshotContext, name: str) -> None:
    path = ctx.path(name)
    ctx.record(name, {"bytes": path.stat().st_size, "crc": fmt.tail_crc(path)})


def snapshot(organ: RecallIndexOrgan, ctx: SnapshotContext) -> dict[str, Any]:
    ids, vecs = ctx.shared["vectors"]
    state = organ.snapshot_files(
        str(ctx.path(POSTING)), str(ctx.path(GRAPH)), bm25_path=str(ctx.path(BM25))
    )
    if state["keyword_index"]:
        _record_native(ctx, BM25)
    # posting.idx and the graphs carry their own CRC of every byte before it (checked
    # when they are read): the state records that one.
    _record_native(ctx, POSTING)
    for name in (GRAPH, GRAPH_DELTA) if state["ann"] else ():
        _record_native(ctx, name)
    rows = organ.sidecar_rows(ids) if len(ids) and organ.dim == vecs.shape[1] else None
    # State 8 writes no units.emb: the unit rows are normalised from vectors.emb at open
    # (one native pass, bit for bit as replay makes them), 4 bytes x dim per memory less.
    state["units_missing"] = b""
    coded = None
    if rows is not None:
        coded = organ.sidecar_codes(rows)
    if coded is not None:
        entry = fmt.write_bin(ctx.path(CODES), ids, coded[0], coded[1])
        entry["crc"] = fmt.tail_crc(ctx.path(CODES))
        ctx.record(CODES, entry)
    return state


def _check_native(ctx: RestoreContext) -> None:
    for name in (POSTING, GRAPH, GRAPH_DELTA):
        want = ctx.sidecars.get(name)
        if want is None:
            continue
        # Version 3 records posting.idx and the graphs by their own trailing CRC (their
        # native loads check the file against it); versions 1-2 by a CRC of the whole file.
        crc = fmt.tail_crc if ctx.version >= 3 else fmt.file_crc
        if (want["bytes"], want["crc"]) != (ctx.path(name).stat().st_size, crc(ctx.path(name))):
            raise CorruptionError(f"{name} is not the one the state file was written with")
    want = ctx.sidecars.get(BM25)  # its own CRC is checked when it is loaded
    if want is not None and (want["bytes"], want["crc"]) != (
        ctx.path(BM25).stat().st_size,
        fmt.tail_crc(ctx.path(BM25)),
    ):
        raise CorruptionError(f"{BM25} is not the one the state file was written with")


def _units(
    state: dict[str, Any], ctx: RestoreContext, ids: Any, vecs: Any
) -> tuple[Any, Any] | None:
    if UNITS not in ctx.sidecars:
        return None
    unit_ids, unit_rows = fmt.read_emb(ctx.path(UNITS), writable=True)
    want = ctx.sidecars[UNITS]
    if (
        (want["count"], want["crc"]) != (len(unit_ids), fmt.tail_crc(ctx.path(UNITS)))
        or not np.array_equal(unit_ids, ids)
        or unit_rows.shape != vecs.shape
    ):
        raise CorruptionError(f"{UNITS} does not match the state file and vectors.emb")
    return unit_rows, np.frombuffer(state["units_missing"], "<u8")


def _codes(ctx: RestoreContext, ids: Any, vecs: Any) -> tuple[Any, Any] | None:
    if CODES not in ctx.sidecars:
        return None
    code_ids, code_rows, code_mean = fmt.read_bin(ctx.path(CODES))
    dim = vecs.shape[1] if vecs.ndim == 2 else 0
    words = (dim + 63) // 64
    if len(code_ids) and (code_rows.shape[1] != words or code_mean.shape[0] != dim):
        raise CorruptionError(
            f"{CODES}: codes of {code_rows.shape[1]} words, mean of {code_mean.shape[0]}, "
            f"for {dim}-d vectors"
        )
    if len(code_ids) and dim % 64 and np.any(code_rows[:, -1] >> np.uint64(dim % 64)):
        raise CorruptionError(f"{CODES}: a code has bits set past dim {dim}")
    if not np.all(np.isfinite(code_mean)):
        raise CorruptionError(f"{CODES}: the mean has a NaN or inf")
    want = ctx.sidecars[CODES]
    if (want["count"], want["crc"]) != (
        len(code_ids),
        fmt.tail_crc(ctx.path(CODES)),
    ) or not np.array_equal(code_ids, ids):
        raise CorruptionError(f"{CODES} does not match the state file and vectors.emb")
    return code_rows, code_mean


def restore(organ: RecallIndexOrgan, state: dict[str, Any], ctx: RestoreContext) -> None:
    ids, vecs = ctx.shared["vectors"]
    _check_native(ctx)
    units = _units(state, ctx, ids, vecs)
    codes = _codes(ctx, ids, vecs)
    organ.restore_files(
        state,
        ctx.shared["live"],
        ids,
        vecs,
        str(ctx.path(POSTING)),
        str(ctx.path(GRAPH)),
        codes,
        units,
        bm25_path=str(ctx.path(BM25)),
    )
