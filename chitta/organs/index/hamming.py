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

import os

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta import _core as _native  # the name _core is also the instance attribute
from chitta.errors import InvalidArgument
from chitta.organs.index._hamming_common import (
    _code_matrix,
    _count,
    _float_matrix,
    _float_vector,
    _HammingBase,
    _id_array,
    _positive_int,
    _same_length,
)
from chitta.organs.index.hamming_rescore import HammingRescoreIndex

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


class HammingIndex(_HammingBase):
    """Exact top-k Hamming search over ``bits``-bit codes.

    >>> index = HammingIndex(256)
    >>> index.add(ids, codes)            # ids uint64[n], codes uint64[n, 4]
    >>> ids, dist = index.search(q, 10)  # q uint64[4] or uint64[nq, 4]
    """

    __slots__ = ()
    _core: _native.HammingIndex

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
        _same_length(id_arr, code_arr, "codes")
        self._core.add(id_arr, code_arr)

    def search(
        self, codes: npt.ArrayLike, k: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32]]:
        """The ``k`` nearest codes to each query, nearest first.

        ``codes`` is ``uint64[words]`` (one query: results are 1-D of length
        ``k``) or ``uint64[nq, words]`` (results ``[nq, k]``). Returns
        ``(ids uint64, distances uint32)``; short rows padded as the module says.
        """
        return self._top_k(codes, _positive_int(k, "k"), np.uint64, self.words, "codes")
