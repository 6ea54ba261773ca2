"""The dense lane's id -> matrix row map as a column over the recall-index
organ's rows (``RowColumns.vrow``, -1: no vector), with the dict methods the
dense lane uses plus vectorised ones, so a run of puts or a checkpoint restore
sets a million vector rows without a Python dict entry per memory. Only ids
the organ has a row for can hold a vector (the organ sets vectors of live
memories only)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from chitta.organs.recall_rows import RowColumns

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class VectorRows:
    def __init__(self, cols: RowColumns) -> None:
        self._cols = cols
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def get(self, mid: int, default: int | None = None) -> int | None:
        cols = self._cols
        r: int = cols._row(mid)
        if r < 0:
            return default
        v = cols.v_vrow[r]
        return default if v < 0 else int(v)

    def __contains__(self, mid: object) -> bool:
        return isinstance(mid, int) and 0 <= mid < 2**64 and self.get(mid) is not None

    def __getitem__(self, mid: int) -> int:
        v = self.get(mid)
        if v is None:
            raise KeyError(mid)
        return v

    def __setitem__(self, mid: int, row: int) -> None:
        cols = self._cols
        r: int = cols._row(mid)
        if r < 0:
            raise KeyError(f"no organ row for id {mid}")
        if cols.v_vrow[r] < 0:
            self._n += 1
        cols.v_vrow[r] = row

    def pop(self, mid: int, default: int | None = None) -> int | None:
        cols = self._cols
        r: int = cols._row(mid)
        if r < 0:
            return default
        v = cols.v_vrow[r]
        if v < 0:
            return default
        cols.v_vrow[r] = -1
        self._n -= 1
        return int(v)

    def _organ_rows(self) -> I64:
        cols = self._cols
        return np.flatnonzero(cols.vrow[: cols.n] >= 0)

    def keys(self) -> list[int]:
        ids: list[int] = self._cols.ids[self._organ_rows()].tolist()
        return ids

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys())

    def values(self) -> I64:
        return self._cols.vrow[self._organ_rows()]

    def items(self) -> list[tuple[int, int]]:
        rows = self._organ_rows()
        cols = self._cols
        return list(zip(cols.ids[rows].tolist(), cols.vrow[rows].tolist()))

    def update(self, pairs: Iterable[tuple[int, int]]) -> None:
        for mid, row in pairs:
            self[mid] = row

    def set_many(self, ids: U64, rows: I64) -> None:
        """``self[ids[i]] = rows[i]`` for every i (distinct ids, each with an organ row)."""
        cols = self._cols
        at = cols.map.rows(np.ascontiguousarray(ids, np.uint64))
        if len(at) and int(at.min()) < 0:
            raise ValueError("vector ids without a memory")
        self._n += int(np.count_nonzero(cols.vrow[at] < 0))
        cols.vrow[at] = rows

    def recount(self) -> int:
        """Recount the ids with a row (after ``set_many`` of ids that may repeat)."""
        cols = self._cols
        self._n = int(np.count_nonzero(cols.vrow[: cols.n] >= 0))
        return self._n

    def rows_of(self, ids: U64) -> I64:
        """The matrix row of each of ``ids``, -1 where it has none."""
        cols = self._cols
        at = cols.map.rows(np.ascontiguousarray(ids, np.uint64))
        if not cols.n:
            return at  # all -1
        out: I64 = np.where(at >= 0, cols.vrow[np.maximum(at, 0)], -1)
        return out
