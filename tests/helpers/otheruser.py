"""A second local user for the security tests: created with ``useradd`` when the
tests run as root (skipped with the reason otherwise), and code run as that user
(the system Python, standard library only)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys

import pytest

NAME = "chitta-sec-other"


def other_user() -> tuple[int, int]:
    """(uid, gid) of the second user; skips the test when it cannot exist here."""
    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("needs root to create a second local user (useradd)")
    try:
        pw = pwd.getpwnam(NAME)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("useradd is not installed: no second local user can be made")
        done = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", NAME],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0, 9):  # 9: it exists (made by a parallel run)
            pytest.skip(f"useradd failed: {done.stderr.strip()}")
        pw = pwd.getpwnam(NAME)
    return pw.pw_uid, pw.pw_gid


def python_for_others() -> str:
    """A Python interpreter another user can run (the venv may sit in a private directory)."""
    for exe in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        if os.path.exists(exe) and os.access(exe, os.X_OK):
            return exe
    return sys.executable


def run_as(uid: int, gid: int, code: str, **popen: object) -> subprocess.Popen[bytes]:
    """``code`` in a Python process running as (uid, gid), stdout/stderr piped."""
    return subprocess.Popen(
        [python_for_others(), "-I", "-c", code],
        user=uid,
        group=gid,
        extra_groups=[],
        cwd="/",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.PIPE,
        **popen,
    )  # type: ignore[call-overload]
