"""Sorted id arrays behind the recall-index organ's filters.

``RecallIndexOrgan.allowed`` answers a filter (kind, realm, session, harness,
event-time range, staged) with a sorted uint64 array of ids. Building it from
Python sets costs a set copy and a sort of every member on each query (tens
of milliseconds at 100K memories); this cache keeps each filter value's members
as a sorted array and the event times sorted once, so a query intersects
sorted arrays instead. Derived state only: the organ clears it whenever a
memory is put or dropped (the staged array also when a memory leaves the
write gate), and it is rebuilt on the next filtered query.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def as_sorted(members: Iterable[int], size: int) -> U64:
    arr = np.fromiter(members, np.uint64, size)
    arr.sort()
    return arr


class SortedIds:
    def __init__(self) -> None:
        self._arrays: dict[tuple[str, str], U64] = {}
        self._all: U64 | None = None
        self._by_time: tuple[U64, I64] | None = None  # ids ordered by event time, and the times
        self._staged: U64 | None = None

    def clear(self) -> None:
        if self._arrays:
            self._arrays.clear()
        self._all = None
        self._by_time = None
        self._staged = None

    def staged_changed(self) -> None:
        self._staged = None

    def without_staged(self, ids: U64, staged: set[int]) -> U64:
        """``ids`` (sorted) less the staged ones."""
        if not staged or len(ids) == 0:
            return ids
        if self._staged is None:
            self._staged = as_sorted(staged, len(staged))
        return ids[~np.isin(ids, self._staged, assume_unique=True)]

    def members(self, field: str, value: str, members: set[int]) -> U64:
        key = (field, value)
        arr = self._arrays.get(key)
        if arr is None:
            arr = self._arrays[key] = as_sorted(members, len(members))
        return arr

    def everything(self, ids: dict[int, object]) -> U64:
        if self._all is None:
            self._all = as_sorted(ids.keys(), len(ids))
        return self._all

    def in_time_range(self, created: dict[int, int], since_ms: int | None, until_ms: int | None) -> U64:
        """Sorted ids whose event time is within ``[since_ms, until_ms]`` (either end open when None)."""
        if self._by_time is None:
            ids = np.fromiter(created.keys(), np.uint64, len(created))
            times = np.fromiter(created.values(), np.int64, len(created))
            order = np.argsort(times, kind="stable")
            self._by_time = (ids[order], times[order])
        ids, times = self._by_time
        lo = 0 if since_ms is None else int(np.searchsorted(times, _clamp(since_ms), side="left"))
        hi = len(times) if until_ms is None else int(np.searchsorted(times, _clamp(until_ms), side="right"))
        return np.sort(ids[lo:hi]) if hi > lo else np.zeros(0, np.uint64)


def _clamp(ms: int) -> int:
    return max(-(2**63), min(2**63 - 1, ms))


def intersect(arrays: list[U64]) -> U64:
    """Intersection of sorted arrays of unique ids (sorted)."""
    arrays = sorted(arrays, key=len)
    out = arrays[0]
    for other in arrays[1:]:
        if len(out) == 0:
            break
        out = np.intersect1d(out, other, assume_unique=True)
    return out

