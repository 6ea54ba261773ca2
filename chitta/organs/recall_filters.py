"""Sorted id arrays behind the recall-index organ's filters.

``RecallIndexOrgan.allowed`` answers a filter (kind, realm, session, harness,
event-time range, staged) with a sorted uint64 array of ids. The organ keeps
its memories as columns (recall_rows.py); this cache turns a filter value into
the sorted ids of its live rows once (one vectorised pass over the label
codes), and keeps the event times sorted once, so a query intersects sorted
arrays. Derived state only: the organ clears it whenever a memory is put or
dropped (the staged array also when a memory leaves the write gate), and it
is rebuilt on the next filtered query.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from chitta.organs.recall_rows import RowColumns

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def as_sorted(members: Iterable[int], size: int) -> U64:
    arr = np.fromiter(members, np.uint64, size)
    arr.sort()
    return arr


class SortedIds:
    def __init__(self, cols: RowColumns) -> None:
        self._cols = cols
        self._arrays: dict[tuple[str, str], U64] = {}
        self._all: U64 | None = None
        self._by_time: tuple[U64, I64] | None = None  # ids ordered by event time, and the times
        self._staged: U64 | None = None

    def clear(self) -> None:
        if self._arrays:
            self._arrays.clear()
        if self._all is not None or self._by_time is not None or self._staged is not None:
            self._all = self._by_time = self._staged = None

    def staged_changed(self) -> None:
        self._staged = None

    def without_staged(self, ids: U64) -> U64:
        """``ids`` (sorted) less the staged ones."""
        cols = self._cols
        if not cols.n_staged or len(ids) == 0:
            return ids
        if self._staged is None:
            staged = cols.ids[np.flatnonzero(cols.staged[: cols.n])]
            staged.sort()
            self._staged = staged
        return ids[~np.isin(ids, self._staged, assume_unique=True)]

    def members(self, field: str, value: str) -> U64:
        """Sorted ids of the live memories whose ``field`` is ``value``."""
        key = (field, value)
        arr = self._arrays.get(key)
        if arr is None:
            cols = self._cols
            code = cols.tables[field].codes.get(value)
            if code is None:
                arr = np.zeros(0, np.uint64)
            else:
                n = cols.n
                hit = cols.labels[field][:n] == code
                hit &= cols.live[:n]
                arr = cols.ids[np.flatnonzero(hit)]
                arr.sort()
            self._arrays[key] = arr
        return arr

    def everything(self) -> U64:
        if self._all is None:
            cols = self._cols
            arr = cols.ids[cols.live_rows()]
            arr.sort()
            self._all = arr
        return self._all

    def in_time_range(self, since_ms: int | None, until_ms: int | None) -> U64:
        """Sorted ids whose event time is within ``[since_ms, until_ms]`` (either end open when None)."""
        if self._by_time is None:
            cols = self._cols
            rows = cols.live_rows()
            times = cols.created[rows]
            order = np.argsort(times, kind="stable")
            self._by_time = (cols.ids[rows[order]], times[order])
        ids, times = self._by_time
        lo = 0 if since_ms is None else int(np.searchsorted(times, _clamp(since_ms), side="left"))
        hi = (
            len(times)
            if until_ms is None
            else int(np.searchsorted(times, _clamp(until_ms), side="right"))
        )
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
