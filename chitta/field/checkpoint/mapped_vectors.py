"""The vectors of a state-10 checkpoint, read in place (docs/FORMAT.md §8).

A ``vectors.ref`` says where each vector's float32 bytes lie in the log. Instead of
copying every row into a fresh matrix at open (154 MB of anonymous memory at 100K x
384-d, paid again as page faults on every cold start), the memories organ keeps a
``MappedVectors``: the referenced segments mapped read-only and the references. A row
is read when it is asked for (``get``, a recall hit, the next checkpoint); the recall
index normalises all of them straight from the mapping into its unit matrix.

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

_BULK = 4096  # a take of at least this many rows gives the pages it read back afterwards


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
        """Map every segment a row refers to. CorruptionError when one is missing, is not
        a segment name, or is too short for a row it holds."""
        self.dim = int(dim)
        self.shape = (len(offsets), self.dim)
        width = self.dim * 4
        used = np.unique(seg) if len(seg) else np.zeros(0, np.uint32)
        if len(used) and int(used[-1]) >= len(segments):
            raise CorruptionError("vector references name a segment the state does not list")
        maps: list[Any] = []
        local = np.zeros(len(segments), np.uint32)  # state's segment index -> index into maps
        for k in used.tolist():
            name = segments[k]
            if "/" in name or name in (".", ".."):
                raise CorruptionError(f"vector references name {name!r}, not a segment")
            path = root / "segments" / name
            try:
                with open(path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            except OSError as exc:
                raise CorruptionError(
                    f"vector references: segment {name} cannot be read ({exc.strerror})"
                ) from exc
            rows = seg == k
            if int(offsets[rows].max()) + width > size:
                raise CorruptionError(
                    f"vector references: segment {name} is shorter ({size} bytes) than a row it holds"
                )
            local[k] = len(maps)
            maps.append(data)
        self._maps = tuple(maps)
        self._seg = np.ascontiguousarray(local[seg] if len(seg) else seg, np.uint32)
        self._at = np.ascontiguousarray(offsets, np.uint64)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes this process holds for the rows: the references (the rows stay in the log)."""
        return int(self._seg.nbytes + self._at.nbytes)

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
        if len(rows) >= _BULK:
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
        for data in self._maps:
            if isinstance(data, mmap.mmap):
                data.madvise(mmap.MADV_DONTNEED)
