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
score as they multiply RRF's. LoCoMo dev: benchmarks/RESULTS.md, LoCoMo pass 6.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from chitta.errors import InvalidArgument

U64 = npt.NDArray[np.uint64]
F64 = npt.NDArray[np.float64]


def check_alpha(alpha: object) -> float | None:
    """``alpha`` as a float in [0, 1], or None; anything else is an InvalidArgument."""
    if alpha is None:
        return None
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) \
            or not 0.0 <= alpha <= 1.0:
        raise InvalidArgument(f"fusion_alpha must be None or a number in [0, 1], got {alpha!r}")
    return float(alpha)


def convex_fused(
    ids: U64, cosine: npt.NDArray[np.floating] | None, keyword_ids: U64, keyword_scores: npt.NDArray[np.floating],
    alpha: float,
) -> F64:
    """The convex fusion score of each of ``ids`` (module docstring). ``cosine``: each id's cosine
    with the query (NaN or None: no vector); ``keyword_ids``/``keyword_scores``: the keyword lane's
    list and its BM25 scores."""
    n = len(ids)
    out = np.zeros(n, np.float64)
    if n == 0:
        return out
    if alpha > 0 and len(keyword_ids):
        scores = np.asarray(keyword_scores, np.float64)
        top = float(scores.max())
        if top > 0:
            order = np.argsort(keyword_ids, kind="stable")
            sorted_ids = keyword_ids[order]
            pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
            found = sorted_ids[pos] == ids
            out[found] += alpha * scores[order[pos[found]]] / top
    if alpha < 1 and cosine is not None:
        cos = np.asarray(cosine, np.float64)
        have = ~np.isnan(cos)
        if have.any():
            lo, hi = float(cos[have].min()), float(cos[have].max())
            span = hi - lo
            norm = (cos[have] - lo) / span if span > 0 else np.ones(int(have.sum()))
            out[have] += (1.0 - alpha) * norm
    return out
