"""A checkpoint's posting index, checked at open and read on first use.

The posting lane has weight 0 in the default blend, so most opens never query
it; reading a million-code posting.idx costs seconds and ~0.5 KB per memory.
``PostingFile`` opens the file when the checkpoint is restored, checks every
byte against its trailing CRC-32C there (a damaged file fails the open, which
then ignores the checkpoint and replays the log, as an eager read would), and
keeps the descriptor: the index is read through it on first use, so a later
checkpoint that prunes this one (unlinking the file) cannot take it away.
Without ``/proc/self/fd`` (not Linux) the index is read at once.
"""

from __future__ import annotations

import mmap
import os
import struct
import weakref

from chitta.errors import CorruptionError
from chitta.field.checkpoint.format import crc32c
from chitta.organs.index.posting import PostingIndex

_FD_DIR = "/proc/self/fd"


class PostingFile:
    def __init__(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY)
        self._close = weakref.finalize(self, os.close, fd)
        self._fd = fd
        self._path = path
        try:
            self._check(fd, os.path.basename(path))
        except BaseException:
            self._close()
            raise

    @staticmethod
    def _check(fd: int, name: str) -> None:
        size = os.fstat(fd).st_size
        if size < 4:
            raise CorruptionError(f"posting index {name}: {size} bytes is shorter than its CRC")
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            (stored,) = struct.unpack_from("<I", data, size - 4)
            view = memoryview(data)
            try:
                ok = crc32c(view[: size - 4]) == stored
            finally:
                view.release()
            if not ok:
                raise CorruptionError(f"posting index {name}: checksum mismatch")

    @staticmethod
    def lazy_supported() -> bool:
        return os.path.isdir(_FD_DIR)

    def read(self) -> PostingIndex:
        """The index, read through the descriptor held since open. Once only: the
        descriptor is closed after the read, whether it succeeded or not."""
        if not self._close.alive:
            raise CorruptionError(
                f"posting index {os.path.basename(self._path)}: already read (or its read failed)"
            )
        try:
            return PostingIndex.load(
                f"{_FD_DIR}/{self._fd}" if self.lazy_supported() else self._path
            )
        finally:
            self._close()


def open_posting(path: str) -> PostingFile | PostingIndex:
    """``path`` checked and held for a read on first use, or (no /proc) read now."""
    if not PostingFile.lazy_supported():
        return PostingIndex.load(path)
    return PostingFile(path)
