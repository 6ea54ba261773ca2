"""The keyword lane's depth (``RecallSettings.keyword_pool``).

The keyword lane asks BM25 for max(keyword_pool, the lanes' pool) candidates and
fusion keeps that many, when convex fusion scores the candidates (under RRF a
deeper keyword lane adds nothing, so RRF recalls keep max(pool, 5 k) there
too); the other lanes keep max(pool, 5 k). Oracle: the
recall index's own BM25 top-n (the lane must be exactly it). That recall ranks
what these lanes return is tests/unit/recall/test_recall_vectorised.py's job.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.recall.engine import RecallSettings
from chitta.recall.query import keyword_query

WORDS = [f"w{i}" for i in range(40)]


def field_of(
    root: Path, settings: RecallSettings, n: int = 400, embedder: str | None = "hashing"
) -> chitta.Field:
    rng = np.random.default_rng(7)
    f = chitta.open(root, embedder=embedder, recall_settings=settings)
    # every memory holds "common", so the keyword lane can fill any depth up to n
    f.remember_many([{"text": "common " + " ".join(rng.choice(WORDS, 5))} for _ in range(n)])
    return f


def lanes_for(f: chitta.Field, text: str, k: int) -> dict[str, np.ndarray]:
    engine = f.core.engine
    s = engine.settings
    lane_pool = max(s.pool, 5 * k)
    vec = f.core.encoding.embed([text])[0]
    return engine.lanes(
        text=text,
        vector=vec / np.linalg.norm(vec),
        code=None,
        pool=lane_pool,
        allowed=None,
        keyword_pool=max(lane_pool, s.keyword_pool),
    )


def test_default_keyword_pool_is_100() -> None:
    assert RecallSettings().keyword_pool == 100
    assert RecallSettings().pool == 50


@pytest.mark.parametrize(
    ("pool", "keyword_pool", "k", "want_bm25", "want_dense"),
    [
        (10, 40, 1, 40, 10),  # the keyword lane deeper than the others
        (10, 40, 12, 60, 60),  # 5 k above both: every lane asks 5 k
        (30, 20, 1, 30, 30),  # keyword_pool under the lanes' pool: the pool wins
    ],
)
def test_keyword_lane_depth(
    tmp_path: Path, pool: int, keyword_pool: int, k: int, want_bm25: int, want_dense: int
) -> None:
    f = field_of(tmp_path / "f", RecallSettings(pool=pool, keyword_pool=keyword_pool))
    text = "common w3 w7"
    lanes = lanes_for(f, text, k)
    assert len(lanes["bm25"]) == want_bm25
    assert len(lanes["dense"]) == want_dense
    # the lane is exactly BM25's own top-n for the keyword query
    expect = f.core.index.keyword(keyword_query(text), want_bm25, None)
    assert lanes["bm25"].tolist() == expect.tolist()
    f.close()


@pytest.mark.parametrize(
    ("alpha", "with_vector", "k", "want"),
    [
        (0.55, True, 10, 100),  # convex fusion: the keyword lane goes to keyword_pool
        (0.55, True, 30, 150),  # 5 k above keyword_pool
        (None, True, 10, 50),  # weighted RRF: the lanes' pool
        (0.55, False, 10, 50),  # no query vector: RRF, the lanes' pool
    ],
)
def test_recall_asks_the_keyword_depth_only_for_convex_fusion(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    alpha: float | None,
    with_vector: bool,
    k: int,
    want: int,
) -> None:
    # without a vector: a field with no embedder, so the recall has the text alone
    f = field_of(
        tmp_path / "f",
        RecallSettings(fusion_alpha=alpha),
        embedder="hashing" if with_vector else None,
    )
    engine = f.core.engine
    seen: list[tuple[int, int | None]] = []
    real = engine.lanes

    def spy(**kw: object) -> dict[str, np.ndarray]:
        seen.append((kw["pool"], kw.get("keyword_pool")))  # type: ignore[arg-type]
        return real(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "lanes", spy)
    hits = f.recall("common w3", k=k, touch=False)
    assert hits
    assert seen == [(max(50, 5 * k), want)]
    f.close()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "100", None, 100_001])
@pytest.mark.parametrize("name", ["pool", "keyword_pool"])
def test_bad_pools_are_refused(name: str, bad: object) -> None:
    with pytest.raises(InvalidArgument, match=name):
        RecallSettings(**{name: bad})  # type: ignore[arg-type]
