"""Convex score fusion in native code for the native recall tail.

``convex_native`` gives what :func:`chitta.recall.convex.convex_from_ranks` gives for the gathered
candidates (bit for bit: ``csrc/scoring/convex.h`` does the same float64 operations in the same
order), reading the gather's rank matrix and cosines in place instead of copying them out to numpy.
It answers None when its inputs are not the arrays the engine passes (float32 BM25 scores, float64
cosines), and the caller then runs the Python reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core


def _f32(a: Any) -> bool:
    return (
        isinstance(a, np.ndarray) and a.dtype == np.float32 and a.ndim == 1 and a.flags.c_contiguous
    )


def convex_native(
    cands: Any, names: Sequence[str], cosine: Any, convex: tuple[Any, ...]
) -> npt.NDArray[np.float64] | None:
    """The convex fused score of each kept candidate of ``cands`` (a ``_RecallCandidates``);
    ``cosine``: one float64 per kept candidate, or None for the gathered cosines (or none at all);
    ``convex``: as for ``convex_from_ranks``. None: not these inputs (use the reference)."""
    kw_scores, alpha = convex[0], float(convex[1])
    ex_scores, beta = (
        (convex[2], float(convex[3])) if len(convex) > 2 and convex[2] is not None else (None, 0.0)
    )
    if not _f32(kw_scores) or (ex_scores is not None and not _f32(ex_scores)):
        return None
    if cosine is not None and not (
        isinstance(cosine, np.ndarray)
        and cosine.dtype == np.float64
        and cosine.ndim == 1
        and cosine.flags.c_contiguous
    ):
        return None
    kw_col = names.index("bm25") if "bm25" in names else -1
    ex_col = names.index("expansion") if "expansion" in names else -1
    fused: npt.NDArray[np.float64] = _core._recall_convex(
        cands, cosine, kw_col, kw_scores, alpha, ex_col, ex_scores, beta
    )
    return fused
