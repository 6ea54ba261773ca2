r"""Encoding with the sparse encoder's atoms (:mod:`chitta.encode.sparse`): pure functions.

For an input ``y`` (float32, finite, non-zero) let ``x = y / ||y||``. Then

- projection ``p_i = w_i . x`` for every atom ``i`` (cosine, atoms are unit);
- winners ``S(x)`` = the ``active`` atoms with the largest ``p_i - theta_i``
  (``features``: their ids, ascending, unique);
- activation ``a_i = max(p_i, 0)`` for ``i`` in ``S(x)`` (aligned with
  ``features``). With 64 of 16,384 atoms the winners' projections are positive
  in practice; the clamp only guarantees non-negative activations;
- reconstruction ``x_hat = sum_{i in S} a_i w_i`` and surprise
  ``s(x) = sqrt(1 - cos^2(x, x_hat)) = ||x - c x_hat|| / ||x||`` for the best
  scale ``c``, i.e. the normalised residual of ``x`` after its code's
  reconstruction. Since ``x . x_hat = sum a_i^2 >= 0``, ``s`` lies in
  ``[0, 1]``: 0 = perfectly predicted by its winners, 1 = not at all (also
  when every activation is 0). With the random initial atoms it is about
  0.55 (dim 256) to 0.63 (MiniLM, dim 384); learning lowers it for data like
  what was learned (the default centring 0.5 keeps half of the inputs' common
  direction in the atoms so it can still be reconstructed; centring 1 raises
  surprise on real sentence embeddings), and it stays high for memories unlike
  anything seen, which is what later issues read to make surprising memories
  resist decay.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from chitta.encode.sparse_learn import unit_rows
from chitta.errors import InvalidArgument

__all__ = ["surprise_of", "unit_inputs", "winners"]

_BLOCK: Final = 128  # rows encoded per matmul block (16 bytes per row and feature)
_GATHER: Final = 128  # inputs per gather block in surprise


def unit_inputs(vectors: Any, dim: int, *, allow_empty: bool) -> npt.NDArray[np.float32]:
    """Validated, unit-normalised float32 ``[n, dim]`` (one ``[dim]`` vector is one row)."""
    if isinstance(vectors, np.ndarray):
        if vectors.dtype != np.float32:
            raise InvalidArgument(f"vectors must have dtype float32, got {vectors.dtype}")
        arr = vectors
    else:
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except (ValueError, TypeError, OverflowError) as e:
            raise InvalidArgument(f"vectors are not a float array: {e}") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise InvalidArgument(
            f"vectors must have shape [n, {dim}] or [{dim}], got {np.shape(vectors)}"
        )
    if len(arr) == 0 and not allow_empty:
        raise InvalidArgument("no vectors given")
    if not np.isfinite(arr).all():
        raise InvalidArgument("vectors hold NaN or infinity")
    unit, ok = unit_rows(np.ascontiguousarray(arr))
    if not ok.all():
        raise InvalidArgument(f"vector {int(np.flatnonzero(~ok)[0])} is all zeros")
    return unit


def winners(
    x: npt.NDArray[np.float32],
    atoms: npt.NDArray[np.float32],
    thresholds: npt.NDArray[np.float32],
    active: int,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """Winner ids (ascending) and activations for unit inputs ``x``.

    In blocks of ``_BLOCK`` rows into two reused buffers (projections, biased scores):
    with the partial sort's index array a block holds 16 bytes per row and feature,
    32 MiB at 128 rows and 16,384 features, whatever ``len(x)`` (D-075)."""
    n, k = len(x), active
    n_features = len(atoms)
    feats = np.empty((n, k), dtype=np.intp)
    acts = np.empty((n, k), dtype=np.float32)
    atoms_t = atoms.T
    biased = bool(thresholds.any())
    rows = min(n, _BLOCK)
    proj_buf = np.empty((rows, n_features), np.float32)
    score_buf = np.empty((rows, n_features), np.float32) if biased else proj_buf
    for lo in range(0, n, _BLOCK):
        block = x[lo : lo + _BLOCK]
        proj = np.matmul(block, atoms_t, out=proj_buf[: len(block)])
        score = np.subtract(proj, thresholds, out=score_buf[: len(block)]) if biased else proj
        if k < n_features:
            # a copy of the winners' columns: the partial sort's [rows, n_features] index
            # array is freed here, not held (by a view) until the next block's is made
            idx = np.argpartition(score, n_features - k, axis=1)[:, -k:].copy()
        else:
            idx = np.broadcast_to(np.arange(k), proj.shape).copy()
        idx.sort(axis=1)
        feats[lo : lo + _BLOCK] = idx
        acts[lo : lo + _BLOCK] = np.maximum(np.take_along_axis(proj, idx, axis=1), 0.0)
    return feats, acts


def surprise_of(
    feats: npt.NDArray[np.intp], acts: npt.NDArray[np.float32], atoms: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Per-input surprise in ``[0, 1]`` of the codes ``(feats, acts)`` under ``atoms``."""
    n = len(feats)
    out = np.empty(n, dtype=np.float32)
    for lo in range(0, n, _GATHER):
        a = acts[lo : lo + _GATHER].astype(np.float64)
        rec = np.einsum("nk,nkd->nd", a, atoms[feats[lo : lo + _GATHER]], dtype=np.float64)
        rec_norm2 = np.einsum("nd,nd->n", rec, rec)
        dot = np.einsum("nk,nk->n", a, a)  # x . x_hat = sum a_i^2 (x unit, a_i = w_i . x)
        with np.errstate(invalid="ignore", divide="ignore"):
            cos2 = np.where(rec_norm2 > 0, dot * dot / rec_norm2, 0.0)
        out[lo : lo + _GATHER] = np.sqrt(np.clip(1.0 - cos2, 0.0, 1.0))
    return out
