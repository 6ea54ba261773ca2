"""SIGKILL during big remember_many calls with caller vectors (chitta/field/deferred_codes.py).

A real writer process ingests batches of 1,000 memories back to back and prints each
acknowledged batch; it is killed with SIGKILL at a random moment, mid-batch or while its
background coder logs sparse codes (a step is one Batch: all of its codes or
none). The reopened field must hold every acknowledged
batch whole, any other batch whole or not at all, code every memory the kill left
without a code (once), and replay the same state twice.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import chitta
from chitta.field import deferred_codes

WRITER = r"""
import sys, time
import numpy as np
import chitta
f = chitta.open(sys.argv[1], embedder=None)
rng = np.random.default_rng(0)
for b in range(int(sys.argv[2])):
    vecs = rng.standard_normal((1000, 384)).astype(np.float32)
    f.remember_many([{"text": f"batch {b} item {i}", "embedding": v} for i, v in enumerate(vecs)])
    print("ACK", b, flush=True)
time.sleep(120)  # the background coder logs codes meanwhile
"""


def _state(f) -> dict:
    core = f.core
    return {
        mid: (f.get(mid).text, core.index.code_features(mid), core.index.code_version(mid))
        for mid in sorted(core.memories.live_ids())
    }


def _run_and_kill(tmp_path: Path, root: Path, batches: int, after: int, delay: float) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(batches)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,  # outside the repo: the source tree would shadow the package
    )
    acked = -1
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ACK"):
            acked = int(line.split()[1])
            if acked >= after:
                break
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    return acked


def test_sigkill_mid_ingest_all_or_none(tmp_path):
    rnd = random.Random(11)
    # two kills mid-ingest, one while the coder logs the codes of a finished ingest
    for trial, (batches, delay) in enumerate(
        [(40, rnd.uniform(0.0, 0.3)), (40, rnd.uniform(0.0, 0.3)), (3, rnd.uniform(0.3, 1.5))]
    ):
        root = tmp_path / f"f{trial}"
        acked = _run_and_kill(tmp_path, root, batches, after=2, delay=delay)
        with chitta.open(root, embedder=None) as f:
            per_batch: dict[int, int] = {}
            for mid in f.core.memories.live_ids():
                b = int(f.get(mid).text.split()[1])
                per_batch[b] = per_batch.get(b, 0) + 1
            assert all(per_batch.get(b) == 1000 for b in range(acked + 1)), per_batch
            assert all(count == 1000 for count in per_batch.values()), per_batch
            # what the kill left uncoded is coded now, each memory once
            assert f.wait_embedded(timeout=300)
            ids = list(f.core.memories.live_ids())
            assert all(f.core.index.code_features(mid) for mid in ids)
            assert len(f.core.index.ids_without_code()) == 0
            live = _state(f)
        states = []
        for _ in range(2):
            with chitta.open(root, embedder=None, load_checkpoint=False) as g:
                assert deferred_codes.pending(g.core) == 0  # nothing left to derive
                states.append(_state(g))
        assert states[0] == states[1] == live
