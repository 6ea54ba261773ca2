"""The installed ``chitta`` console script, run as a real subprocess by the CLI tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def chitta_exe() -> str:
    """The console script beside this interpreter (a venv), else the one on PATH."""
    beside = Path(sys.executable).parent / "chitta"
    if beside.exists():
        return str(beside)
    found = shutil.which("chitta")
    assert found, "the chitta console script is not installed"
    return found


def run(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``chitta ARGS`` with a minimal environment (no model unless CHITTA_EMBEDDER says)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home or Path.home()),
        "CHITTA_EMBEDDER": os.environ.get("CHITTA_EMBEDDER", "none"),
    }
    if home is not None:
        env["CHITTA_HOME"] = str(home / "field")
    return subprocess.run(
        [chitta_exe(), *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )
