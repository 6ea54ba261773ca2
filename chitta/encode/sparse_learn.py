r"""The learning rule of the sparse encoder (:mod:`chitta.encode.sparse`): one step.

A step takes a batch ``B`` of unit inputs, the current atoms ``W`` (unit rows),
thresholds ``theta`` and per-row update counts ``u``, and the batch's codes
(winners ``S(x)`` = top-``active`` of ``w_i . x - theta_i``, activations
``a_i(x) = max(w_i . x, 0)``). It returns the rows it changed, their new values
and the new thresholds; :meth:`SparseEncoder.learn` packs them into an
``UpdateSparseEncoder`` op. Nothing here touches encoder state.

With ``A_i = sum_x a_i(x)`` and ``c_i = |{x in B : i in S(x)}|``, ``U`` = the
``max_rows`` atoms with the largest ``A_i > 0`` (ties: lower id first). For
each ``i`` in ``U``:

1. **Hebbian** (winners move toward the inputs they won, by activation):
   ``m_i = sum_x a_i(x) x / A_i``, ``beta_i = min(lr * A_i, max_step)``,
   divided by ``1 + u_i`` when ``settle`` is on, ``v_i = w_i + beta_i (m_i - w_i)``.
2. **Centring**: ``v_i <- v_i - centring * (v_i . m_hat) m_hat``, ``m_hat`` the
   unit mean of the batch's inputs: what every input shares (real sentence
   embeddings share a large common direction) stops deciding the winners.
3. **Complexity penalty** (the proximal step of ``lambda ||v_i||_1``):
   ``v_i <- sign(v_i) max(|v_i| - lambda, 0)``, ``lambda = complexity = 1e-4``.
4. **Decorrelation** (1% Gram-Schmidt between co-active atoms of ``U``), with
   ``u_hat = v / ||v||`` and ``gamma = decorrelation = 0.01``::

       u_i = u_hat_i - gamma / n_i * sum_{x: i in S(x)} sum_{j in S(x) & U, j != i} (u_hat_i . u_hat_j) u_hat_j

   (``n_i = c_i``), all rows at once from the post-step-3 values.
5. **Renormalise**: ``w_i' = u_i / ||u_i||`` (a row whose norm would be 0
   keeps its old value).

And for **every** atom (not only ``U``):

6. **Homeostasis** (winner-frequency equalisation, the classic fix for hub and
   dead units in competitive learning): ``theta_i' = theta_i + eta (c_i / |B| -
   active / n_features)`` with ``eta = homeostasis``. An atom that wins more
   often than its fair share ``active / n_features`` needs a larger projection
   to win next time; one that never wins slowly gets easier to win. Without it
   the Hebbian pull makes a few atoms hubs that win for every input (measured:
   one atom in 60-70% of LoCoMo codes), which costs posting recall.

Why these steps: the posting lane ranks memories by shared winners, so a good
encoder places atoms where the data is (Hebbian), spreads them so each wins for
a small neighbourhood (homeostasis, decorrelation) and ignores what all inputs
share (centring). Numbers: ``benchmarks/RESULTS.md``; choices: docs/DECISIONS.md D-012.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["Hyper", "Step", "decorrelate", "hebbian", "homeostasis", "learning_step", "shrink"]

_BLOCK: Final = 1024  # inputs per block when summing the Hebbian targets
_GATHER: Final = 128  # inputs per gather block in decorrelation


@dataclass(frozen=True)
class Hyper:
    """Hyperparameters of a learning step (see the module docstring)."""

    lr: float = 0.5
    max_step: float = 0.1
    complexity: float = 1e-4
    decorrelation: float = 0.01
    centring: float = 0.5
    homeostasis: float = 5.0
    settle: bool = False


@dataclass(frozen=True)
class Step:
    """The result of one step: ``rows`` (ascending atom ids), their new unit
    ``atoms`` (float32 ``[len(rows), dim]``) and all new ``thresholds``
    (float32 ``[n_features]``)."""

    rows: npt.NDArray[np.intp]
    atoms: npt.NDArray[np.float32]
    thresholds: npt.NDArray[np.float32]


def unit_rows(rows: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], npt.NDArray[Any]]:
    """Rows divided by their L2 norms, and a mask of the rows whose norm was positive."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    ok = norms > 0
    out = rows / np.where(ok, norms, 1.0)[:, None]
    return out.astype(np.float32), ok


def hebbian(
    w: npt.NDArray[np.float32],
    weighted_sum: npt.NDArray[np.float32],
    total: npt.NDArray[np.float32],
    lr: float,
    max_step: float,
    updates: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.float32]:
    """Step 1: ``v_i = w_i + beta_i (m_i - w_i)``, ``m_i = weighted_sum_i / total_i``,
    ``beta_i = min(lr * total_i, max_step) / (1 + updates_i)``; rows with
    ``total_i == 0`` are unchanged. ``updates`` (default: no division): how
    many learning steps already changed each row."""
    total64 = total.astype(np.float64)
    beta = np.minimum(lr * total64, max_step)
    if updates is not None:
        beta = beta / (1.0 + updates.astype(np.float64))
    safe = np.where(total64 > 0, total64, 1.0)
    mean = weighted_sum.astype(np.float64) / safe[:, None]
    v = w.astype(np.float64) + beta[:, None] * (mean - w.astype(np.float64))
    v[total64 <= 0] = w[total64 <= 0]
    return v.astype(np.float32)


def shrink(v: npt.NDArray[np.float32], lam: float) -> npt.NDArray[np.float32]:
    """Step 3: ``sign(v) * max(|v| - lam, 0)`` elementwise (L1 proximal step)."""
    out = np.sign(v) * np.maximum(np.abs(v) - np.float32(lam), np.float32(0))
    return out.astype(np.float32)


