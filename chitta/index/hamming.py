"""Binary codes and Hamming search, with exact cosine rescoring.

Two indexes over the same C++ scan (``csrc/hamming/``):

* :class:`HammingIndex` maps ``uint64`` ids to binary codes of ``bits`` bits
  (any positive multiple of 64), held as ``bits // 64`` little-endian ``uint64``
  words, and answers exact top-k by Hamming distance.
* :class:`HammingRescoreIndex` keeps float32 vectors, binarises them to sign
  codes, takes the Hamming top-``candidates`` of a query and returns the top-k
  of those by exact cosine (the ``.bin`` pre-filter + rescore of the design).

Shared rules:

* **Ties** at equal distance (or equal cosine) go to the memory inserted
  first. Removal is a tombstone; more than a quarter dead triggers an
  order-keeping compaction, so insertion order survives removals. Re-adding a
  removed id is a new insertion: it goes last.
* **Padding**: when fewer than ``k`` memories exist a result row is padded with
  id ``2**64 - 1`` (:data:`PAD_ID`, which ``add`` refuses) and distance
  ``bits + 1`` (Hamming) or cosine ``-inf`` (rescoring).
* **Errors**: bad input raises :class:`chitta.errors.InvalidArgument` (also a
  ``ValueError``); removing an id that is not there raises
  :class:`chitta.errors.NotFound` (also a ``KeyError``). A call that raises
  changes nothing. Wrong dtypes are refused, not cast: codes and ids are
  ``uint64`` (ids may also be any integer dtype with no negative value),
  vectors are ``float32``.
* Bulk calls release the GIL; searches may run in parallel with each other,
  add/remove wait for them.
* The kernel (AVX-512 VPOPCNTDQ, AVX2 or portable) is picked once at run time;
  :func:`simd_level` names it. ``CHITTA_SIMD=generic|avx2|avx512`` in the
  environment lowers the choice (read at the first search).
"""

from __future__ import annotations

import operator
import os
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument

__all__ = [
    "PAD_ID",
    "HammingIndex",
    "HammingRescoreIndex",
    "binarize",
    "default_candidates",
    "simd_level",
]

PAD_ID = 2**64 - 1
"""Id that pads search results shorter than ``k``; never a valid id."""

_U64_MAX = 2**64 - 1


def simd_level() -> str:
    """The Hamming kernel in use: ``"avx512_vpopcntdq"``, ``"avx2"`` or ``"generic"``."""
    return _core.hamming_simd_level()


def default_candidates(n: int) -> int:
    """Default rescoring candidates for ``n`` memories: ``max(400, ceil(n / 1000))``.

    400 is the seed design's top-400. Measured there, 256-bit codes with
    top-400 gave recall@10 0.97 at 100K but 0.90 at 1M, and top-1000 gave 0.97
    at 1M: keeping the candidates at >= 0.1% of ``n`` holds recall as ``n``
    grows, while rescoring stays small beside the O(n) scan.
    """
    return int(_core._hamming_default_candidates(_count(n, "n")))


def binarize(vectors: npt.ArrayLike, mean: npt.ArrayLike | None = None) -> npt.NDArray[np.uint64]:
    """Sign codes of ``vectors - mean`` as ``uint64[n, ceil(dim / 64)]``.

    Bit ``i % 64`` of word ``i // 64`` is 1 iff ``vectors[:, i] - mean[i] > 0``;
    bits past ``dim`` are 0 (numpy ``packbits(..., bitorder="little")`` order).
    ``mean=None`` uses ``vectors.mean(axis=0)``. Float32 only; NaN/inf raise.
    """
    v = _float_matrix(vectors, None, "vectors")
    if mean is None:
        if v.shape[0] == 0:
            raise InvalidArgument("cannot estimate a mean from zero vectors; pass mean")
        m = np.ascontiguousarray(v.mean(axis=0), dtype=np.float32)
    else:
        m = _float_vector(mean, v.shape[1], "mean")
    return _core.hamming_binarize(v, m)


