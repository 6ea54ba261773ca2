"""HammingRescoreIndex: Hamming pre-filter over sign codes, then exact cosine.

See :mod:`chitta.organs.index.hamming` for the rules both Hamming indexes share.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta import _core as _native  # the name _core is also the instance attribute
from chitta.errors import InvalidArgument
from chitta.organs.index._hamming_common import (
    _candidates,
    _code_matrix,
    _float_matrix,
    _float_vector,
    _HammingBase,
    _id_array,
    _positive_int,
    _queries,
    _same_length,
)

__all__ = ["HammingRescoreIndex", "HammingRescoreRows"]


class HammingRescoreIndex(_HammingBase):
    """Hamming pre-filter over sign codes, then exact cosine over the survivors.

    ``add`` L2-normalises each vector (stored normalised; zero vectors are
    refused), so cosine is the dot product. Codes are the sign bits of
    ``normalised vector - mean`` with ``bits = 64 * ceil(dim / 64)``. The mean
    is ``mean=`` here or :meth:`set_mean` before the first add, else the mean of
    the normalised vectors of the first non-empty :meth:`add`; it is then fixed
    (it is what the stored codes were made against) and readable as
    :attr:`mean`. Pass a mean estimated on a representative sample when the
    first batch is small or unrepresentative.

    ``candidates`` is how many Hamming neighbours are rescored; ``None`` means
    :func:`default_candidates` of the current size. It is raised to ``k`` when
    ``k`` is larger.
    """

    __slots__ = ()
    _core: _native.HammingRescoreIndex

    def __init__(
        self, dim: int, *, candidates: int | None = None, mean: npt.ArrayLike | None = None
    ) -> None:
        dim = _positive_int(dim, "dim")
        cand = _candidates(candidates)
        mean_arr = None if mean is None else _float_vector(mean, dim, "mean")
        self._core = _core.HammingRescoreIndex(dim, cand)
        if mean_arr is not None:
            self._core.set_mean(mean_arr)

    @property
    def dim(self) -> int:
        return int(self._core.dim)

    @property
    def bits(self) -> int:
        """Sign-code width: ``64 * ceil(dim / 64)``."""
        return int(self._core.bits)

    @property
    def candidates(self) -> int | None:
        """The configured candidate count, or ``None`` for the default rule."""
        c = int(self._core.candidates_setting)
        return None if c == 0 else c

    @property
    def effective_candidates(self) -> int:
        """Candidates a search with ``k <= this`` rescores at the current size."""
        return int(self._core.effective_candidates())

    @property
    def mean(self) -> npt.NDArray[np.float32] | None:
        """A copy of the fixed mean, or ``None`` before it is set or estimated."""
        return self._core.get_mean()

    def set_mean(self, mean: npt.ArrayLike) -> None:
        """Fix the binarisation mean. InvalidArgument once a mean is fixed."""
        self._core.set_mean(_float_vector(mean, self.dim, "mean"))

    def add(self, ids: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Add ``vectors[i]`` (float32) under ``ids[i]``. All or nothing."""
        id_arr = _id_array(ids)
        v = _float_matrix(vectors, self.dim, "vectors")
        _same_length(id_arr, v, "vectors")
        self._core.add(id_arr, v)

    def add_coded(
        self, ids: npt.ArrayLike, unit_vectors: npt.ArrayLike, codes: npt.ArrayLike
    ) -> None:
        """Add rows that are already unit length together with their sign codes
        (``binarize(unit_vectors, self.mean)``, e.g. a checkpoint's ``codes.bin``):
        stored as given, nothing normalised or binarised. The mean must be fixed
        first (``set_mean``). All or nothing."""
        id_arr = _id_array(ids)
        v = _float_matrix(unit_vectors, self.dim, "unit_vectors")
        c = _code_matrix(codes, (self.dim + 63) // 64, "codes")
        if not (v.shape[0] == c.shape[0] == id_arr.shape[0]):
            raise InvalidArgument(
                f"{id_arr.shape[0]} ids, {v.shape[0]} vectors and {c.shape[0]} codes; they must match"
            )
        self._core.add_coded(id_arr, v, c)

    def search(
        self, queries: npt.ArrayLike, k: int, *, candidates: int | None = None
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """Top-``k`` by cosine among the Hamming top-``candidates``.

        ``queries`` is ``float32[dim]`` (1-D results) or ``float32[nq, dim]``.
        Returns ``(ids uint64, cosine float32)``, best first.
        """
        k = _positive_int(k, "k")
        return self._top_k(queries, k, np.float32, self.dim, "queries", _candidates(candidates))

    def candidate_ids(
        self, query: npt.ArrayLike, *, candidates: int | None = None
    ) -> npt.NDArray[np.uint64]:
        """Ids of the Hamming candidates of one query, nearest code first."""
        cand = _candidates(candidates)
        q = _float_vector(query, self.dim, "query")
        return self._core.candidate_ids(q, cand)


class HammingRescoreRows(_HammingBase):
    """The same search as :class:`HammingRescoreIndex` (Hamming candidates, then exact
    cosine, ties by insertion order), over unit rows the caller keeps: the index holds
    each vector's code and the number of its row in the caller's matrix, and every
    search is given that matrix. The recall index's dense lane uses it so that its unit
    matrix is the only copy of the vectors. The mean is given at creation (the codes
    are made against it); the caller keeps a referenced row unchanged until it removes
    the id."""

    __slots__ = ()
    _core: _native.HammingRescoreIndex

    def __init__(self, dim: int, mean: npt.ArrayLike, *, candidates: int | None = None) -> None:
        dim = _positive_int(dim, "dim")
        cand = _candidates(candidates)
        mean_arr = _float_vector(mean, dim, "mean")
        self._core = _core.HammingRescoreIndex(dim, cand, True)
        self._core.set_mean(mean_arr)

    @property
    def dim(self) -> int:
        return int(self._core.dim)

    @property
    def mean(self) -> npt.NDArray[np.float32]:
        mean = self._core.get_mean()
        assert mean is not None  # fixed at creation
        return mean

    def add_refs(self, ids: npt.ArrayLike, rows: npt.ArrayLike, codes: npt.ArrayLike) -> None:
        """``ids[i]``'s unit row is ``rows[i]`` of the matrix searches are given; ``codes``
        as :func:`binarize` of those rows against the mean. All or nothing."""
        id_arr = _id_array(ids)
        row_arr = np.ascontiguousarray(rows, np.int64).reshape(-1)
        c = _code_matrix(codes, (self.dim + 63) // 64, "codes")
        if not (row_arr.shape[0] == c.shape[0] == id_arr.shape[0]):
            raise InvalidArgument(
                f"{id_arr.shape[0]} ids, {row_arr.shape[0]} rows and {c.shape[0]} codes; they must match"
            )
        self._core.add_refs(id_arr, row_arr, c)

    def search(
        self,
        queries: npt.ArrayLike,
        k: int,
        matrix: npt.NDArray[np.float32],
        *,
        candidates: int | None = None,
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """Top-``k`` by cosine with the rows of ``matrix`` (C-contiguous float32, ``dim``
        wide: read in place) among the Hamming top-``candidates``; as
        :meth:`HammingRescoreIndex.search`."""
        k = _positive_int(k, "k")
        q, single = _queries(queries, np.float32, self.dim, "queries")
        ids, values = self._core.search(q, k, _candidates(candidates), matrix)
        return (ids[0], values[0]) if single else (ids, values)

    candidate_ids = HammingRescoreIndex.candidate_ids  # the same Hamming step, nearest code first
