"""A process killed with SIGKILL while it writes a checkpoint leaves a field that
opens from the old or the new checkpoint (never a mix, never a warning) with
every acknowledged write present."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from fieldtools import memory_dict

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import store

# Writes, then checkpoints, forever; prints each id once remember() returned.
# PAUSE_AT names a rename of the publish step (0: tmp -> ckpt-, 1: CURRENT.tmp ->
# CURRENT); the child announces it and sleeps there, before or after it.
CHILD = r"""
import os, sys, time
import chitta
from chitta.field.checkpoint import store
root, pause_at, when = sys.argv[1], int(sys.argv[2]), sys.argv[3]
real_rename, calls = os.rename, [0]
def rename(src, dst):
    n = calls[0]; calls[0] += 1
    if n == pause_at and when == "before":
        print("PAUSE", flush=True); time.sleep(60)
    real_rename(src, dst)
    if n == pause_at and when == "after":
        print("PAUSE", flush=True); time.sleep(60)
store.os.rename = rename
f = chitta.open(root, embedder="hashing")
i = 0
while True:
    for _ in range(25):
        print("P", f.remember(f"note {i} on topic {i % 11}"), flush=True)
        i += 1
    calls[0] = 0
    f.checkpoint()
    print("C", flush=True)
"""


def _spawn(root: Path, pause_at: int, when: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(pause_at), when],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root.parent,  # not the repo root: `python -c` would import the source tree
    )


def _read_until(proc: subprocess.Popen[str], stop: str, acked: list[int], deadline: float) -> None:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"child exited: {proc.stderr.read() if proc.stderr else ''}")
        if line.startswith("P "):
            acked.append(int(line.split()[1]))
        if line.split()[0] == stop:
            return
    raise AssertionError(f"no {stop} within the deadline")


def _acked_ids(out: str) -> list[int]:
    """The ids of the complete ``P <id>`` lines of a killed child's output (SIGKILL
    can cut the last line anywhere, even between the ``P`` and its id)."""
    complete = out.split("\n")[:-1]  # what follows the last newline is unfinished
    return [
        int(line.split()[1])
        for line in complete
        if line.startswith("P ") and len(line.split()) == 2
    ]


def _check(root: Path, acked: list[int]) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)  # old or new, never unusable
        with chitta.open(root, read_only=True, embedder="hashing") as f:
            loaded = f.checkpoint_loaded
            got = [memory_dict(m) for m in f.memories()]
    with chitta.open(root, read_only=True, embedder="hashing", load_checkpoint=False) as f:
        want = [memory_dict(m) for m in f.memories()]
    assert got == want
    assert set(acked) <= {m["id"] for m in got}
    return loaded


@pytest.mark.parametrize("pause_at", [0, 1])
@pytest.mark.parametrize("when", ["before", "after"])
def test_kill_at_each_step_of_publishing(tmp_path: Path, pause_at: int, when: str) -> None:
    root = tmp_path / "f"
    acked: list[int] = []
    # First a clean checkpoint, so that "old" exists; then pause inside the next one.
    proc = _spawn(root, pause_at=99, when="before")
    try:
        _read_until(proc, "C", acked, time.monotonic() + 120)
    finally:
        proc.kill()
        proc.communicate()
    first = _check(root, acked)
    assert first is not None
    proc = _spawn(root, pause_at, when)
    try:
        _read_until(proc, "PAUSE", acked, time.monotonic() + 120)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    loaded = _check(root, acked)
    published = pause_at == 1 and when == "after"
    assert (loaded != first) == published
    # The next checkpoint cleans up what the killed one left and works.
    with chitta.open(root, embedder="hashing") as f:
        f.checkpoint()
    assert not list(store.checkpoint_dir(root).glob("tmp-*"))
    assert _check(root, acked) not in (None, first)


def test_kill_at_random_moments(tmp_path: Path) -> None:
    root = tmp_path / "f"
    rng = random.Random(7)
    acked: list[int] = []
    loaded_from = set()
    for _ in range(6):
        proc = _spawn(root, pause_at=99, when="before")
        try:
            _read_until(proc, "P", acked, time.monotonic() + 120)
            time.sleep(rng.uniform(0.05, 1.5))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        acked.extend(_acked_ids(out))
        loaded_from.add(_check(root, acked))
    assert len(acked) > 50


def test_a_line_cut_by_the_kill_is_no_acknowledgement() -> None:
    assert _acked_ids("P 1\nP 2\nP ") == [1, 2]  # killed between the P and its id
    assert _acked_ids("P 1\nP 2\nP 3") == [
        1,
        2,
    ]  # the id may be cut too: no newline, no acknowledgement
    assert _acked_ids("P 1\nC x\nP 2\n") == [1, 2]
