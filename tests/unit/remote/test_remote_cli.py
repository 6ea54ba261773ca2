"""``chitta --remote URL`` and ``$CHITTA_REMOTE`` through real ``chitta`` processes:
remember on one machine (its own directory), recall and get on another."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from seaweed import Seaweed


def _exe() -> str:
    beside = Path(sys.executable).parent / "chitta"
    found = str(beside) if beside.exists() else shutil.which("chitta")
    assert found, "the chitta console script is not installed"
    return found


def _run(
    sw: Seaweed, home: Path, *args: str, remote: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "CHITTA_EMBEDDER": "none", **sw.env()}
    if remote is not None:
        env["CHITTA_REMOTE"] = remote
    r = subprocess.run(
        [_exe(), "--path", str(home / "field"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r


def test_remember_on_one_machine_recall_on_another(
    tmp_path: Path, s3env: Seaweed, remote_url: str
) -> None:
    a, b = tmp_path / "machine-a", tmp_path / "machine-b"
    out = _run(s3env, a, "--remote", remote_url, "remember", "the build box has 64 cores", "--json")
    mid = json.loads(out.stdout)["id"]
    _run(s3env, a, "remember", "deploys need the VPN", remote=remote_url)  # $CHITTA_REMOTE
    hits = json.loads(
        _run(s3env, b, "--remote", remote_url, "recall", "build box cores", "--json").stdout
    )["hits"]
    assert hits and hits[0]["id"] == mid and "64 cores" in hits[0]["text"]
    got = json.loads(_run(s3env, b, "get", str(mid), "--json", remote=remote_url).stdout)
    assert got["text"] == "the build box has 64 cores"
    stats = json.loads(_run(s3env, b, "--remote", remote_url, "stats", "--json").stdout)
    assert stats["memories"] == 2
    # b's directory is a complete local field now: it reads without the remote too
    local = json.loads(_run(s3env, b, "stats", "--json").stdout)
    assert local["memories"] == 2 and not (a / "field").samefile(b / "field")
