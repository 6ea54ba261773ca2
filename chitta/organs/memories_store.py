"""The memories organ's storage: one row per memory ever put, as columns.

``MemoryColumns`` holds growable numpy columns indexed by row (rows are given
in apply order by a native id -> row map, ``chitta.organs.index.row_map``), label
tables shared by the whole organ (per-row codes), the original texts in one
UTF-8 arena, vectors in one float32 matrix (plus the matrix restored from a
checkpoint's sidecar, read as it is), and small per-row dicts for what few
memories carry: tags, meta, artifacts, changed texts, odd-width vectors.
No logic about ops: ``chitta/organs/memories.py`` applies them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.field.checkpoint.mapped_vectors import MappedVectors
from chitta.organs.log_place import LogPlace

_ONE_SEG = np.zeros(1, np.uint32)

# Per-row columns: name -> dtype. Row r of each belongs to the memory with row r.
COLUMNS: dict[str, Any] = {
    "created": np.int64,
    "written": np.int64,
    "updated": np.int64,
    "last_access": np.int64,
    "deleted": np.int64,  # when forgotten (meaningful where dead)
    "dead": np.bool_,
    "confidence": np.float64,
    "strength": np.float64,
    "decay": np.float64,
    "tier": np.int64,
    "access": np.int64,
    "kind": np.uint32,  # label codes (LabelTable)
    "realm": np.uint32,
    "session": np.uint32,
    "source_tool": np.uint32,
    "harness": np.uint32,
    "vec": np.int64,  # >= 0: row of `vecs`; <= -2: row -2 - v of `base`; -1: none (or in `odd`)
}
LABELS = ("kind", "realm", "session", "source_tool", "harness")


class LabelTable:
    """One label field's distinct values (None included), code -> value."""

    __slots__ = ("_objs", "codes", "values")

    def __init__(self, values: list[str | None] | None = None) -> None:
        self.values: list[str | None] = list(values or ())
        self.codes: dict[str | None, int] = {v: i for i, v in enumerate(self.values)}
        if len(self.codes) != len(self.values):
            raise ValueError("a label table repeats a value")
        self._objs: npt.NDArray[np.object_] | None = None

    def code(self, value: str | None) -> int:
        c = self.codes.get(value)
        if c is None:
            c = self.codes[value] = len(self.values)
            self.values.append(value)
            self._objs = None
        return c

    def lut(self, values: tuple[str | None, ...]) -> npt.NDArray[np.uint32]:
        """Organ codes of a run's values, by run code."""
        return np.fromiter(map(self.code, values), np.uint32, len(values))

    def objects(self) -> npt.NDArray[np.object_]:
        """The values as an object array (for vectorised code -> value lookups)."""
        if self._objs is None or len(self._objs) != len(self.values):
            objs = np.empty(len(self.values), object)
            objs[:] = self.values
            self._objs = objs
        return self._objs


