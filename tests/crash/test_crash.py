"""Crash safety: a writer process killed with SIGKILL at random moments.

The child prints each id only after ``remember`` (or ``remember_many`` /
``forget``) has returned, i.e. after the write was acknowledged. After every
kill the field must reopen with every acknowledged memory present, every
acknowledged forget applied, and each atomic group either whole or absent.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import chitta

WRITER = r"""
import random, sys
import chitta
root, seed, named = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
rng = random.Random(seed)
f = chitta.open(root, instance_id=4242 if named else None, segment_bytes=16384)
mine = []
group = 0
while True:
    r = rng.random()
    if r < 0.15:
        group += 1
        tag = f"{seed}-{group}"
        size = rng.randint(2, 6)
        ids = f.remember_many([{"text": f"group {tag} item {k}", "meta": {"group": tag, "size": size}}
                               for k in range(size)])
        print("G", tag, size, *ids, flush=True)
    elif r < 0.25 and mine:
        victim = mine.pop(rng.randrange(len(mine)))
        f.forget(victim)
        print("F", victim, flush=True)
    else:
        mid = f.remember(f"note {seed} {len(mine)} " + "x" * rng.randint(0, 300))
        mine.append(mid)
        print("P", mid, flush=True)
"""


def _run_and_kill(root: Path, seed: int, named: bool, rng: random.Random) -> list[list[str]]:
    """Start a writer, let it acknowledge a random number of writes (so a slow,
    loaded machine still gets real work done before the kill), then SIGKILL it
    at a random moment shortly after."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(seed), "1" if named else "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root.parent,  # not the repo root: `python -c` would import the source tree
    )
    assert proc.stdout is not None
    lines: list[str] = []
    done = threading.Event()
    want = rng.randint(20, 200)

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if len(lines) >= want:
                done.set()
        done.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    done.wait(timeout=60)
    time.sleep(rng.uniform(0, 0.05))  # kill somewhere in the middle of further writes
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    reader.join(timeout=30)
    err = proc.stderr.read() if proc.stderr else ""
    proc.stdout.close()
    if proc.stderr:
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, err
    out = "".join(lines)
    parsed = [line.split() for line in out.splitlines()]
    # The last line may be cut mid-print by the kill; an incomplete line is no acknowledgement.
    if out and not out.endswith("\n"):
        parsed = parsed[:-1]
    return parsed


def test_sigkill_at_random_moments_loses_no_acknowledged_write(tmp_path: Path) -> None:
    root = tmp_path / "field"
    rng = random.Random(1234)
    present: set[int] = set()
    forgotten: set[int] = set()
    groups: dict[str, tuple[int, list[int]]] = {}
    rounds = 12
    for rnd in range(rounds):
        lines = _run_and_kill(root, seed=rnd, named=rnd % 2 == 0, rng=rng)
        for line in lines:
            if line[0] == "P":
                present.add(int(line[1]))
            elif line[0] == "F":
                forgotten.add(int(line[1]))
                present.discard(int(line[1]))
            elif line[0] == "G":
                tag, size, ids = line[1], int(line[2]), [int(x) for x in line[3:]]
                assert len(ids) == size
                groups[tag] = (size, ids)
                present.update(ids)
        # A forget can land without being acknowledged (killed before the print):
        # such an id may be absent, but only if its DeleteMemory is in the log.
        deleted_in_log = {
            r["fields"]["id"]
            for r in chitta.field.inspect.iter_records(root)
            if r["op"] == "DeleteMemory"
        }
        with chitta.open(root, read_only=True) as f:
            live = set(f.ids())
            missing = present - live - deleted_in_log
            assert not missing, f"round {rnd}: acknowledged ids lost: {sorted(missing)[:5]}"
            assert not (forgotten & live), f"round {rnd}: acknowledged forgets not applied"
            by_group: dict[str, list[chitta.Memory]] = defaultdict(list)
            for m in f.memories():
                if m.meta and "group" in m.meta:
                    by_group[m.meta["group"]].append(m)
            for tag, members in by_group.items():
                # Group members are never forgotten by the writer, so all must be here.
                assert len(members) == members[0].meta["size"], f"group {tag} half-applied"  # type: ignore[index]
    assert len(present) > 100, "the writers acknowledged too little to make the test meaningful"
    report = chitta.field.inspect.verify(root)
    assert all(d["kind"] == "torn_tail" for d in report["damages"]), report["damages"]
