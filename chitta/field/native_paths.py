"""Where the C API lives inside an installed chitta: header and shared library.

``libchitta_field.so`` is installed to ``chitta/lib/`` and ``chitta_field.h`` to
``chitta/include/chitta/`` beside the compiled ``chitta._core`` module. Both are
located from that module's ``__file__``, not this file's: an editable install
keeps the Python files in the source tree and the compiled files in the build
directory.

A C program builds with::

    cc prog.c -I"$(python -c 'import chitta; print(chitta.get_include())')" \\
       -L"$LIB" -lchitta_field -Wl,-rpath,"$LIB"   # LIB=chitta.get_lib_dir()

``c_build_command`` spells that command for a Python caller (the C API's test
and benchmark compile their programs with it); it is not part of chitta's API.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

__all__ = ["get_include", "get_lib_dir"]

_HEADER = Path("chitta") / "chitta_field.h"
_LIBRARY = "libchitta_field.so"


def _package_dir() -> Path:
    from chitta import _core  # the compiled module marks where the native files are

    return Path(_core.__file__).resolve().parent


def get_include() -> str:
    """Directory to pass as ``-I``: it holds ``chitta/chitta_field.h``.

    Raises ``FileNotFoundError`` if this chitta was installed without the header.
    """
    path = _package_dir() / "include"
    if not (path / _HEADER).is_file():
        raise FileNotFoundError(f"chitta_field.h is not installed (looked in {path / _HEADER})")
    return str(path)


def get_lib_dir() -> str:
    """Directory to pass as ``-L`` (and ``-Wl,-rpath``): it holds ``libchitta_field.so``.

    Raises ``FileNotFoundError`` if this chitta was installed without the library.
    """
    path = _package_dir() / "lib"
    if not (path / _LIBRARY).is_file():
        raise FileNotFoundError(f"{_LIBRARY} is not installed (looked in {path})")
    return str(path)


def c_build_command(
    source: str | Path, output: str | Path, flags: Sequence[str] = ()
) -> list[str] | None:
    """The command that compiles and links ``source`` into ``output`` against this
    chitta's ``libchitta_field`` with the first C compiler found (``$CC``, ``cc``,
    ``gcc``, ``clang``), ``flags`` before the files; None when there is none."""
    lib = get_lib_dir()
    compiler = next(
        (c for c in (os.environ.get("CC", ""), "cc", "gcc", "clang") if c and shutil.which(c)), None
    )
    if compiler is None:
        return None
    return [
        compiler,
        *flags,
        "-o",
        str(output),
        str(source),
        f"-I{get_include()}",
        f"-L{lib}",
        "-lchitta_field",
        f"-Wl,-rpath,{lib}",
    ]
