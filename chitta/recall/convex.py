"""Convex score fusion of the keyword and dense lanes.

Weighted RRF (the default) fuses the lanes by rank alone: a turn the dense
lane finds at cosine 0.80 and one it finds at 0.41 count the same if both
are third. Convex fusion (Bruch, Gai and Ingber 2023, "An Analysis of Fusion
Functions for Hybrid Retrieval") keeps the scores' sizes:

    fused(d) = alpha * bm25(d) / max bm25  +  (1 - alpha) * (cos(d) - min cos) / (max cos - min cos)

over the fused candidates (the union of the lanes' lists, as RRF gathers
them): the BM25 score is 0 for a candidate the keyword lane did not return,
the cosine's minimum and maximum are taken over the candidates that have a
vector (one without gets 0). ``alpha`` is ``RecallSettings.fusion_alpha``
(``None``: RRF); an embedder may name its own (``recall_fusion_alpha``,
chitta.recall.presets). The speaker and time priors then multiply this
score as they multiply RRF's. LoCoMo dev: see docs/DECISIONS.md D-025.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta.errors import InvalidArgument

U64 = npt.NDArray[np.uint64]
F64 = npt.NDArray[np.float64]


def check_alpha(alpha: object) -> float | None:
    """``alpha`` as a float in [0, 1], or None; anything else is an InvalidArgument."""
    if alpha is None:
        return None
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float))
        or not math.isfinite(alpha)
        or not 0.0 <= alpha <= 1.0
    ):
        raise InvalidArgument(f"fusion_alpha must be None or a number in [0, 1], got {alpha!r}")
    return float(alpha)


def convex_fused(
    keyword_rank: npt.NDArray[np.integer],
    cosine: npt.NDArray[np.floating] | None,
    keyword_scores: npt.NDArray[np.floating],
    alpha: float,
) -> F64:
    """The convex fusion score of each candidate (module docstring). ``keyword_rank``: the
    candidate's 1-based rank in the keyword lane's list (0: not in it; the ranks RRF's gather
    reports), ``keyword_scores``: that list's BM25 scores; ``cosine``: each candidate's cosine with
    the query (NaN or None: no vector)."""
    rank = np.asarray(keyword_rank, np.int64)
    out = np.zeros(len(rank), np.float64)
    if len(rank) == 0:
        return out
    scores = np.asarray(keyword_scores, np.float64)
    if alpha > 0 and len(scores):
        top = float(scores.max())
        if top > 0:
            found = (rank > 0) & (rank <= len(scores))
            out[found] = (alpha / top) * scores[rank[found] - 1]
    if alpha < 1 and cosine is not None:
        cos = np.asarray(cosine, np.float64)
        have = ~np.isnan(cos)
        if have.all():
            lo, hi = float(cos.min()), float(cos.max())
            out += (1.0 - alpha) * ((cos - lo) / (hi - lo) if hi > lo else 1.0)
        elif have.any():
            lo, hi = float(cos[have].min()), float(cos[have].max())
            out[have] += (1.0 - alpha) * ((cos[have] - lo) / (hi - lo) if hi > lo else 1.0)
    return out


def keyword_ranks(ranks: npt.NDArray[np.integer], names: Sequence[str]) -> npt.NDArray[np.int64]:
    """The keyword lane's column of RRF's per-lane ranks (zeros when that lane returned nothing)."""
    if "bm25" not in names:
        return np.zeros(len(ranks), np.int64)
    return np.asarray(ranks[:, list(names).index("bm25")], np.int64)


def lane_column(
    ranks: npt.NDArray[np.integer], names: Sequence[str], lane: str
) -> npt.NDArray[np.int64]:
    """Lane ``lane``'s column of RRF's per-lane ranks (zeros when that lane did not run)."""
    if lane not in names:
        return np.zeros(len(ranks), np.int64)
    return np.asarray(ranks[:, list(names).index(lane)], np.int64)


def convex_from_ranks(
    ranks: npt.NDArray[np.integer],
    names: Sequence[str],
    cosine: npt.NDArray[np.floating] | None,
    convex: tuple[object, ...],
    keep: npt.NDArray[np.integer] | None = None,
) -> F64:
    """:func:`convex_fused` from RRF's gather: ``convex`` is ``(keyword_scores, alpha)`` or
    ``(keyword_scores, alpha, expansion_scores, beta)``; the expansion lane (chitta.recall.expand)
    adds ``beta x`` its BM25 score over its best. ``keep``: the rows of ``ranks`` to score."""
    rows = ranks if keep is None else ranks[keep]
    kw_scores, alpha = convex[0], float(convex[1])  # type: ignore[arg-type]
    out = convex_fused(lane_column(rows, names, "bm25"), cosine, kw_scores, alpha)  # type: ignore[arg-type]
    if len(convex) > 2 and convex[2] is not None and float(convex[3]) > 0:  # type: ignore[arg-type]
        scores = np.asarray(convex[2], np.float64)
        top = float(scores.max()) if len(scores) else 0.0
        if top > 0:
            rank = lane_column(rows, names, "expansion")
            found = (rank > 0) & (rank <= len(scores))
            out[found] += (float(convex[3]) / top) * scores[rank[found] - 1]  # type: ignore[arg-type]
    return out