class MemoryColumns:
    """Rows, columns, texts and vectors of every memory ever put."""

    def __init__(self) -> None:
        self.map = _core.RowMap()  # id -> row (chitta.organs.index.row_map.RowMap's native object)
        self.n = 0
        self.cap = 0
        self.c: dict[str, npt.NDArray[Any]] = {
            name: np.zeros(0, dt) for name, dt in COLUMNS.items()
        }
        self.labels = {name: LabelTable() for name in LABELS}
        self.arena = bytearray()  # the texts each memory was put with, back to back
        self.text_off = np.zeros(1, np.int64)  # (cap + 1,): row r's text is arena[off[r]:off[r+1]]
        self.texts: dict[int, str] = {}  # row -> current text, where an update changed it
        self.tags: dict[int, tuple[str, ...]] = {}
        self.meta: dict[int, dict[str, Any]] = {}
        self.put_meta: dict[
            int, dict[str, Any] | None
        ] = {}  # row -> the put's meta, where an update replaced it
        self.artifacts: dict[int, tuple[str, ...]] = {}
        self.odd: dict[
            int, bytes
        ] = {}  # row -> a vector not of the matrix width (or not whole floats)
        self.dim: int | None = None  # the matrix width (floats)
        self.vecs = np.zeros((0, 0), np.float32)  # growable; rows [0, nvec) used
        self.vec_hint: tuple[int, int] | None = (
            None  # (width, rows) a replay announced before the first vector
        )
        self.nvec = 0  # rows of `vecs` given out: applied, or claimed by a decoder
        # Claims: matrix rows handed to replay's put decoder to write a run's
        # vectors into, so that applying the run copies nothing (id(view) -> (view, first row)).
        self.claims: dict[int, tuple[npt.NDArray[np.float32], int]] = {}
        self.claimed = 0  # rows of the outstanding claims
        # A checkpoint's vectors, read as they are: vectors.emb's matrix, or a MappedVectors.
        self.base: Any = np.zeros((0, 0), np.float32)

    # ---- growing ---------------------------------------------------------------------
    def grow(self, k: int) -> int:
        """Make room for k more rows; returns the first new row (rows are not yet counted)."""
        need = self.n + k
        if need > self.cap:
            cap = max(need, self.cap * 2, 1024)
            n = self.n
            for name, col in self.c.items():
                fresh = np.empty(cap, col.dtype)
                fresh[:n] = col[:n]
                self.c[name] = fresh
            off = np.empty(cap + 1, np.int64)
            off[: n + 1] = self.text_off[: n + 1]
            self.text_off = off
            self.cap = cap
        return self.n

    def new_rows(self, start: int, k: int, created: Any) -> None:
        """Defaults of k fresh rows from ``start`` (a put's state before any change)."""
        c, end = self.c, start + k
        c["updated"][start:end] = created
        for name in ("last_access", "deleted", "tier", "access"):
            c[name][start:end] = 0
        c["dead"][start:end] = False
        c["decay"][start:end] = 0.0
        c["vec"][start:end] = -1

    def reserve_vectors(self, m: int, dim: int) -> None:
        """Room for m more vectors of width ``dim`` (one allocation, no doubling copies).
        Before the first vector (which decides the width) only remembered as a hint."""
        if self.dim is None:
            self.vec_hint = (dim, m)
            return
        used = self.nvec - self.claimed  # claimed rows are the announced vectors themselves
        if dim != self.dim or used + m <= len(self.vecs):
            return
        self._regrow(max(used + m, self.nvec))

    def claim_vectors(self, m: int, dim: int, expect: int) -> npt.NDArray[np.float32] | None:
        """Rows for a decoder to write m vectors of width ``dim`` into (None if the
        matrix has another width). ``expect``: vectors still to come in this replay,
        this claim's included (sizes the matrix once). The rows count as used from
        now on; ``take_claim`` of the very view returned settles them (no copy)."""
        if self.dim is None:
            self.dim = dim
            self.vecs = np.zeros((0, dim), np.float32)
        if dim != self.dim or m <= 0:
            return None
        first = self.nvec
        if first + m > len(self.vecs):
            self._regrow(max(first + m, first + expect, 2 * len(self.vecs), 256))
        view = self.vecs[first : first + m]
        self.nvec = first + m
        self.claims[id(view)] = (view, first)
        self.claimed += m
        return view

    def end_claims(self, mark: tuple[int, int | None] | None = None) -> None:
        """Forget outstanding claims (rows of puts the replay ignored stay unused).
        With ``mark`` (``(nvec, dim)`` before the claims), a replay that applied
        nothing gives their rows back."""
        if mark is not None and self.claimed == self.nvec - mark[0]:
            self.nvec, self.dim = mark
            if self.dim is None:
                self.vecs = np.zeros((0, 0), np.float32)
        self.claims.clear()
        self.claimed = 0

    def _regrow(self, rows: int) -> None:
        fresh = np.empty((rows, self.dim or 0), np.float32)
        fresh[: self.nvec] = self.vecs[: self.nvec]
        self.vecs = fresh

    def take_claim(self, mat: npt.NDArray[np.float32]) -> int | None:
        """If ``mat`` is a view ``claim_vectors`` gave out (its rows are already in the
        matrix), its first row; the claim is settled. Otherwise None."""
        claim = self.claims.get(id(mat))
        if claim is None or claim[0] is not mat:
            return None
        del self.claims[id(mat)]
        self.claimed -= len(mat)
        return claim[1]

    def add_vectors(self, mat: npt.NDArray[np.float32]) -> int:
        """Append matrix rows (of width ``dim``); returns the first one's index."""
        m = len(mat)
        first = self.nvec
        hint, self.vec_hint = self.vec_hint, None
        if hint is not None and hint[0] == self.dim:
            self.reserve_vectors(hint[1], hint[0])
        if first + m > len(self.vecs):
            self._regrow(max(first + m, 2 * len(self.vecs), 256))
        self.vecs[first : first + m] = mat
        self.nvec = first + m
        return first

    def can_reference(self) -> bool:
        """Whether vectors can be added as references (not with a state-9 sidecar matrix as base)."""
        return isinstance(self.base, MappedVectors) or not len(self.base)

    def add_refs(
        self,
        root: Path,
        segments: list[str] | tuple[str, ...],
        seg: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.uint64],
        dim: int,
        min_new: int = 1,
    ) -> int | None:
        """Rows of width ``dim`` whose bytes lie in the log at ``root`` (row i in segment
        ``segments[seg[i]]`` at byte ``offsets[i]``), added to ``base`` as references
        instead of copies (D-088); returns the first one's base row, or None (then copy
        them): another width, a state-9 sidecar matrix as base, or a segment that cannot
        be mapped (``MappedVectors.extend``)."""
        if self.dim is None:
            self.dim = dim
            self.vecs = np.zeros((0, dim), np.float32)
        if dim != self.dim or not self.can_reference():
            return None
        if not isinstance(self.base, MappedVectors):
            self.base = MappedVectors.empty(root, dim)
        return self.base.extend(root, segments, seg, offsets, min_new=min_new)

    def set_vector(self, row: int, blob: bytes, place: LogPlace | None = None) -> None:
        """Row ``row``'s vector is now ``blob`` (little-endian float32 bytes); ``place``:
        where the log holds those bytes, if this handle just appended them."""
        width = len(blob)
        if self.dim is None and width and not width % 4:
            self.dim = width // 4
            self.vecs = np.zeros((0, self.dim), np.float32)
        if self.dim is not None and width == 4 * self.dim:
            at = None if place is None else place.at.get(id(blob))
            first = None
            if place is not None and at is not None:
                one = np.array([at], np.uint64)
                first = self.add_refs(place.root, (place.segment,), _ONE_SEG, one, self.dim)
            if first is not None:
                self.c["vec"][row] = -2 - first
            else:
                self.c["vec"][row] = self.add_vectors(
                    np.frombuffer(blob, "<f4").reshape(1, self.dim)
                )
            self.odd.pop(row, None)
        else:
            self.c["vec"][row] = -1
            self.odd[row] = blob

    def vector(self, row: int) -> npt.NDArray[np.float32] | None:
        """A copy of row ``row``'s current vector, or None."""
        v = int(self.c["vec"][row])
        if v >= 0:
            return np.array(self.vecs[v], np.float32)
        if v <= -2:
            return np.array(self.base[-2 - v], np.float32)
        blob = self.odd.get(row)
        return None if blob is None else np.frombuffer(blob, "<f4").astype(np.float32)

    def text(self, row: int) -> str:
        changed = self.texts.get(row)
        if changed is not None:
            return changed
        return self.put_text(row)

    def put_text(self, row: int) -> str:
        off = self.text_off
        return self.arena[int(off[row]) : int(off[row + 1])].decode()

    def put_texts(self, rows: list[int]) -> list[str]:
        off, arena = self.text_off, self.arena
        starts, ends = off[rows].tolist(), off[[r + 1 for r in rows]].tolist()
        return [arena[a:b].decode() for a, b in zip(starts, ends)]

    def label(self, name: str, row: int) -> str | None:
        return self.labels[name].values[int(self.c[name][row])]

    def gather_vectors(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The matrix vectors of ``rows`` (every one must have a matrix or base vector); a
        read-only use only: rows that run in matrix order come back as a view of it."""
        v = self.c["vec"][rows]
        if (
            len(v)
            and v[0] >= 0
            and int(v[-1]) - int(v[0]) == len(v) - 1
            and bool(np.all(np.diff(v) == 1))
        ):
            return self.vecs[
                int(v[0]) : int(v[0]) + len(v)
            ]  # rows in matrix order: a view, no copy
        out = np.empty((len(rows), self.dim or 0), np.float32)
        own = v >= 0
        if own.all():
            np.take(self.vecs, v, axis=0, out=out)  # no temporary of the gathered rows
        elif own.any():
            out[own] = self.vecs[v[own]]
        if not own.all():
            out[~own] = self.base[-2 - v[~own]]
        return out

    # ---- checkpoints ---------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The columns as a msgpack-able map (vectors excluded: see MemoriesOrgan.snapshot)."""
        n = self.n
        return {
            "rows": n,
            "ids": np.ascontiguousarray(self.map.ids(), "<u8").tobytes(),
            "columns": {
                name: np.ascontiguousarray(
                    col[:n], np.dtype(COLUMNS[name]).newbyteorder("<")
                ).tobytes()
                for name, col in self.c.items()
                if name != "vec"
            },
            "labels": {name: table.values for name, table in self.labels.items()},
            "text": bytes(self.arena),
            "text_offsets": np.ascontiguousarray(self.text_off[: n + 1], "<i8").tobytes(),
            "texts": [[r, t] for r, t in self.texts.items()],
            "tags": [[r, list(t)] for r, t in self.tags.items()],
            "meta": [[r, m] for r, m in self.meta.items()],
            "put_meta": [[r, m] for r, m in self.put_meta.items()],
            "artifacts": [[r, list(a)] for r, a in self.artifacts.items()],
        }

    def load(self, state: dict[str, Any]) -> None:
        """Fill this (fresh) store from ``state``; ValueError when it does not add up."""
        n = int(state["rows"])
        ids = np.frombuffer(state["ids"], "<u8")
        if len(ids) != n:
            raise ValueError("memories: ids do not match the row count")
        fresh = self.map.add(np.ascontiguousarray(ids, np.uint64))
        if not bool(fresh.all()):
            raise ValueError("snapshot repeats a memory id")
        self.grow(n)
        for name, dt in COLUMNS.items():
            if name == "vec":
                self.c[name][:n] = -1
                continue
            col = np.frombuffer(state["columns"][name], np.dtype(dt).newbyteorder("<"))
            if len(col) != n:
                raise ValueError(f"memories: column {name} has {len(col)} rows, not {n}")
            self.c[name][:n] = col
        self.labels = {name: LabelTable(list(state["labels"][name])) for name in LABELS}
        for name in LABELS:
            if n and int(self.c[name][:n].max()) >= len(self.labels[name].values):
                raise ValueError(f"memories: a {name} code is outside its table")
        self.arena = bytearray(state["text"])
        off = np.frombuffer(state["text_offsets"], "<i8")
        if (
            len(off) != n + 1
            or off[0] != 0
            or off[-1] != len(self.arena)
            or np.any(np.diff(off) < 0)
        ):
            raise ValueError("memories: text offsets do not match the arena")
        self.text_off[: n + 1] = off
        self.n = n

        def rows(pairs: list[list[Any]]) -> list[list[Any]]:
            for pair in pairs:
                if not 0 <= int(pair[0]) < n:
                    raise ValueError("memories: a row number is out of range")
            return pairs

        self.texts = {int(r): str(t) for r, t in rows(state["texts"])}
        self.tags = {int(r): tuple(t) for r, t in rows(state["tags"])}
        self.meta = {int(r): m for r, m in rows(state["meta"])}
        self.put_meta = {int(r): m for r, m in rows(state["put_meta"])}
        self.artifacts = {int(r): tuple(a) for r, a in rows(state["artifacts"])}

    def adopt_base(self, ids: npt.NDArray[np.uint64], vecs: Any) -> None:
        """Use a checkpoint's vectors (ids[i] -> vecs[i]: the sidecar matrix, or the rows
        mapped in place from the log, MappedVectors) as the rows' vectors."""
        if not len(ids):
            return
        rows = self.map.rows(np.ascontiguousarray(ids, np.uint64))
        if np.any(rows < 0):
            raise ValueError("the vector sidecar names a memory the snapshot lacks")
        self.base = vecs
        self.dim = int(vecs.shape[1])
        self.vecs = np.zeros((0, self.dim), np.float32)
        self.c["vec"][rows] = -2 - np.arange(len(ids), dtype=np.int64)
