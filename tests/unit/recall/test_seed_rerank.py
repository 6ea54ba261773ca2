"""Seed 004's reranker (chitta.recall.seed_rerank): the composite recomputed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.recall import seed_rerank
from chitta.recall.engine import RecallSettings


def test_the_composite_by_hand(tmp_path: Path) -> None:
    settings = RecallSettings(reranker="seed004")
    with chitta.open(tmp_path / "f", embedder=None, recall_settings=settings) as f:
        old = f.remember("postgres holds the invoices", at=1_700_000_000.0, confidence=0.4)
        mid = f.remember("postgres holds invoices and refunds", at=1_700_100_000.0)
        new = f.remember(
            "postgres also holds receipts", at=1_700_200_000.0, meta={"verified": True}
        )
        hits = f.recall("postgres invoices", k=3, touch=False, route=False, explain=True)
        assert {h.id for h in hits} == {old, mid, new}
        n = len(hits)
        by_rank = sorted(hits, key=lambda h: h.lanes["bm25"])
        times = sorted(hits, key=lambda h: h.memory.created_ms)
        want = {}
        for i, h in enumerate(by_rank):
            recency = times.index(h) / (n - 1)
            verified = 1.0 if h.id == new else 0.0
            want[h.id] = (
                0.50 * (n - i) / n + 0.25 * verified + 0.15 * h.memory.confidence + 0.10 * recency
            )
        for h in hits:
            assert h.score == pytest.approx(want[h.id])
            assert [x.name for x in h.factors] == ["relevance", "verified", "confidence", "recency"]
        assert [h.id for h in hits] == sorted(want, key=lambda i: -want[i])
        assert set(h.lanes) == {"bm25"}  # the seed's keyword candidates only


def test_rerank_keeps_k_and_handles_one_or_none() -> None:
    assert seed_rerank.rerank([], 5) == []
    with pytest.raises(InvalidArgument, match="reranker"):
        RecallSettings(reranker="cross-encoder")
