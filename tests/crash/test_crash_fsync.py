"""Crash safety of the fsync group commit: a writer process with several
threads remembering at once (``durability="fsync"``, group commit, the
native ``remember`` path) is killed with SIGKILL at random moments. Each
thread prints an id only after ``remember`` returned it; after every kill the
field must reopen with every acknowledged id, with its text.

(SIGKILL tests the acknowledgement order, not power loss: the page cache
survives a killed process. ``test_log_put.py`` checks that every record went
through a counted fdatasync.)
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import chitta

WRITER = r"""
import sys, threading
import chitta
root, seed, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = chitta.open(root, durability="fsync", embedder=None, segment_bytes=8192)
lock = threading.Lock()

def work(t):
    i = 0
    while True:
        mid = f.remember(f"seed {seed} thread {t} note {i}")
        with lock:
            sys.stdout.write(f"{mid} {seed} {t} {i}\n")
            sys.stdout.flush()
        i += 1

for t in range(threads):
    threading.Thread(target=work, args=(t,), daemon=True).start()
threading.Event().wait()
"""


def _run_and_kill(root: Path, seed: int, threads: int, rng: random.Random) -> list[tuple[int, str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(seed), str(threads)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root.parent,  # not the repo root: `python -c` would import the source tree
    )
    assert proc.stdout is not None
    lines: list[str] = []
    done = threading.Event()
    want = rng.randint(50, 400)

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if len(lines) >= want:
                done.set()
        done.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    done.wait(timeout=60)
    time.sleep(rng.uniform(0, 0.03))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    reader.join(timeout=30)
    err = proc.stderr.read() if proc.stderr else ""
    proc.stdout.close()
    if proc.stderr:
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, err
    out = "".join(lines)
    complete = (
        out.splitlines() if out.endswith("\n") else out.splitlines()[:-1]
    )  # a cut line acknowledges nothing
    acked = []
    for line in complete:
        mid, s, t, i = line.split()
        acked.append((int(mid), f"seed {s} thread {t} note {i}"))
    return acked


def test_sigkill_of_a_threaded_fsync_writer_loses_no_acknowledged_remember(tmp_path: Path) -> None:
    root = tmp_path / "field"
    rng = random.Random(99)
    acked: dict[int, str] = {}
    for rnd in range(5):
        for mid, text in _run_and_kill(root, seed=rnd, threads=rng.choice([4, 16]), rng=rng):
            assert mid not in acked, "an id was acknowledged twice"
            acked[mid] = text
        with chitta.open(root, read_only=True, embedder=None) as f:
            live = set(f.ids())
            missing = set(acked) - live
            assert not missing, f"round {rnd}: acknowledged ids lost: {sorted(missing)[:5]}"
            for mid in list(acked)[::37]:
                assert f.get(mid).text == acked[mid]
    assert len(acked) > 200, "the writers acknowledged too little to make the test meaningful"
    report = chitta.field.inspect.verify(root)
    assert all(d["kind"] == "torn_tail" for d in report["damages"]), report["damages"]
