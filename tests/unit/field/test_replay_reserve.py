"""Replay's size hint (``reserve_puts``: the column organs sized once for all the
puts and vectors a replay brings) changes nothing but allocation: a field
replayed with it answers exactly like the same field replayed without it,
including a first run whose vectors are all zero (the width is decided by a
later run)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.field import replay

DIM = 16


def _write(root: Path) -> None:
    rng = np.random.default_rng(3)
    with chitta.open(root, embedder=None) as f:
        zeros = [{"text": f"zero {i}", "embedding": np.zeros(DIM, np.float32)} for i in range(5)]
        f.remember_many(zeros)  # no usable vector yet: the width is not decided by this run
        for g in range(4):
            f.remember_many(
                [
                    {
                        "text": f"group {g} memory {i} alpha",
                        "embedding": rng.standard_normal(DIM).astype(np.float32),
                    }
                    for i in range(300)
                ]
            )
        f.remember_many(
            [
                {"text": f"late {i}", "embedding": rng.standard_normal(DIM).astype(np.float32)}
                for i in range(7)
            ]
        )


def _answers(f: chitta.Field) -> tuple:
    rng = np.random.default_rng(9)
    probes = [rng.standard_normal(DIM).astype(np.float32) for _ in range(5)]
    mems = {
        m.id: (m.text, None if m.embedding is None else m.embedding.tobytes()) for m in f.memories()
    }
    hits = [
        [(h.id, h.score) for h in f.recall("alpha memory", vector=p, k=10, touch=False)]
        for p in probes
    ]
    return mems, hits, f.core.index.stats()


def test_reserve_hint_changes_nothing_but_allocation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    _write(root)
    with chitta.open(root, embedder=None, read_only=True, load_checkpoint=False) as f:
        with_hint = _answers(f)
        assert f.core.memories._s.vec_hint is None  # consumed by the first vector
    monkeypatch.setattr(replay, "_reserve_for", lambda core, decoded: None)
    with chitta.open(root, embedder=None, read_only=True, load_checkpoint=False) as g:
        without = _answers(g)
    assert (
        with_hint[0] == without[0] and with_hint[2] == without[2]
    )  # every memory and vector, bit for bit
    for got, want in zip(
        with_hint[1], without[1]
    ):  # the same hits; cosines may differ in the last bits
        assert [i for i, _ in got] == [
            i for i, _ in want
        ]  # (BLAS blocking follows the matrix's allocation)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-6)
    assert len(with_hint[0]) == 5 + 4 * 300 + 7
