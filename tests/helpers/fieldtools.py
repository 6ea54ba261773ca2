"""Helpers for tests: damage a file, snapshot a field, run a Python child."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import chitta


def segment_files(root: Path) -> list[Path]:
    return sorted((Path(root) / "segments").glob("*.seg"))


def flip_byte(path: Path, offset: int, mask: int = 0x40) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([b ^ mask]))


def write_at(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def truncate_by(path: Path, n: int) -> None:
    size = path.stat().st_size
    os.truncate(path, size - n)


def memory_dict(m: chitta.Memory) -> dict[str, Any]:
    d = {f: getattr(m, f) for f in m.__dataclass_fields__}
    if d["embedding"] is not None:
        d["embedding"] = d["embedding"].tolist()
    return d


def snapshot(root: Path) -> dict[str, Any]:
    """Everything observable about a field: its memories (by reopening it
    read-only) and the exact bytes of its segments."""
    with chitta.open(root, read_only=True) as f:
        memories = sorted((memory_dict(m) for m in f.memories()), key=lambda d: d["id"])
    files = {p.name: p.read_bytes() for p in segment_files(root)}
    return {"memories": memories, "segments": files}


def run_python(
    code: str, *args: str, cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -c code``. ``cwd`` must not be the repository root, where
    ``python -c`` would import the source tree instead of the installed package."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )
