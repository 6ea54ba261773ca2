"""Where checkpoints live and how one replaces another (docs/FORMAT.md).

``<root>/checkpoint/`` holds complete checkpoint directories ``ckpt-<clock
hex>-<random hex>/`` and ``CURRENT``, one line naming the live one. A new
checkpoint is written into ``tmp-<pid>-<random>/``, every file fsynced, the
directory renamed to its ``ckpt-`` name, and only then ``CURRENT`` replaced
(write ``CURRENT.tmp``, fsync, rename, fsync the directory). A crash at any
point leaves ``CURRENT`` naming either the old checkpoint or the new one,
never a mix. Writers of checkpoints take ``checkpoint/LOCK`` (flock, never
waited for); readers take nothing.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chitta.errors import CorruptionError, LockedError
from chitta.field.modes import dir_mode, file_mode, make_dir, restrict_tree

CHECKPOINT_DIR = "checkpoint"
CURRENT = "CURRENT"
KEEP = 2  # complete checkpoints kept: the live one and the one before (a reader may be loading it)
_NAME = re.compile(r"^ckpt-[0-9a-f]{16}-[0-9a-f]{8}$")


def checkpoint_dir(root: Path) -> Path:
    return root / CHECKPOINT_DIR


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current(root: Path) -> Path | None:
    """The live checkpoint directory, None when there is none. Raises
    CorruptionError when CURRENT is unreadable or names nothing valid."""
    pointer = checkpoint_dir(root) / CURRENT
    try:
        raw = pointer.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptionError(f"checkpoint/CURRENT: cannot read ({exc.strerror})") from exc
    name = raw.decode("ascii", "replace").strip()
    if len(raw) > 64 or not _NAME.match(name):
        raise CorruptionError(f"checkpoint/CURRENT does not name a checkpoint: {raw[:64]!r}")
    path = checkpoint_dir(root) / name
    if not path.is_dir():
        raise CorruptionError(f"checkpoint/CURRENT names {name}, which is missing")
    return path


@contextmanager
def writer_lock(root: Path) -> Iterator[None]:
    """Exclusive right to write checkpoints of this field; LockedError if taken."""
    base = checkpoint_dir(root)
    make_dir(base)
    fd = os.open(base / "LOCK", os.O_RDWR | os.O_CREAT, file_mode())
    os.fchmod(fd, file_mode())
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise LockedError("another process is writing a checkpoint of this field") from exc
        yield
    finally:
        os.close(fd)  # releases the flock


def new_temp_dir(root: Path) -> Path:
    """A fresh temporary directory for a checkpoint being written (holder of the lock only)."""
    base = checkpoint_dir(root)
    for stale in base.glob("tmp-*"):  # left by a writer that died: only lock holders create them
        shutil.rmtree(stale, ignore_errors=True)
    path = base / f"tmp-{os.getpid()}-{secrets.token_hex(4)}"
    path.mkdir(mode=dir_mode())
    return path


def publish(root: Path, temp: Path, clock: int) -> Path:
    """Make the complete checkpoint in ``temp`` the live one; returns its final path."""
    base = checkpoint_dir(root)
    restrict_tree(temp)  # sidecars come from several writers (native and Python)
    fsync_dir(temp)
    final = base / f"ckpt-{clock:016x}-{secrets.token_hex(4)}"
    os.rename(temp, final)
    fsync_dir(base)
    tmp_pointer = base / (CURRENT + ".tmp")
    with open(os.open(tmp_pointer, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, file_mode()), "wb") as f:
        os.fchmod(f.fileno(), file_mode())
        f.write(final.name.encode("ascii") + b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp_pointer, base / CURRENT)
    fsync_dir(base)
    return final


def prune(root: Path, live: Path) -> list[str]:
    """Remove complete checkpoints beyond the newest KEEP (never ``live``)."""
    base = checkpoint_dir(root)
    done = sorted(
        (p for p in base.iterdir() if p.is_dir() and _NAME.match(p.name) and p != live),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    removed = []
    for old in done[KEEP - 1 :]:
        shutil.rmtree(old, ignore_errors=True)
        removed.append(old.name)
    return removed


def age_seconds(path: Path) -> float:
    return max(0.0, time.time() - path.stat().st_mtime)
