"""Three machines as three processes, each with its own directory and instance,
writing one bucket prefix; one killed with SIGKILL mid-run and restarted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from test_remote_field import replay, wait_for

import chitta

WORKER = str(Path(__file__).parent / "machine.py")


def _start(
    path: Path, url: str, name: str, count: int, mode: str, pause: float
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, WORKER, str(path), url, name, str(count), mode, str(pause)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


def _acks(proc: subprocess.Popen[str]) -> list[int]:
    out, _ = proc.communicate(timeout=120)
    return [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]


def test_three_machines_with_a_kill_9_converge(tmp_path: Path, remote_url: str) -> None:
    a = _start(tmp_path / "a", remote_url, "a", 300, "async", 0)
    b = _start(tmp_path / "b", remote_url, "b", 200, "sync", 0)
    c = _start(tmp_path / "c", remote_url, "c", 100000, "async", 0.0005)
    acked_c: list[int] = []
    assert c.stdout is not None
    while len(acked_c) < 150:  # c is killed while it writes and ships
        line = c.stdout.readline()
        assert line, "machine c stopped early"
        if line.startswith("ack "):
            acked_c.append(int(line.split()[1]))
    os.kill(c.pid, signal.SIGKILL)
    c.wait()
    c.stdout.close()
    acked = _acks(a) + _acks(b) + acked_c
    assert a.returncode == 0 and b.returncode == 0
    c2 = _start(
        tmp_path / "c", remote_url, "c-again", 20, "async", 0
    )  # restarted: ships c's orphan tail
    acked += _acks(c2)
    assert c2.returncode == 0
    handles = [chitta.open(tmp_path / m, remote=remote_url, embedder=None) for m in "abc"]
    try:

        def converged() -> bool:
            for h in handles:
                h.refresh()
            return len({len(h) for h in handles}) == 1 and all(i in handles[0] for i in acked)

        wait_for(converged, timeout=60)
    finally:
        for h in handles:
            h.close()
    replays = [replay(tmp_path / m) for m in "abc"]
    assert replays[0] == replays[1] == replays[2]
    ids = {mid for mid, _ in replays[0]}
    assert set(acked) <= ids  # every acknowledged record is on every machine
    assert len(ids) >= 300 + 200 + 150 + 20
