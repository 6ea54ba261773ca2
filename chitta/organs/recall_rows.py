"""The recall-index organ's per-memory state as columns (no Python object per
memory): a native :class:`~chitta.organs.index.row_map.RowMap` gives each id a row,
and numpy columns indexed by row hold whether it is live, its label codes
(kind, realm, session, harness) into organ-wide label tables, its event time,
whether it is staged, and its place in the arrival order. Rows are never
reused for another id: a dropped memory's row is dead until the same id is put
again. Arrays grow by doubling.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.ops.put_columns import LabelColumn
from chitta.organs.index.row_map import RowMap

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
FIELDS = ("kind", "realm", "session", "harness")
_PACK = struct.Struct("=4I").pack


def _mv(a: npt.NDArray[Any]) -> memoryview:
    return memoryview(a)  # type: ignore[arg-type]  # (numpy's stubs here do not declare the buffer protocol)


class LabelTable:
    """Organ-wide codes of one label field; code 0 is None."""

    __slots__ = ("codes", "values")

    def __init__(self, values: list[str | None] | None = None) -> None:
        self.values: list[str | None] = values if values is not None else [None]
        self.codes: dict[str | None, int] = {v: i for i, v in enumerate(self.values)}

    def code(self, value: str | None) -> int:
        c = self.codes.get(value)
        if c is None:
            c = self.codes[value] = len(self.values)
            self.values.append(value)
        return c

    def of_column(self, col: LabelColumn) -> npt.NDArray[np.uint32]:
        """The organ codes of a run's label column."""
        table = np.fromiter(map(self.code, col.values), np.uint32, len(col.values))
        out: npt.NDArray[np.uint32] = table[col.codes]
        return out


