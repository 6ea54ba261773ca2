"""Per-memory integers of the recall-index organ as columns over its rows, with
the dict methods the organ uses plus vectorised ones, so a run of puts or a
checkpoint restore sets a million entries without a Python dict entry per
memory: :class:`VectorRows` (the dense lane's id -> matrix row,
``RowColumns.vrow``) and :class:`CodeVersions` (id -> encoder version of its
sparse code, ``RowColumns.cver``); -1 in the column means no entry. Only ids
the organ has a row for can hold an entry (the organ sets them for live
memories only)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from chitta.organs.recall_rows import RowColumns

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class IdColumn:
    column = ""  # the RowColumns attribute (and ``v_`` + it, its memoryview)

    def __init__(self, cols: RowColumns) -> None:
        self._cols = cols
        self._n = 0

    @property
    def _col(self) -> I64:
        col: I64 = getattr(self._cols, self.column)
        return col

    @property
    def _view(self) -> memoryview:
        view: memoryview = getattr(self._cols, "v_" + self.column)
        return view

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def get(self, mid: int, default: int | None = None) -> int | None:
        cols = self._cols
        r: int = cols._row(mid)
        if r < 0:
            return default
        v = self._view[r]
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
        if self._view[r] < 0:
            self._n += 1
        self._view[r] = row

    def pop(self, mid: int, default: int | None = None) -> int | None:
        cols = self._cols
        r: int = cols._row(mid)
        if r < 0:
            return default
        v = self._view[r]
        if v < 0:
            return default
        self._view[r] = -1
        self._n -= 1
        return int(v)

    def _organ_rows(self) -> I64:
        cols = self._cols
        return np.flatnonzero(self._col[: cols.n] >= 0)

    def keys(self) -> list[int]:
        ids: list[int] = self._cols.ids[self._organ_rows()].tolist()
        return ids

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys())

    def values(self) -> I64:
        return self._col[self._organ_rows()]

    def items(self) -> list[tuple[int, int]]:
        rows = self._organ_rows()
        cols = self._cols
        return list(zip(cols.ids[rows].tolist(), self._col[rows].tolist()))

    def update(self, pairs: Iterable[tuple[int, int]]) -> None:
        for mid, row in pairs:
            self[mid] = row

    def set_many(self, ids: U64, rows: I64) -> None:
        """``self[ids[i]] = rows[i]`` for every i (distinct ids, each with an organ row)."""
        cols = self._cols
        at = cols.map.rows(np.ascontiguousarray(ids, np.uint64))
        if len(at) and int(at.min()) < 0:
            raise ValueError("vector ids without a memory")
        self._n += int(np.count_nonzero(self._col[at] < 0))
        self._col[at] = rows

    def recount(self) -> int:
        """Recount the ids with a row (after ``set_many`` of ids that may repeat)."""
        cols = self._cols
        self._n = int(np.count_nonzero(self._col[: cols.n] >= 0))
        return self._n

    def rows_of(self, ids: U64) -> I64:
        """The matrix row of each of ``ids``, -1 where it has none."""
        cols = self._cols
        at = cols.map.rows(np.ascontiguousarray(ids, np.uint64))
        if not cols.n:
            return at  # all -1
        out: I64 = np.where(at >= 0, self._col[np.maximum(at, 0)], -1)
        return out


class VectorRows(IdColumn):
    column = "vrow"


class CodeVersions(IdColumn):
    column = "cver"


class RowIds:
    """The dense lane's matrix row -> id (0 on a free row): a growable uint64 array."""

    def __init__(self, ids: U64 | None = None) -> None:
        self._a: U64 = np.array(ids if ids is not None else [], np.uint64)
        self._n = len(self._a)

    def __len__(self) -> int:
        return self._n

    def array(self) -> U64:
        """The ids of rows 0..len-1 (a view)."""
        return self._a[: self._n]

    def __setitem__(self, row: int, mid: int) -> None:
        self._a[row] = mid

    def extend(self, mids: list[int]) -> None:
        k = len(mids)
        if self._n + k > len(self._a):
            grown = np.zeros(max(1024, 2 * len(self._a), self._n + k), np.uint64)
            grown[: self._n] = self._a[: self._n]
            self._a = grown
        self._a[self._n : self._n + k] = np.array(mids, np.uint64)
        self._n += k

    def append(self, mid: int) -> None:
        self.extend([mid])


class HammingPending:
    """The ids whose vectors the Hamming index does not hold yet, as a bool column
    over the organ's rows (``RowColumns.hpend``)."""

    def __init__(self, cols: RowColumns) -> None:
        self._cols = cols
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def __bool__(self) -> bool:
        return self._n > 0

    def __contains__(self, mid: object) -> bool:
        if not isinstance(mid, int) or not 0 <= mid < 2**64:
            return False
        r: int = self._cols._row(mid)
        return r >= 0 and bool(self._cols.v_hpend[r])

    def add(self, mid: int) -> None:
        cols = self._cols
        r: int = cols._row(mid)
        if r >= 0 and not cols.v_hpend[r]:
            cols.v_hpend[r] = True
            self._n += 1

    def add_many(self, ids: U64) -> None:
        """Add distinct ids (each with an organ row)."""
        cols = self._cols
        at = cols.map.rows(np.ascontiguousarray(ids, np.uint64))
        at = at[at >= 0]
        self._n += int(np.count_nonzero(~cols.hpend[at]))
        cols.hpend[at] = True

    def discard(self, mid: int) -> bool:
        cols = self._cols
        r: int = cols._row(mid)
        if r < 0 or not cols.v_hpend[r]:
            return False
        cols.v_hpend[r] = False
        self._n -= 1
        return True

    def rows(self) -> I64:
        """The organ rows pending."""
        cols = self._cols
        return np.flatnonzero(cols.hpend[: cols.n])

    def clear(self) -> None:
        cols = self._cols
        cols.hpend[: cols.n] = False
        self._n = 0

    def set_all_with_vectors(self) -> None:
        """Every id that has a vector row becomes pending (a new Hamming index)."""
        cols = self._cols
        np.greater_equal(cols.vrow[: cols.n], 0, out=cols.hpend[: cols.n])
        self._n = int(np.count_nonzero(cols.hpend[: cols.n]))
