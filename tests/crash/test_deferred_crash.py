"""SIGKILL between a text and its vector (chitta/field/deferred.py).

A real writer process logs texts whose vectors the background embedder is held
from writing, acknowledges them, and is killed with SIGKILL. The reopened field
must hold every acknowledged text, embed each of the ones without a vector once
(at open), and leave the ones embedded before the kill alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _deferred_embedders import Gated

import chitta
from chitta.encode import HashingEmbedder
from chitta.errors import EmbedderMismatch

HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")

WRITER = r"""
import sys, time
from _deferred_embedders import Gated
import chitta
emb = Gated()
f = chitta.open(sys.argv[1], embedder=emb)
for i in range(20):
    f.remember(f"early note {i} about the garden")
assert f.wait_embedded(timeout=60)
print("EMBEDDED", flush=True)
emb.gate.clear()  # from here the model never returns: texts are logged, vectors are not
for i in range(30):
    mid = f.remember(f"late note {i} about the harbour", tags=["late"] if i % 2 else ())
    print("P", mid, flush=True)
print("READY", flush=True)
time.sleep(120)
"""


def _write_and_kill(tmp_path: Path, root: Path) -> list[int]:
    """Run WRITER until its late texts are acknowledged, SIGKILL it; their ids."""
    env = {**os.environ, "PYTHONPATH": HELPERS}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,  # outside the repo: the source tree would shadow the package
        env=env,
    )
    acked: list[int] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("P "):
            acked.append(int(line.split()[1]))
        if line.startswith("READY"):
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert len(acked) == 30
    return acked


def _records(root: Path) -> int:
    with chitta.open(root, read_only=True, embedder=None) as f:
        return f.stats().records_applied


def test_sigkill_between_text_and_vector(tmp_path):
    root = tmp_path / "f"
    acked = _write_and_kill(tmp_path, root)

    emb = Gated()
    with chitta.open(root, embedder=emb) as f:
        late = [f"late note {i} about the harbour" for i in range(30)]
        assert sorted(emb.texts()) == sorted(late)  # each left-over text embedded once, at open
        assert len(f) == 50
        ref = dict(zip(late, HashingEmbedder(64).embed(late)))
        for mid in acked:
            m = f.get(mid)
            assert np.allclose(f.core.index.vector(mid), ref[m.text], atol=1e-6)
        assert f.stats().embed_backlog == 0
    again = Gated()
    with chitta.open(root, embedder=again) as f:
        assert again.texts() == []  # the vectors were logged: nothing is embedded twice
        assert all(f.core.index.vector(m) is not None for m in f.ids())


def test_a_mismatched_embedder_on_reopen_with_a_backlog(tmp_path):
    root = tmp_path / "f"
    acked = _write_and_kill(tmp_path, root)
    before = _records(root)
    with pytest.raises(EmbedderMismatch):
        chitta.open(root, embedder=Gated(family="another-model"))
    assert _records(root) == before  # refused before anything was logged
    with chitta.open(root, embedder=None) as f:  # without a model: the texts stay as they are
        assert all(f.core.index.vector(m) is None for m in acked)
        assert len(f) == 50
    right = Gated()
    with chitta.open(root, embedder=right) as f:
        assert len(right.texts()) == 30  # the backlog, once, at this open
        assert all(f.core.index.vector(m) is not None for m in acked)
