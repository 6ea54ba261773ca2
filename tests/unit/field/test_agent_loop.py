"""Feedback on what an agent used raises its recall precision (a short run of
benchmarks/sim_agent_loop.py: its 500-round figures are in the benchmark)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "sim_agent_loop.py"


def test_feedback_raises_precision_and_replays() -> None:
    spec = importlib.util.spec_from_file_location("sim_agent_loop", BENCH)
    assert spec is not None and spec.loader is not None
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    out = sim.run(rounds=40, topics=10, seed=3, window=15)
    assert out["p5_learned"] >= out["p5_static"] + 0.10
    assert out["deltas_inside_clamps"] and out["replay_same"]
    assert out["model_version"] == 40 * 5  # one snapshot per feedback that found its hit