class RowColumns:
    def __init__(self) -> None:
        self.map = RowMap()
        self._row = self.map._m.row  # the bound native calls: no wrapper per call
        self._add_one = self.map._m.add_one
        self.cap = 0
        self.ids: U64 = np.zeros(0, np.uint64)
        self.live = np.zeros(0, bool)
        self.staged = np.zeros(0, bool)
        self.hpend = np.zeros(0, bool)  # its vector waits for the Hamming index (HammingPending)
        self.created: I64 = np.zeros(0, np.int64)
        self.arrival: I64 = np.zeros(0, np.int64)  # position in ``order`` of the row's latest put
        self.text_seq: I64 = np.zeros(
            0, np.int64
        )  # its pending keyword text (PendingText), 0: none
        self.vrow: I64 = np.zeros(
            0, np.int64
        )  # its row in the dense lane's matrix, -1: none (VectorRows)
        self.cver: I64 = np.zeros(
            0, np.int64
        )  # its sparse code's encoder version, -1: none (CodeVersions)
        self.lab = np.zeros((0, len(FIELDS)), np.uint32)  # the label codes, one column per field
        self.tables = {f: LabelTable() for f in FIELDS}
        self._combo: dict[
            tuple[str | None, ...], tuple[int, ...]
        ] = {}  # label tuple -> its codes (per-op puts)
        self.order: I64 = np.zeros(0, np.int64)  # rows in arrival order (from ``head``)
        self.order_len = 0
        self.head = 0
        self.n_live = 0
        self.n_staged = 0
        self._views()

    def __len__(self) -> int:
        return self.n_live

    @property
    def labels(self) -> dict[str, npt.NDArray[np.uint32]]:
        """Each field's code column (views)."""
        return {f: self.lab[:, j] for j, f in enumerate(FIELDS)}

    @property
    def n(self) -> int:
        """Rows in use (live or dead)."""
        return len(self.map)

    # ---- lookups ----------------------------------------------------------------
    def row(self, mid: int) -> int:
        """The live row of ``mid``, or -1."""
        r: int = self._row(mid)
        return r if r >= 0 and self.live[r] else -1

    def live_rows_of(self, ids: U64) -> I64:
        """Row of each of ``ids``, -1 where absent or dead."""
        rows = self.map.rows(np.ascontiguousarray(ids, np.uint64))
        have = rows >= 0
        rows[have & ~self.live[np.where(have, rows, 0)]] = -1
        return rows

    def live_rows(self) -> I64:
        return np.flatnonzero(self.live[: self.n])

    # ---- growth -------------------------------------------------------------------
    def _reserve(self, n: int) -> None:
        if n <= self.cap:
            return
        cap = max(1024, self.cap * 2, n)
        for name in ("ids", "live", "staged", "created", "arrival", "text_seq", "hpend"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)
        for name in ("vrow", "cver"):
            old = getattr(self, name)
            new = np.full(cap, -1, np.int64)
            new[: len(old)] = old
            setattr(self, name, new)
        lab = np.zeros((cap, len(FIELDS)), np.uint32)
        lab[: len(self.lab)] = self.lab
        self.lab = lab
        self.cap = cap
        self._views()

    def _views(self) -> None:
        """Memoryviews of the columns: a per-op put writes through them (a fraction
        of the cost of numpy's scalar item assignment)."""
        self.v_ids = _mv(self.ids)
        self.v_live = _mv(self.live)
        self.v_staged = _mv(self.staged)
        self.v_created = _mv(self.created)
        self.v_arrival = _mv(self.arrival)
        self.v_seq = _mv(self.text_seq)
        self.v_vrow = _mv(self.vrow)
        self.v_cver = _mv(self.cver)
        self.v_hpend = _mv(self.hpend)
        self.v_lab = _mv(self.lab.reshape(-1).view(np.uint8))  # 16 bytes per row
        self.v_order = _mv(self.order)

    def _arrive(self, rows: I64) -> None:
        k = len(rows)
        if self.order_len + k > len(self.order):
            if self.head > self.order_len // 2:  # compact: drop what the head passed
                live = self.order[self.head : self.order_len]
                self.arrival[np.unique(live)] -= self.head
                self.order[: len(live)] = live
                self.order_len, self.head = len(live), 0
            if self.order_len + k > len(self.order):
                grown = np.zeros(max(1024, 2 * len(self.order), self.order_len + k), np.int64)
                grown[: self.order_len] = self.order[: self.order_len]
                self.order = grown
                self.v_order = _mv(self.order)
        self.order[self.order_len : self.order_len + k] = rows
        self.arrival[rows] = np.arange(self.order_len, self.order_len + k)
        self.order_len += k

    # ---- puts and drops -------------------------------------------------------------
    def put_one(self, mid: int, labels: tuple[str | None, ...], created_ms: int) -> int:
        """Make ``mid`` live; its row, or -1 if it already was (the first put wins)."""
        r: int = self._add_one(mid)
        if r < 0:
            r = self._row(mid)
            if r < 0 or self.live[r]:
                return -1
        elif r >= self.cap:
            self._reserve(r + 1)
        codes = self._combo.get(labels)
        if codes is None:
            codes = self._combo[labels] = tuple(
                self.tables[f].code(v) for f, v in zip(FIELDS, labels)
            )
        self.v_ids[r] = mid
        self.v_live[r] = True
        self.v_staged[r] = True
        self.v_lab[16 * r : 16 * r + 16] = _PACK(*codes)
        self.v_created[r] = created_ms
        at = self.order_len
        if at < len(self.order):
            self.v_order[at] = r
            self.v_arrival[r] = at
            self.order_len = at + 1
        else:
            self._arrive(np.array([r], np.int64))
        self.n_live += 1
        self.n_staged += 1
        return r

    def put_run(self, ids: U64, labels: dict[str, LabelColumn], created_ms: I64) -> tuple[I64, I64]:
        """Make the run's ids live (first put wins); (accepted run indices, their rows)."""
        old_n = self.n
        fresh = self.map.add(ids)
        self._reserve(self.n)
        if bool(fresh.all()):
            idx = np.arange(len(ids), dtype=np.int64)
            rows = np.arange(old_n, self.n, dtype=np.int64)
        else:
            all_rows = self.map.rows(ids)
            # A present id is put again only when its row is dead, once (its first time here).
            again = ~fresh & (all_rows < old_n)
            again[again] = ~self.live[all_rows[again]]
            if again.any():
                at = np.flatnonzero(again)
                _, first = np.unique(all_rows[at], return_index=True)
                again[:] = False
                again[at[first]] = True
            idx = np.flatnonzero(fresh | again)
            rows = all_rows[idx]
        self.ids[rows] = ids[idx]
        self.live[rows] = True
        self.staged[rows] = True
        for j, f in enumerate(FIELDS):
            self.lab[rows, j] = self.tables[f].of_column(labels[f])[idx]
        self.created[rows] = created_ms[idx]
        self._arrive(rows)
        self.n_live += len(rows)
        self.n_staged += len(rows)
        return idx, rows

    def drop(self, mid: int) -> int:
        """Make ``mid`` dead; its former row, or -1 if it was not live."""
        r = self.row(mid)
        if r >= 0:
            self.live[r] = False
            self.n_live -= 1
            if self.staged[r]:
                self.staged[r] = False
                self.n_staged -= 1
        return r

    def unstage(self, mid: int) -> bool:
        r = self.row(mid)
        if r < 0 or not self.staged[r]:
            return False
        self.staged[r] = False
        self.n_staged -= 1
        return True

    def is_staged(self, mid: int) -> bool:
        r: int = self._row(mid)
        return r >= 0 and bool(self.staged[r])

    def staged_oldest_first(self) -> Iterator[int]:
        """Staged ids in arrival order (the head skips what is no longer staged)."""
        order, arrival, staged, _ids = self.order, self.arrival, self.staged, self.ids
        pos = self.head
        while pos < self.order_len:
            r = int(order[pos])
            if staged[r] and arrival[r] == pos:
                break
            pos += 1
        self.head = pos
        return self._walk(pos)

    def _walk(self, pos: int) -> Iterator[int]:
        order, arrival, staged, ids = self.order, self.arrival, self.staged, self.ids
        while pos < self.order_len:
            block = order[pos : min(pos + 4096, self.order_len)]
            at = np.arange(pos, pos + len(block))
            keep = staged[block] & (arrival[block] == at)
            yield from ids[block[keep]].tolist()
            pos += len(block)

    # ---- restore ----------------------------------------------------------------------
    def restore(
        self,
        ids: U64,
        labels: dict[str, tuple[list[str | None], npt.NDArray[np.uint32]]],
        created_ms: I64,
        staged_ids: U64,
    ) -> None:
        """Fill this (empty) store with live rows 0..n-1 (row i: ``ids[i]``); the
        ``staged_ids`` (absent ones ignored) arrive in their order."""
        self.map = RowMap.from_ids(np.ascontiguousarray(ids, np.uint64))
        self._row = self.map._m.row
        self._add_one = self.map._m.add_one
        self._combo.clear()
        n = len(ids)
        if len(created_ms) != n:
            raise ValueError("recall index columns: created_ms length")
        self._reserve(n)
        self.ids[:n] = ids
        self.live[:n] = True
        self.created[:n] = created_ms
        for j, f in enumerate(FIELDS):
            values, codes = labels[f]
            if len(codes) != n or (n and int(codes.max()) >= len(values)) or values[:1] != [None]:
                raise ValueError(f"recall index columns: bad {f} codes")
            self.tables[f] = LabelTable(values)
            if len(self.tables[f].codes) != len(values):
                raise ValueError(f"recall index columns: repeated {f} values")
            self.lab[:n, j] = codes
        rows = self.map.rows(np.ascontiguousarray(staged_ids, np.uint64))
        rows = rows[rows >= 0]
        self.staged[rows] = True
        self._arrive(rows)
        self.n_live = n
        self.n_staged = int(np.count_nonzero(self.staged[:n]))