def decorrelate(
    unit: npt.NDArray[np.float32], groups: npt.NDArray[np.intp], gamma: float
) -> npt.NDArray[np.float32]:
    """Step 4: ``u_i = unit_i - gamma / n_i * sum_{g: i in g} sum_{j in g, j != i} (unit_i . unit_j) unit_j``.

    ``unit``: float32 ``[m, dim]`` unit rows; ``groups``: ``[n, k]`` row indices
    into ``unit`` (one row of co-active atoms per input, distinct within a row;
    ``-1`` marks an empty slot). ``n_i``: the groups holding ``i``. Rows in no
    group are returned unchanged. Not renormalised.
    """
    m, dim = unit.shape
    acc = np.zeros((m, dim), dtype=np.float64)
    valid = groups >= 0
    counts = np.bincount(groups[valid], minlength=m)
    k = groups.shape[1]
    idx = np.arange(k)
    for lo in range(0, len(groups), _GATHER):
        g = groups[lo : lo + _GATHER]
        ok = valid[lo : lo + _GATHER]
        atoms = unit[np.where(ok, g, 0)] * ok[:, :, None]  # [b, k, dim], empty slots zero
        # contiguous operands keep numpy's stacked matmul on BLAS
        gram = np.matmul(atoms, np.ascontiguousarray(atoms.transpose(0, 2, 1)))  # [b, k, k]
        gram[:, idx, idx] = 0.0
        push = (gram @ atoms).reshape(-1, dim)[ok.ravel()]  # sum_j c_ij unit_j
        flat = g[ok]
        order = np.argsort(flat, kind="stable")
        sorted_ids = flat[order]
        starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        sums = np.add.reduceat(push[order].astype(np.float64), starts, axis=0)
        acc[sorted_ids[starts]] += sums
    n = np.maximum(counts, 1).astype(np.float64)
    out = unit.astype(np.float64) - gamma * acc / n[:, None]
    return out.astype(np.float32)


def homeostasis(
    thresholds: npt.NDArray[np.float32],
    wins: npt.NDArray[np.int64],
    n_inputs: int,
    active: int,
    eta: float,
) -> npt.NDArray[np.float32]:
    """Step 6: ``theta_i + eta * (wins_i / n_inputs - active / n_features)`` for every atom."""
    fair = active / len(thresholds)
    rate = wins.astype(np.float64) / float(n_inputs)
    return (thresholds.astype(np.float64) + eta * (rate - fair)).astype(np.float32)


def learning_step(
    atoms: npt.NDArray[np.float32],
    thresholds: npt.NDArray[np.float32],
    updates: npt.NDArray[np.int64],
    x: npt.NDArray[np.float32],
    feats: npt.NDArray[np.intp],
    acts: npt.NDArray[np.float32],
    hyper: Hyper,
    limit: int,
) -> Step:
    """One step on unit inputs ``x`` whose codes are ``feats`` / ``acts`` (see the module docstring)."""
    n_features, dim = atoms.shape
    total_all = np.bincount(
        feats.ravel(), weights=acts.ravel().astype(np.float64), minlength=n_features
    )
    wins = np.bincount(feats.ravel(), minlength=n_features).astype(np.int64)
    rows = np.flatnonzero(total_all > 0)
    if len(rows) > limit:
        rows = np.sort(rows[np.argsort(-total_all[rows], kind="stable")[:limit]])
    m = len(rows)
    slot = np.full(n_features, -1, dtype=np.intp)
    slot[rows] = np.arange(m)
    local = slot[feats]  # [n, active], -1 = atom not updated this step
    # Step 1: Hebbian. weighted_i = sum_x a_i(x) x over the selected atoms.
    weighted = np.zeros((m, dim), dtype=np.float64)
    for lo in range(0, len(x), _BLOCK):
        b_local = local[lo : lo + _BLOCK]
        r, c = np.nonzero(b_local >= 0)
        dense = np.zeros((len(b_local), m), dtype=np.float64)
        dense[r, b_local[r, c]] = acts[lo : lo + _BLOCK][r, c]
        weighted += dense.T @ x[lo : lo + _BLOCK].astype(np.float64)
    w = atoms[rows]
    v = hebbian(
        w,
        weighted.astype(np.float32),
        total_all[rows].astype(np.float32),
        hyper.lr,
        hyper.max_step,
        updates[rows] if hyper.settle else None,
    )
    # Step 2: centring against the batch's mean input.
    if hyper.centring > 0:
        mean = x.astype(np.float64).mean(axis=0)
        norm = float(np.sqrt(mean @ mean))
        if norm > 0:
            mhat = mean / norm
            v64 = v.astype(np.float64)
            v = (v64 - hyper.centring * np.outer(v64 @ mhat, mhat)).astype(np.float32)
    # Step 3: complexity penalty.
    v = shrink(v, hyper.complexity)
    # Step 4: decorrelation among co-active updated atoms.
    unit, ok = unit_rows(v)
    u = decorrelate(unit, local, hyper.decorrelation) if hyper.decorrelation > 0 else unit
    # Step 5: renormalise (a row that would vanish keeps its old value).
    new, ok2 = unit_rows(u)
    keep = ~(ok & ok2)
    new[keep] = w[keep]
    # Step 6: homeostasis on every atom.
    theta = thresholds
    if hyper.homeostasis > 0:
        theta = homeostasis(thresholds, wins, len(x), feats.shape[1], hyper.homeostasis)
    return Step(rows=rows, atoms=new, thresholds=theta)
