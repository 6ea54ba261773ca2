"""Sparse-code posting index: recall by shared active features.

Every memory carries exactly ``active`` distinct feature ids out of
``n_features`` (by default 64 of 16,384), each with a float32 activation
(default 1.0). One posting list of memories per feature answers "which stored
memories share the most features with this query code?" without any distance
function or graph.

Ranking of :meth:`PostingIndex.search`, best first:

1. the number of feature ids shared with the query (the ``counts`` returned);
2. ties: the sum of the *stored* memory's activations over those shared
   features (summed in float64 in ascending feature-id order), higher first;
3. ties: the memory added earlier first (re-adding a removed id counts as a new
   addition).

Memories sharing no feature with the query are never returned. When fewer than
``k`` memories qualify, the rest of the row is padded with id :data:`PAD_ID`
(``2**64 - 1``, which is therefore never a valid memory id) and count 0.

Every bad input raises a :mod:`chitta.errors` class and leaves the index as it
was: a batch is validated completely before anything changes. Bulk calls
release the GIL; concurrent searches run in parallel, mutations take an
exclusive lock.
"""

from __future__ import annotations

import os
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument

__all__ = ["PAD_ID", "PostingIndex"]

PAD_ID: Final[int] = 2**64 - 1
"""Id that pads result rows with fewer than ``k`` hits (its count is 0)."""

_STRATEGIES: Final = {"auto": 0, "count": 1, "scan": 2}
_COUNT_MODES: Final = {"auto": 0, "touched": 1, "dense": 2}


