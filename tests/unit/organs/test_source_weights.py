"""Source weights: the Beta posterior per (domain, source), counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta


def test_beta_posterior_counts(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("a fact from grep", source_tool="grep", realm="code")
        b = f.remember("a note", realm="code")
        for useful in (True, True, False, True):
            f.call("feedback", memory_id=a, useful=useful)
        f.call("feedback", memory_id=b, useful=False, source="web", note="outdated")
        rows = f.call("source_weights", domain="code")["weights"]
        stats = f.call("feedback_stats")
    by = {r["source"]: r for r in rows}
    assert (by["grep"]["alpha"], by["grep"]["beta"]) == (4.0, 2.0)  # 3 useful + 1, 1 not + 1
    assert by["grep"]["weight"] == pytest.approx(4 / 6)
    assert (by["web"]["alpha"], by["web"]["beta"], by["web"]["weight"]) == (
        1.0,
        2.0,
        pytest.approx(1 / 3),
    )
    assert stats["feedback"] == 5 and stats["sources"] == 2
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:
        assert g.call("source_weights", domain="code")["weights"] == rows
        assert g.organ("source_weights").weight("code", "nowhere") == 0.5
