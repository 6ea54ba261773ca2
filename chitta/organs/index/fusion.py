"""Weighted reciprocal rank fusion (RRF) of ranked id lists.

``score(d) = sum_i w_i / (k + rank_i(d))`` over the lists that contain ``d``,
where ``rank_i(d)`` is ``d``'s 1-based position in list ``i``. Positions count
every entry as given (padding included), so ranks match the caller's arrays;
``PAD_ID`` (2**64 - 1) entries contribute nothing; an id repeated within one
list counts once, at its first position. Result order: higher score, then
smaller best rank (minimum over lists), then smaller id.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, overload

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument
from chitta.organs.index.bm25 import _as_ids

__all__ = ["rrf_fuse"]

_F64 = npt.NDArray[np.float64]
_U64 = npt.NDArray[np.uint64]
_I32 = npt.NDArray[np.int32]


@overload
def rrf_fuse(
    ranked_id_lists: Sequence[npt.ArrayLike],
    k: float = ...,
    weights: Sequence[float] | npt.ArrayLike | None = ...,
    *,
    limit: int | None = ...,
    return_ranks: Literal[False] = ...,
) -> tuple[_U64, _F64]: ...


@overload
def rrf_fuse(
    ranked_id_lists: Sequence[npt.ArrayLike],
    k: float = ...,
    weights: Sequence[float] | npt.ArrayLike | None = ...,
    *,
    limit: int | None = ...,
    return_ranks: Literal[True],
) -> tuple[_U64, _F64, _I32]: ...


def rrf_fuse(
    ranked_id_lists: Sequence[npt.ArrayLike],
    k: float = 60,
    weights: Sequence[float] | npt.ArrayLike | None = None,
    *,
    limit: int | None = None,
    return_ranks: bool = False,
) -> tuple[_U64, _F64] | tuple[_U64, _F64, _I32]:
    """Fuse ranked lists into ``(ids uint64[m], scores float64[m])``.

    ``ranked_id_lists``: any number of lists, each a numpy integer array or a
    sequence of Python ints (best first; lengths may differ). ``weights``: one
    finite, non-negative weight per list (default all 1). ``k``: finite, >= 0.
    ``limit``: keep only the best ``limit`` ids (default: all ``m`` distinct ids).
    With ``return_ranks=True`` also returns ``ranks int32[m, n_lists]``: each
    id's 1-based rank in each list, 0 where absent. Bad input raises
    :class:`chitta.errors.InvalidArgument`.
    """
    if isinstance(ranked_id_lists, (str, bytes, np.ndarray)) or not isinstance(
        ranked_id_lists, Sequence
    ):
        raise InvalidArgument("ranked_id_lists must be a sequence of id lists")
    lists = [_as_ids(lst, f"ranked list {i}") for i, lst in enumerate(ranked_id_lists)]
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)):
        raise InvalidArgument(f"k must be a number, got {type(k).__name__}")
    if not math.isfinite(float(k)) or float(k) < 0:
        raise InvalidArgument(f"k must be finite and >= 0, got {k}")
    w = None
    if weights is not None:
        try:
            w = np.ascontiguousarray(np.asarray(weights, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise InvalidArgument(f"weights must be numbers: {e}") from None
        if w.ndim != 1 or len(w) != len(lists):
            raise InvalidArgument(f"need one weight per list ({len(lists)}), got shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidArgument("weights must be finite and >= 0")
    lim = 0
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
            raise InvalidArgument(f"limit must be a positive int or None, got {limit!r}")
        lim = int(limit)
    ids, scores, ranks = _core._rrf_fuse(lists, w, float(k), lim, bool(return_ranks))
    if return_ranks:
        assert ranks is not None
        return ids, scores, ranks
    return ids, scores