def _as_array(value: Any, dtype: type[np.generic], name: str, ndims: tuple[int, ...]) -> Any:
    """``value`` as a C-contiguous array of exactly ``dtype``.

    A numpy array must already have ``dtype`` (it is never cast). A plain
    Python sequence is converted if its values fit ``dtype`` exactly.
    """
    want = np.dtype(dtype)
    if isinstance(value, np.ndarray):
        arr = value
        if arr.dtype != want:
            raise InvalidArgument(f"{name} must have dtype {want}, got {arr.dtype}")
    else:
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError, OverflowError) as e:
            raise InvalidArgument(f"{name} is not array-like: {e}") from None
        if arr.size == 0 and arr.dtype.kind in "fiu":
            arr = arr.astype(want)
        elif want.kind == "u":
            if arr.dtype.kind not in "iu":
                raise InvalidArgument(f"{name} must hold integers, got {arr.dtype}")
            info = np.iinfo(want)
            if arr.size and (int(arr.min()) < 0 or int(arr.max()) > info.max):
                raise InvalidArgument(f"{name} values must lie in [0, {info.max}]")
            arr = arr.astype(want)
        else:
            if arr.dtype.kind not in "fiu":
                raise InvalidArgument(f"{name} must hold numbers, got {arr.dtype}")
            arr = arr.astype(want)
    if arr.ndim not in ndims:
        shapes = " or ".join(f"{d}-D" for d in ndims)
        raise InvalidArgument(f"{name} must be {shapes}, got shape {arr.shape}")
    return np.ascontiguousarray(arr)


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InvalidArgument(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise InvalidArgument(f"k must be at least 1, got {k}")
    return int(k)


class PostingIndex:
    """Inverted index over sparse feature codes (``active`` of ``n_features``).

    >>> idx = PostingIndex(n_features=16, active=2)
    >>> idx.add(np.array([7, 8], np.uint64), np.array([[1, 2], [2, 3]], np.uint32))
    >>> ids, counts = idx.search(np.array([2, 3], np.uint32), k=3)
    >>> ids.tolist(), counts.tolist()
    ([8, 7, 18446744073709551615], [2, 1, 0])
    """

    __slots__ = ("_impl",)

    def __init__(self, n_features: int = 16384, active: int = 64) -> None:
        for name, v in (("n_features", n_features), ("active", active)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InvalidArgument(f"{name} must be an int, got {type(v).__name__}")
        self._impl = _core._PostingIndex(int(n_features), int(active))

    # ---- mutation ---------------------------------------------------------------

    def add(
        self,
        ids: npt.ArrayLike,
        features: npt.ArrayLike,
        activations: npt.ArrayLike | None = None,
    ) -> None:
        """Add ``n`` memories.

        ``ids``: uint64[n], distinct, not already present, not :data:`PAD_ID`.
        ``features``: uint32[n, active]; each row holds distinct ids
        ``< n_features`` in any order. ``activations``: float32[n, active]
        aligned with ``features`` (finite), or ``None`` for all 1.0.
        Raises :class:`~chitta.errors.InvalidArgument` and adds nothing if any
        row is bad.
        """
        ids_a = _as_array(ids, np.uint64, "ids", (1,))
        feats_a = _as_array(features, np.uint32, "features", (2,))
        acts_a = None
        if activations is not None:
            acts_a = _as_array(activations, np.float32, "activations", (2,))
        self._impl.add(ids_a, feats_a, acts_a)

    def reserve(self, rows: int, feature_counts: npt.ArrayLike, activations: bool = True) -> None:
        """Room for ``rows`` more memories whose codes hold feature ``f``
        ``feature_counts[f]`` times (uint32[n_features]), before adding them: the
        posting lists are sized once instead of growing by doubling. Changes no
        result. ``activations``: the rows to come carry activations."""
        counts = _as_array(feature_counts, np.uint32, "feature_counts", (1,))
        self._impl.reserve(int(rows), counts, bool(activations))

    def remove(self, ids: npt.ArrayLike) -> None:
        """Remove memories by id (uint64[n]).

        An unknown or already removed id raises :class:`~chitta.errors.NotFound`
        (also a ``KeyError``), a repeated id :class:`~chitta.errors.InvalidArgument`;
        either way nothing is removed. Removed memories leave tombstones that are
        skipped in results and dropped once they exceed 25% of the slots, or on
        :meth:`compact`.
        """
        self._impl.remove(_as_array(ids, np.uint64, "ids", (1,)))

    def compact(self) -> None:
        """Drop tombstones now (rebuilds rows and posting lists; ranks unchanged)."""
        self._impl.compact()

    # ---- recall -----------------------------------------------------------------

    def search(
        self,
        features: npt.ArrayLike,
        k: int,
        allowed: npt.ArrayLike | None = None,
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32]]:
        """Top-``k`` memories sharing the most features with each query.

        ``features``: uint32[w] (one query) or uint32[q, w] (a batch), each row
        of distinct ids ``< n_features`` (usually ``w == active``, any ``w >= 1``
        works). ``allowed``: optional uint64 ids to restrict results to (ids not
        in the index are ignored). Returns ``(ids, counts)``: uint64 and uint32
        of shape ``[k]`` for one query, ``[q, k]`` for a batch, ordered as the
        module docstring says; short rows are padded with :data:`PAD_ID` and 0.
        """
        q = _as_array(features, np.uint32, "features", (1, 2))
        kk = _check_k(k)
        allowed_a = None if allowed is None else _as_array(allowed, np.uint64, "allowed", (1,))
        single = q.ndim == 1
        ids, counts = self._impl.search(q[None, :] if single else q, kk, allowed_a)
        if single:
            return ids[0], counts[0]
        return ids, counts

    # ---- inspection -------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._impl)

    def __contains__(self, id: object) -> bool:
        if isinstance(id, bool) or not isinstance(id, (int, np.integer)):
            return False
        if not 0 <= int(id) < PAD_ID:
            return False
        return bool(self._impl.contains(int(id)))

    def __repr__(self) -> str:
        return f"PostingIndex(n_features={self.n_features}, active={self.active}, len={len(self)})"

    @property
    def n_features(self) -> int:
        """Feature ids are ``< n_features``."""
        return int(self._impl.n_features)

    @property
    def active(self) -> int:
        """Feature ids per stored memory."""
        return int(self._impl.active)

    @property
    def num_tombstones(self) -> int:
        """Removed memories whose slots are not yet compacted away."""
        return int(self._impl.num_tombstones())

    def memory_bytes(self) -> int:
        """Bytes held by the index (posting lists, rows, id map), capacity included."""
        return int(self._impl.memory_bytes())

    def ids(self) -> npt.NDArray[np.uint64]:
        """Live ids (uint64) in insertion order."""
        out: npt.NDArray[np.uint64] = self._impl.live_ids()
        return out

    def get(self, id: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]:
        """The stored code of ``id``: feature ids ascending, activations aligned.

        Raises :class:`~chitta.errors.NotFound` for an unknown id.
        """
        if isinstance(id, bool) or not isinstance(id, (int, np.integer)):
            raise InvalidArgument(f"id must be an int, got {type(id).__name__}")
        if not 0 <= int(id) < PAD_ID:
            raise InvalidArgument(f"id out of range: {id}")
        result: tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]] = self._impl.get(int(id))
        return result

    # ---- persistence ------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write live memories to ``path`` (format: csrc/posting/FORMAT.md).

        Writes ``path + '.tmp'``, fsyncs and renames it over ``path``.
        """
        self._impl.save(os.fspath(path))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PostingIndex:
        """Read an index written by :meth:`save`.

        Damage raises :class:`~chitta.errors.CorruptionError` (a bad checksum its
        subclass :class:`~chitta.errors.CrcMismatch`); a newer major format
        :class:`~chitta.errors.UnsupportedFormat`; a missing file
        :class:`~chitta.errors.ChittaIOError`.
        """
        self = cls.__new__(cls)
        self._impl = _core._PostingIndex.load(os.fspath(path))
        return self

    def _set_allowed_strategy(self, strategy: str) -> None:
        """Tests only: force how ``allowed`` searches find candidates."""
        self._impl._set_allowed_strategy(_STRATEGIES[strategy])

    def _set_count_mode(self, mode: str) -> None:
        """Tests only: force how counted memories are collected (touched list or dense scan)."""
        self._impl._set_count_mode(_COUNT_MODES[mode])