class HammingIndex:
    """Exact top-k Hamming search over ``bits``-bit codes.

    >>> index = HammingIndex(256)
    >>> index.add(ids, codes)            # ids uint64[n], codes uint64[n, 4]
    >>> ids, dist = index.search(q, 10)  # q uint64[4] or uint64[nq, 4]
    """

    __slots__ = ("_core",)

    def __init__(self, bits: int) -> None:
        bits = _positive_int(bits, "bits")
        self._core = _core.HammingIndex(bits)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> HammingIndex:
        """Read a code file written by :meth:`save` (format: ``csrc/hamming/FORMAT.md``).

        Damage raises :class:`chitta.errors.CorruptionError` (a checksum
        mismatch is its subclass ``CrcMismatch``), a newer major version
        ``UnsupportedFormat``, a missing file ``ChittaIOError``.
        """
        self = cls.__new__(cls)
        self._core = _core.HammingIndex.load(os.fspath(path))
        return self

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the live codes, in insertion order, with a CRC-32C footer.

        Written to ``path + ".tmp"``, fsynced, then renamed over ``path``.
        """
        self._core.save(os.fspath(path))

    @property
    def bits(self) -> int:
        """Code width in bits."""
        return int(self._core.bits)

    @property
    def words(self) -> int:
        """Code width in ``uint64`` words (``bits // 64``)."""
        return int(self._core.words)

    def __len__(self) -> int:
        return len(self._core)

    def __contains__(self, id: object) -> bool:
        key = _id_or_none(id)
        return key is not None and bool(self._core.contains(key))

    def memory_bytes(self) -> int:
        """Bytes held: codes, ids, tombstones and the id map (estimated)."""
        return int(self._core.memory_bytes())

    def ids(self) -> npt.NDArray[np.uint64]:
        """Live ids in insertion order (the tie-break order)."""
        return self._core.ids()

    def add(self, ids: npt.ArrayLike, codes: npt.ArrayLike) -> None:
        """Add ``codes[i]`` under ``ids[i]``. All or nothing.

        Raises InvalidArgument for a wrong dtype/shape, an id already present,
        an id repeated in the batch, or id ``2**64 - 1``.
        """
        id_arr = _id_array(ids)
        code_arr = _code_matrix(codes, self.words, "codes")
        if code_arr.shape[0] != id_arr.shape[0]:
            raise InvalidArgument(
                f"{id_arr.shape[0]} ids but {code_arr.shape[0]} codes; they must match"
            )
        self._core.add(id_arr, code_arr)

    def remove(self, ids: npt.ArrayLike) -> None:
        """Remove ``ids``. All or nothing: NotFound if any is absent."""
        self._core.remove(_id_array(ids))

    def search(
        self, codes: npt.ArrayLike, k: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32]]:
        """The ``k`` nearest codes to each query, nearest first.

        ``codes`` is ``uint64[words]`` (one query: results are 1-D of length
        ``k``) or ``uint64[nq, words]`` (results ``[nq, k]``). Returns
        ``(ids uint64, distances uint32)``; short rows padded as the module says.
        """
        k = _positive_int(k, "k")
        q, single = _queries(codes, np.uint64, self.words, "codes")
        ids, dist = self._core.search(q, k)
        return (ids[0], dist[0]) if single else (ids, dist)


