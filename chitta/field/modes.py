"""File modes of everything chitta creates in a field (docs/FORMAT.md §1):
0600 files and 0700 directories, set exactly whatever the umask; with
``CHITTA_SHARED_GROUP=1`` in the environment 0660 and 02770, for a field a
group shares. The native writers (csrc/util/file.cc) read the same variable."""

from __future__ import annotations

import os
from pathlib import Path


def shared_group() -> bool:
    return os.environ.get("CHITTA_SHARED_GROUP") == "1"


def file_mode() -> int:
    return 0o660 if shared_group() else 0o600


def dir_mode() -> int:
    return 0o2770 if shared_group() else 0o700


def make_dir(path: Path) -> None:
    """mkdir with the field's directory mode (exist_ok; an existing one is left as it is)."""
    try:
        path.mkdir(mode=dir_mode())
    except FileExistsError:
        return
    os.chmod(path, dir_mode())


def restrict_tree(path: Path) -> None:
    """Give a directory written by several writers (a checkpoint) and all in it the field's modes."""
    os.chmod(path, dir_mode())
    for entry in path.rglob("*"):
        os.chmod(entry, dir_mode() if entry.is_dir() else file_mode())
