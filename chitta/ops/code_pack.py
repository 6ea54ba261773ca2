"""Packing sparse codes into ``UpdateSparseCodeU8`` ops (op 68) and reading runs of
them back as arrays.

A code packs when its feature ids are ascending, unique and each step (and the
first id) fits a u16; its float32 activations (>= 0) become u8 levels of one
float32 ``scale`` (``max / 255``). A code that does not pack is written as the
exact ``UpdateSparseCode`` (op 12). The values the field applies are the
dequantised ``float32(level) * float32(scale)``, on the live path and on replay
alike (:func:`packed_columns` computes exactly what the op's ``activations`` does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta.errors import CorruptionError
from chitta.ops.code_columns import CodeColumns
from chitta.ops.memory import UpdateSparseCode, UpdateSparseCodeU8

__all__ = ["SparseCodeOp", "code_ops_of", "logged_columns", "packed_columns", "quantise"]

SparseCodeOp = UpdateSparseCode | UpdateSparseCodeU8
"""Either op that stores a sparse code (both have ``id``, ``features``,
``activations`` and ``encoder_version``)."""

_U16_MAX = 0xFFFF
LEVELS = 255  # the largest u8 level: the row's largest activation maps to it


def quantise(
    activations: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
    """Rows of activations (>= 0) as (u8 levels, one float32 scale per row)."""
    acts = np.asarray(activations, np.float32)
    top = acts.max(axis=1) if acts.shape[1] else np.zeros(len(acts), np.float32)
    scales = (np.maximum(top, np.float32(0)) / np.float32(LEVELS)).astype(np.float32)
    safe = np.where(scales > 0, scales, np.float32(1))
    levels = np.clip(np.rint(acts / safe[:, None]), 0, LEVELS).astype(np.uint8)
    return levels, scales


def code_ops_of(
    ids: Sequence[int],
    features: npt.NDArray[np.integer],
    activations: npt.NDArray[np.float32],
    version: int | Sequence[int],
) -> list[SparseCodeOp]:
    """One op per row: ``UpdateSparseCodeU8`` where the row packs, else ``UpdateSparseCode``
    (``version``: the encoder version of every row, or one per row)."""
    return _pack(ids, features, activations, version)[0]


def logged_columns(codes: CodeColumns) -> tuple[list[SparseCodeOp], CodeColumns]:
    """The ops the field logs for ``codes`` (:func:`code_ops_of`) and the columns of
    exactly the values those ops apply: a packed row's dequantised activations (what
    its ``activations`` gives), an unpacked row's own float32."""
    ops_, packs, levels, scales = _pack(
        codes.ids.tolist(), codes.features, codes.activations, codes.versions.tolist()
    )
    if not ops_:
        return ops_, codes
    acts = np.array(codes.activations, np.float32, copy=True)
    rows = np.flatnonzero(packs)
    acts[rows] = levels[rows].astype(np.float32) * scales[rows, None]
    return ops_, CodeColumns(
        ids=codes.ids, features=codes.features, activations=acts, versions=codes.versions
    )


def _pack(
    ids: Sequence[int],
    features: npt.NDArray[np.integer],
    activations: npt.NDArray[np.float32],
    version: int | Sequence[int],
) -> tuple[
    list[SparseCodeOp], npt.NDArray[np.bool_], npt.NDArray[np.uint8], npt.NDArray[np.float32]
]:
    """(the ops, which rows packed, every row's u8 levels and scale)."""
    versions = [version] * len(ids) if isinstance(version, int) else list(version)
    feats = np.asarray(features, np.int64)
    acts = np.ascontiguousarray(activations, np.float32)
    k = feats.shape[1]
    deltas = np.diff(feats, axis=1, prepend=0)
    packs = np.asarray(
        (deltas[:, :1] >= 0).all(axis=1)
        & (deltas[:, 1:] >= 1).all(axis=1)
        & (deltas <= _U16_MAX).all(axis=1)
        & np.isfinite(acts).all(axis=1)
        & (acts >= 0).all(axis=1),
        bool,
    )
    levels, scales = quantise(np.where(np.isfinite(acts), acts, 0).astype(np.float32))
    delta_blob = deltas.astype("<u2").tobytes()
    level_blob = levels.tobytes()
    f32_blob = acts.astype("<f4").tobytes()
    out: list[SparseCodeOp] = []
    for j, packed in enumerate(packs.tolist()):
        if packed:
            out.append(
                UpdateSparseCodeU8(
                    id=int(ids[j]),
                    feature_deltas=delta_blob[2 * k * j : 2 * k * (j + 1)],
                    levels=level_blob[k * j : k * (j + 1)],
                    scale=float(scales[j]),
                    encoder_version=int(versions[j]),
                )
            )
        else:
            out.append(
                UpdateSparseCode(
                    id=int(ids[j]),
                    features=tuple(feats[j].tolist()),
                    activations=f32_blob[4 * k * j : 4 * k * (j + 1)],
                    encoder_version=int(versions[j]),
                )
            )
    return out, packs, levels, scales


def packed_columns(run: Sequence[UpdateSparseCodeU8], active: int) -> tuple[CodeColumns, list[int]]:
    """The reference for ``chitta.ops.code_columns.decode_packed_run`` (replay's native
    decoder): a run of packed codes as (columns of those with ``active`` features, indices of
    the others). Raises CorruptionError when a code of the columns breaks op 68's
    rules (the caller then decodes per record, which names the record)."""
    take = [i for i, op in enumerate(run) if len(op.levels) == active]
    rest = [i for i, op in enumerate(run) if len(op.levels) != active]
    ops_ = [run[i] for i in take] if rest else run
    n = len(ops_)
    deltas_blob = b"".join(op.feature_deltas for op in ops_)
    if len(deltas_blob) != 2 * active * n:
        raise CorruptionError("an UpdateSparseCodeU8 has feature_deltas of the wrong length")
    deltas = np.frombuffer(deltas_blob, "<u2").reshape(n, active)
    if active > 1 and n and int(deltas[:, 1:].min()) < 1:
        raise CorruptionError("an UpdateSparseCodeU8's feature ids are not ascending and unique")
    with np.errstate(over="ignore", invalid="ignore"):
        scales = np.fromiter((op.scale for op in ops_), np.float64, n).astype(np.float32)
    if n and not (np.isfinite(scales).all() and scales.min() >= 0):
        raise CorruptionError("an UpdateSparseCodeU8 scale is negative or not a finite float32")
    levels = np.frombuffer(b"".join(op.levels for op in ops_), np.uint8).reshape(n, active)
    acts = levels.astype(np.float32) * scales[:, None]
    cols = CodeColumns(
        ids=np.fromiter((op.id for op in ops_), np.uint64, n),
        features=np.cumsum(deltas, axis=1, dtype=np.uint32),
        activations=acts,
        versions=np.fromiter((op.encoder_version for op in ops_), np.uint32, n),
    )
    return cols, rest
