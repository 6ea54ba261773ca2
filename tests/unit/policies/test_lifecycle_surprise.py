"""Surprise: high reconstruction error slows decay, low speeds it; the rates are
logged (UpdateState decay_rate) and drive the demotion tiers."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from _lifecycle_helpers import Clock, assert_replays_same, open_field

import chitta
from chitta.policies.surprise import decay_multiplier


def test_rule_direction_and_anchors() -> None:
    assert decay_multiplier(0.0) == 2.0
    assert decay_multiplier(0.5) == 1.0
    assert decay_multiplier(1.0) == 0.5
    grid = [decay_multiplier(s) for s in np.linspace(0, 1, 21)]
    assert all(a > b for a, b in itertools.pairwise(grid))  # more surprise: slower decay
    assert decay_multiplier(-3) == 2.0 and decay_multiplier(7) == 0.5
    assert decay_multiplier(float("nan")) == 1.0


def _field_with_vectors(
    tmp_path: Path, clock: Clock, n: int = 30
) -> tuple[chitta.Field, list[int], np.ndarray]:
    f = open_field(tmp_path / "f", clock, embedder=None)
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((n, 32)).astype(np.float32)
    ids = f.remember_many([{"text": f"memory {i}", "embedding": v} for i, v in enumerate(vecs)])
    return f, ids, vecs


def test_surprise_pass_sets_rates_from_the_encoder(tmp_path: Path) -> None:
    f, ids, vecs = _field_with_vectors(tmp_path, Clock())
    encoder = f.core.encoder_organ.encoder
    assert encoder is not None
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    oracle = encoder.encode(unit).surprise  # the sparse encoder's own report
    assert f.surprise_pass() == len(ids)
    rates = np.array([f.get(i).decay_rate for i in ids])
    assert rates == pytest.approx([decay_multiplier(float(s)) for s in oracle], rel=1e-5)
    order = np.argsort(oracle)
    assert np.all(np.diff(rates[order]) <= 1e-9)  # higher surprise, lower decay rate
    assert f.surprise_pass() == 0  # unchanged: nothing re-logged
    assert_replays_same(f)


def test_high_surprise_memory_demotes_later(tmp_path: Path) -> None:
    clock = Clock()
    f, ids, _ = _field_with_vectors(tmp_path, clock)
    f.maintain()
    rates = {i: f.get(i).decay_rate for i in ids}
    fast = max(ids, key=rates.__getitem__)  # least surprising
    slow = min(ids, key=rates.__getitem__)  # most surprising
    assert rates[fast] > 1.05 * rates[slow]
    clock.advance(7.0 / rates[fast] * 1.02)  # just past the first threshold for the fast one
    f.demote_pass()
    assert f.get(fast).tier == 1
    assert f.get(slow).tier == 0
