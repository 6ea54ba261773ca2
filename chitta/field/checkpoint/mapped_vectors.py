"""The vectors of a state-10 checkpoint, read in place (docs/FORMAT.md §8).

A ``vectors.ref`` says where each vector's float32 bytes lie in the log. Instead of
copying every row into a fresh matrix at open (154 MB of anonymous memory at 100K x
384-d, paid again as page faults on every cold start), the memories organ keeps a
``MappedVectors``: the segments that hold most rows mapped read-only (a bounded number:
each map keeps a file descriptor), the rows of the others copied, and the references. A row
is read when it is asked for (``get``, a recall hit, the next checkpoint); the recall
index normalises all of them straight from the mapping into its unit matrix.

The rows a handle writes itself join the same object (``extend``, D-088): its own
segment is mapped again when a row lies past the end of its map, as the file grows.
Segments are never rewritten under a reference (vector_refs.py), so the mapped bytes
stay valid for as long as the handle lives. The bulk passes give the pages they read
back to the page cache afterwards (``MADV_DONTNEED``): they do not stay in this
process's resident set.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.errors import CorruptionError

F32 = npt.NDArray[np.float32]

_BULK = 4096  # after reading this many rows (one take or several) the pages are given back
MAX_MAPS = 64  # segments kept mapped (each map holds a file descriptor); the rest are copied
MIN_MAPPED_ROWS = 1024  # a segment with fewer referenced rows is copied, not mapped


def _open_segment(root: Path, name: str, need: int) -> Any:
    """Segment ``name`` mapped read-only (b"" when empty), checked to hold ``need`` bytes."""
    if "/" in name or name in (".", ".."):
        raise CorruptionError(f"vector references name {name!r}, not a segment")
    try:
        with open(root / "segments" / name, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except OSError as exc:
        raise CorruptionError(
            f"vector references: segment {name} cannot be read ({exc.strerror})"
        ) from exc
    if need > size:
        if isinstance(data, mmap.mmap):
            data.close()
        raise CorruptionError(
            f"vector references: segment {name} is shorter ({size} bytes) than a row it holds"
        )
    return data


class MappedVectors:
    """``count`` rows of ``dim`` float32s: row i at byte ``offsets[i]`` of segment
    ``segments[seg[i]]``. Indexing (an int, or an array of ints) gives fresh float32
    copies, as indexing a matrix would."""

    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(
        self,
        root: Path,
        segments: list[str],
        seg: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.uint64],
        dim: int,
    ) -> None:
        """Map the segments that hold most rows (at most ``MAX_MAPS``, each holding at least
        ``MIN_MAPPED_ROWS``: a map keeps a file descriptor open), copy the rows of the others.
        CorruptionError when a segment is missing, is not a segment name, or is too short
        for a row it holds."""
        self.dim = int(dim)
        width = self.dim * 4
        used: npt.NDArray[np.uint32] = np.zeros(0, np.uint32)
        counts: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        if len(seg):
            used, counts = np.unique(seg, return_counts=True)
        if len(used) and int(used[-1]) >= len(segments):
            raise CorruptionError("vector references name a segment the state does not list")
        by_rows = sorted(zip(used.tolist(), counts.tolist()), key=lambda kc: (-kc[1], kc[0]))
        mapped = {k for k, c in by_rows[:MAX_MAPS] if c >= MIN_MAPPED_ROWS}
        maps: list[Any] = []
        names: dict[str, int] = {}  # segment name -> its index in maps (the mapped ones)
        at = np.ascontiguousarray(offsets, np.uint64).copy()
        local = np.zeros(len(seg), np.uint32)  # each row's buffer: an index into maps
        copied: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]] = []
        order = np.argsort(seg, kind="stable")  # the rows of each segment, in row order
        ends = np.cumsum(counts)
        for k, lo, hi in zip(used.tolist(), (ends - counts).tolist(), ends.tolist()):
            rows = order[lo:hi]
            data = _open_segment(root, segments[k], int(at[rows].max()) + width)
            if k in mapped:
                local[rows] = len(maps)
                names[segments[k]] = len(maps)
                maps.append(data)
            else:  # few rows: copied out, the file closed again
                part = np.empty((len(rows), width), np.uint8)
                _core._copy_rows(data, np.ascontiguousarray(at[rows]), part)
                copied.append((rows, part))
                if isinstance(data, mmap.mmap):
                    data.close()
        if copied:
            blob = np.concatenate([part.reshape(-1) for _rows, part in copied])
            start = 0
            for rows, part in copied:
                local[rows] = len(maps)
                at[rows] = start + np.arange(len(rows), dtype=np.uint64) * width
                start += part.size
            maps.append(blob)
        self._root = root
        self._maps = tuple(maps)
        self._names = names  # copied rows live in a blob, under no name
        self._n = len(offsets)
        self._segbuf = local
        self._atbuf = at
        self._unreleased = 0  # rows read since the pages were last given back

    @classmethod
    def empty(cls, root: Path, dim: int) -> MappedVectors:
        """No rows yet: ``extend`` adds them (the rows a handle writes itself, D-088)."""
        return cls(root, [], np.zeros(0, np.uint32), np.zeros(0, np.uint64), dim)

    @property
    def shape(self) -> tuple[int, int]:
        return (self._n, self.dim)

    @property
    def _seg(self) -> npt.NDArray[np.uint32]:
        return self._segbuf[: self._n]

    @property
    def _at(self) -> npt.NDArray[np.uint64]:
        return self._atbuf[: self._n]

    def extend(
        self,
        root: Path,
        segments: list[str] | tuple[str, ...],
        seg: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.uint64],
        *,
        min_new: int = 1,
    ) -> int | None:
        """Add rows whose bytes lie in the log at ``root``: row i in ``segments[seg[i]]``
        at byte ``offsets[i]`` (records in the files). Returns the first new row, or None
        and nothing added when some row cannot be referenced here: another log, no map
        left (``MAX_MAPS``), a segment not mapped yet that would hold fewer than
        ``min_new`` of these rows, or one that cannot be read that far."""
        m = len(offsets)
        if not m or self.dim <= 0 or Path(root) != Path(self._root) or len(seg) != m:
            return None
        width = self.dim * 4
        used, counts = np.unique(seg, return_counts=True)
        if int(used[-1]) >= len(segments):
            return None
        maps, names = list(self._maps), dict(self._names)
        local = np.empty(len(segments), np.uint32)
        for k, count in zip(used.tolist(), counts.tolist()):
            name = segments[k]
            need = int(offsets[seg == k].max()) + width
            slot = names.get(name)
            if slot is None or need > len(maps[slot]):
                if slot is None and (
                    count < min_new or sum(isinstance(d, mmap.mmap) for d in maps) >= MAX_MAPS
                ):
                    return None
                try:
                    data = _open_segment(Path(root), name, need)
                except CorruptionError:
                    return None
                if slot is None:
                    slot = len(maps)
                    maps.append(data)
                else:  # the segment grew past its map: mapped again (the old map goes with its users)
                    maps[slot] = data
                names[name] = slot
            local[k] = slot
        self._maps, self._names = tuple(maps), names
        first = self._n
        if first + m > len(self._atbuf):
            cap = max(first + m, 2 * len(self._atbuf), 1024)
            grown_seg = np.zeros(cap, np.uint32)
            grown_seg[:first] = self._segbuf[:first]
            grown_at = np.zeros(cap, np.uint64)
            grown_at[:first] = self._atbuf[:first]
            self._segbuf, self._atbuf = grown_seg, grown_at
        self._segbuf[first : first + m] = local[seg]
        self._atbuf[first : first + m] = offsets
        self._n = first + m
        return first

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes this process holds for the rows: the references, and the rows copied out
        of segments that hold few (the mapped rows stay in the log)."""
        held = sum(b.nbytes for b in self._maps if isinstance(b, np.ndarray))
        return int(self._segbuf.nbytes + self._atbuf.nbytes + held)

    def __getitem__(self, key: Any) -> F32:
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if not -len(self) <= i < len(self):
                raise IndexError("vector row out of range")
            out = np.empty((1, self.dim), np.float32)
            self._copy_into(slice(i % len(self), i % len(self) + 1), out)
            row: F32 = out[0]
            return row
        rows = np.asarray(key)
        if rows.dtype == np.bool_:
            rows = np.flatnonzero(rows)
        rows = rows.astype(np.int64, copy=False).reshape(-1)
        if len(rows) and (int(rows.min()) < -len(self) or int(rows.max()) >= len(self)):
            raise IndexError("vector row out of range")
        rows = rows % max(len(self), 1)
        out = np.empty((len(rows), self.dim), np.float32)
        self._copy_into(rows, out)
        self._unreleased += len(rows)
        if self._unreleased >= _BULK:  # many small reads (a coder's blocks) add up too
            self.release()
        return out

    def _copy_into(self, rows: Any, out: F32) -> None:
        flat = out.view(np.uint8).reshape(len(out), self.dim * 4)
        seg, at = self._seg[rows], self._at[rows]
        for k, data in enumerate(self._maps):
            mine = np.flatnonzero(seg == k) if len(self._maps) > 1 else None
            if mine is None:
                _core._copy_rows(data, np.ascontiguousarray(at), flat)
            elif len(mine):
                part = np.empty((len(mine), self.dim * 4), np.uint8)
                _core._copy_rows(data, np.ascontiguousarray(at[mine]), part)
                flat[mine] = part

    def native(self) -> tuple[tuple[Any, ...], npt.NDArray[np.uint32], npt.NDArray[np.uint64], int]:
        """What ``_core._build_memories`` takes as its base: the rows read in place."""
        return self._maps, self._seg, self._at, self.dim

    def crc(self) -> int:
        """CRC-32C of every row's bytes, in row order (what ``vectors.ref``'s state records)."""
        try:
            return int(_core._crc_rows_at(self._maps, self._seg, self._at, self.dim * 4))
        finally:
            self.release()

    def first_different(self, rows: F32) -> int:
        """The first row whose mapped bytes differ from ``rows``' (bit for bit, NaNs too), or -1."""
        flat = np.ascontiguousarray(rows, "<f4").view(np.uint8).reshape(len(rows), -1)
        if flat.shape != (len(self), self.dim * 4):
            raise ValueError(f"{flat.shape[0]} rows of {flat.shape[1]} bytes for {self.shape}")
        try:
            return int(_core._first_different_row_at(self._maps, self._seg, self._at, flat))
        finally:
            self.release()

    def unit_into(self, dst: F32) -> tuple[F32, int]:
        """``_core._unit_rows`` of the rows into ``dst``, read straight from the mapping."""
        try:
            norms, written = _core._unit_rows_at(self._maps, self._seg, self._at, dst)
            return norms, int(written)
        finally:
            self.release()

    def release(self) -> None:
        """Give the pages read so far back to the page cache (they are read again on use)."""
        self._unreleased = 0
        for data in self._maps:
            if isinstance(data, mmap.mmap):
                data.madvise(mmap.MADV_DONTNEED)