class HammingRescoreIndex:
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

    __slots__ = ("_core",)

    def __init__(
        self, dim: int, *, candidates: int | None = None, mean: npt.ArrayLike | None = None
    ) -> None:
        dim = _positive_int(dim, "dim")
        cand = 0 if candidates is None else _positive_int(candidates, "candidates")
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

    def __len__(self) -> int:
        return len(self._core)

    def __contains__(self, id: object) -> bool:
        key = _id_or_none(id)
        return key is not None and bool(self._core.contains(key))

    def memory_bytes(self) -> int:
        """Bytes held: vectors, codes, ids, tombstones and the id map (estimated)."""
        return int(self._core.memory_bytes())

    def add(self, ids: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Add ``vectors[i]`` (float32) under ``ids[i]``. All or nothing."""
        id_arr = _id_array(ids)
        v = _float_matrix(vectors, self.dim, "vectors")
        if v.shape[0] != id_arr.shape[0]:
            raise InvalidArgument(
                f"{id_arr.shape[0]} ids but {v.shape[0]} vectors; they must match"
            )
        self._core.add(id_arr, v)

    def add_coded(self, ids: npt.ArrayLike, unit_vectors: npt.ArrayLike, codes: npt.ArrayLike) -> None:
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

    def remove(self, ids: npt.ArrayLike) -> None:
        """Remove ``ids``. All or nothing: NotFound if any is absent."""
        self._core.remove(_id_array(ids))

    def search(
        self, queries: npt.ArrayLike, k: int, *, candidates: int | None = None
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """Top-``k`` by cosine among the Hamming top-``candidates``.

        ``queries`` is ``float32[dim]`` (1-D results) or ``float32[nq, dim]``.
        Returns ``(ids uint64, cosine float32)``, best first.
        """
        k = _positive_int(k, "k")
        cand = 0 if candidates is None else _positive_int(candidates, "candidates")
        q, single = _queries(queries, np.float32, self.dim, "queries")
        ids, scores = self._core.search(q, k, cand)
        return (ids[0], scores[0]) if single else (ids, scores)

    def candidate_ids(
        self, query: npt.ArrayLike, *, candidates: int | None = None
    ) -> npt.NDArray[np.uint64]:
        """Ids of the Hamming candidates of one query, nearest code first."""
        cand = 0 if candidates is None else _positive_int(candidates, "candidates")
        q = _float_vector(query, self.dim, "query")
        return self._core.candidate_ids(q, cand)


# ---- input checks ---------------------------------------------------------------


def _integer(value: object, what: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(f"{what} must be an integer, got a bool")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidArgument(f"{what} must be an integer, got {type(value).__name__}") from None


def _positive_int(value: object, what: str) -> int:
    if type(value) is int and value > 0:  # fast path for the common case
        return value
    v = _integer(value, what)
    if v <= 0:
        raise InvalidArgument(f"{what} must be positive, got {v}")
    return v


def _count(value: object, what: str) -> int:
    v = _integer(value, what)
    if v < 0:
        raise InvalidArgument(f"{what} must not be negative, got {v}")
    return v


def _id_or_none(value: object) -> int | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
    return v if 0 <= v <= _U64_MAX else None


def _id_array(ids: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    arr: Any = np.asarray(ids)
    if arr.ndim != 1:
        raise InvalidArgument(f"ids must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.uint64)
    if arr.dtype.kind == "u":
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if arr.dtype.kind == "i":
        if (arr < 0).any():
            raise InvalidArgument("ids must not be negative")
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if arr.dtype == object and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= _U64_MAX for x in arr
    ):
        return np.array([int(x) for x in arr], dtype=np.uint64)
    raise InvalidArgument(f"ids must be unsigned 64-bit integers, got dtype {arr.dtype}")


def _code_matrix(codes: npt.ArrayLike, words: int, what: str) -> npt.NDArray[np.uint64]:
    arr: Any = np.asarray(codes)
    if arr.ndim != 2 or arr.shape[1] != words:
        raise InvalidArgument(f"{what} must have shape (n, {words}), got {arr.shape}")
    if arr.shape[0] == 0:
        return np.empty((0, words), dtype=np.uint64)
    if arr.dtype != np.uint64:
        raise InvalidArgument(f"{what} must have dtype uint64, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _float_matrix(vectors: npt.ArrayLike, dim: int | None, what: str) -> npt.NDArray[np.float32]:
    arr: Any = np.asarray(vectors)
    if arr.ndim != 2 or (dim is not None and arr.shape[1] != dim):
        want = "(n, dim)" if dim is None else f"(n, {dim})"
        raise InvalidArgument(f"{what} must have shape {want}, got {arr.shape}")
    if arr.shape[1] == 0:
        raise InvalidArgument(f"{what} must have at least one column")
    if arr.shape[0] == 0:
        return np.empty((0, arr.shape[1]), dtype=np.float32)
    if arr.dtype != np.float32:
        raise InvalidArgument(f"{what} must have dtype float32, got {arr.dtype}")
    return np.ascontiguousarray(arr)


def _float_vector(values: npt.ArrayLike, dim: int, what: str) -> npt.NDArray[np.float32]:
    arr: Any = np.asarray(values)
    if arr.shape != (dim,):
        raise InvalidArgument(f"{what} must have shape ({dim},), got {arr.shape}")
    if arr.dtype != np.float32:
        raise InvalidArgument(f"{what} must have dtype float32, got {arr.dtype}")
    if not np.isfinite(arr).all():
        raise InvalidArgument(f"{what} has a NaN or inf")
    return np.ascontiguousarray(arr)


def _queries(values: npt.ArrayLike, dtype: type, width: int, what: str) -> tuple[Any, bool]:
    if type(values) is np.ndarray and values.dtype == dtype and values.flags.c_contiguous:
        # Fast path: already the right array; only the shape needs checking.
        if values.ndim == 1 and values.shape[0] == width:
            return values.reshape(1, width), True
        if values.ndim == 2 and values.shape[1] == width and values.shape[0] > 0:
            return values, False
    arr: Any = np.asarray(values)
    single = arr.ndim == 1
    if single:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise InvalidArgument(
            f"{what} must have shape ({width},) or (nq, {width}), got {arr.shape}"
        )
    if arr.shape[0] == 0:
        return np.empty((0, width), dtype=dtype), False
    if arr.dtype != dtype:
        raise InvalidArgument(f"{what} must have dtype {np.dtype(dtype)}, got {arr.dtype}")
    return np.ascontiguousarray(arr), single
