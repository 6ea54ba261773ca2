"""The native id -> row map that columnar organs index their arrays by.

:class:`RowMap` wraps ``chitta._core.RowMap`` (``csrc/util/row_map.h``): an
append-only open-addressing hash map from ``uint64`` ids to dense rows. The
i-th new id gets row ``i``; rows are never removed or reused (an organ marks a
dead row itself). Every ``uint64`` value is a valid id, ``0`` and
``2**64 - 1`` included.

* ``add(ids)`` -> ``bool`` array: True where the id was new and got the next
  row. An id already present, or repeated inside ``ids``, gets no row: the
  first occurrence wins.
* ``rows(ids)`` -> ``int64`` array, ``-1`` where absent; ``row(id)`` -> int.
* ``ids()`` -> every id in row order (``ids()[row]`` is that row's id).
* Bulk calls take 1-D C-contiguous ``uint64`` numpy arrays (refused, never
  cast: anything else raises :class:`chitta.errors.InvalidArgument`, and
  changes nothing) and release the GIL. Growth doubles the table, so adds are
  amortised O(1).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import InvalidArgument

__all__ = ["RowMap"]

_U64_MAX = 2**64 - 1


def _id(value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidArgument(f"id must be an integer, got {value!r}")
    try:
        i = operator.index(value)
    except TypeError:
        raise InvalidArgument(f"id must be an integer, got {type(value).__name__}") from None
    if not 0 <= i <= _U64_MAX:
        raise InvalidArgument(f"id out of uint64 range: {i}")
    return i


class RowMap:
    """Append-only ``uint64`` id -> dense ``int`` row map (native)."""

    __slots__ = ("_m",)

    def __init__(self) -> None:
        self._m = _core.RowMap()

    @classmethod
    def from_ids(cls, ids: npt.NDArray[np.uint64]) -> RowMap:
        """A map whose row ``i`` is ``ids[i]``; InvalidArgument if ``ids`` repeats one."""
        m = cls()
        m.reserve(len(ids))
        fresh = m._m.add(ids)
        if not bool(fresh.all()):
            raise InvalidArgument("ids repeat an id")
        return m

    def __len__(self) -> int:
        return len(self._m)

    def __contains__(self, id: object) -> bool:
        try:
            i = _id(id)
        except InvalidArgument:
            return False
        return bool(self._m.contains(i))

    def __repr__(self) -> str:
        return f"RowMap(len={len(self)})"

    def add(self, ids: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        """Give each new id the next row; True where it was new (first occurrence wins)."""
        return self._m.add(ids)

    def add_one(self, id: int) -> int:
        """Add one id; its new row, or -1 if it was already present."""
        return int(self._m.add_one(_id(id)))

    def rows(self, ids: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """The row of each id, -1 where absent."""
        return self._m.rows(ids)

    def row(self, id: int) -> int:
        """The row of ``id``, or -1."""
        return int(self._m.row(_id(id)))

    def ids(self) -> npt.NDArray[np.uint64]:
        """Every id in row order (a copy)."""
        return self._m.ids()

    def reserve(self, n: int) -> None:
        """Make room for ``n`` ids in total without rehashing."""
        n = operator.index(n)
        if n < 0:
            raise InvalidArgument(f"n must be >= 0, got {n}")
        self._m.reserve(n)

    def memory_bytes(self) -> int:
        """Bytes held by the table and the row -> id array."""
        return int(self._m.memory_bytes())
