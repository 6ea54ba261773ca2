"""`chitta get | forget | stats` use the daemon serving the field when one answers at the
field's socket (no open, no replay), and open the field themselves otherwise (a real
`chitta serve` process; its writer instance in the answer shows which one answered)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from clitools import chitta_exe
from daemontools import DaemonProcess, child_env

import chitta
from chitta.server.daemon import default_socket


@pytest.fixture()
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="ccd", dir="/tmp"))  # short: socket paths <= 108 bytes
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _cli(field: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chitta_exe(), "--path", str(field), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=field.parent,
        env=child_env(**env),
        check=False,
    )


def test_get_forget_stats_go_through_a_running_daemon(tmp_path: Path, runtime: Path) -> None:
    field = tmp_path / "f"
    with chitta.open(field, embedder=None) as f:
        a, b = f.remember("kept"), f.remember("to forget")
    sock = default_socket(field)
    sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    daemon = DaemonProcess(field, sock)
    try:
        served = json.loads(_cli(field, "stats", "--json").stdout)
        assert served["instance_id"] == daemon.info["instance_id"]  # the daemon answered
        assert _cli(field, "forget", str(b)).returncode == 0
        assert json.loads(_cli(field, "get", str(a), "--json").stdout)["text"] == "kept"
        assert _cli(field, "get", str(b)).returncode == 5  # the daemon's field forgot it
        opened = json.loads(_cli(field, "stats", "--json", CHITTA_NO_DAEMON="1").stdout)
        assert opened["instance_id"] is None and opened["memories"] == 1  # read-only open
    finally:
        daemon.close()
    with chitta.open(field, read_only=True, embedder=None) as f:
        assert a in f and b not in f


def test_a_stale_socket_falls_back_to_opening_the_field(tmp_path: Path, runtime: Path) -> None:
    field = tmp_path / "f"
    with chitta.open(field, embedder=None) as f:
        a = f.remember("still readable")
    sock = default_socket(field)
    sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock.touch(mode=0o600)  # left by a killed daemon: nothing listens
    r = _cli(field, "get", str(a), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["text"] == "still readable"
    assert "not using the daemon" in r.stderr
