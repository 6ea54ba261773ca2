"""recall(tags=...), remember(dedup=True) and each hit's absolute relevance.

Oracles: a brute-force filter over every memory's tags (what tags= must keep),
the canonical-text rule written out here (what dedup= must merge), and the
cosine computed with numpy from the embedder called directly (relevance).
"""

from __future__ import annotations

import random
import unicodedata

import numpy as np
import pytest

import chitta
from chitta.encode import HashingEmbedder
from chitta.errors import InvalidArgument


def _field(tmp_path, **kw):
    return chitta.open(tmp_path / "f", embedder=HashingEmbedder(64), **kw)


def test_tags_filter_inside_the_lanes(tmp_path):
    rng = random.Random(7)
    pool = ["ci", "deploy", "db", "auth"]
    with _field(tmp_path) as f:
        tagged = {}
        for i in range(300):
            tags = sorted(rng.sample(pool, rng.randint(0, 2)))
            tagged[f.remember(f"build step {i} failed on the runner", tags=tags)] = set(tags)
        for want in (["ci"], ["ci", "db"], ["auth"]):
            expect = {m for m, t in tagged.items() if set(want) <= t}
            hits = f.recall("build step failed runner", k=1000, tags=want, touch=False)
            got = {h.id for h in hits}
            assert got == expect  # k results when k exist: the filter is inside the lanes
            k10 = f.recall("build step failed runner", k=10, tags=want, touch=False)
            assert len(k10) == min(10, len(expect)) and {h.id for h in k10} <= expect
        f.forget(next(iter(m for m, t in tagged.items() if "ci" in t)))
        assert all("ci" in h.memory.tags for h in f.recall("build", k=1000, tags="ci", touch=False))
        assert f.recall("build", tags=["nope"], touch=False) == []
        for bad in ([], [""], [1]):
            with pytest.raises(InvalidArgument):
                f.recall("build", tags=bad)  # type: ignore[arg-type]


def test_tags_filter_after_reopen_and_checkpoint(tmp_path):
    with _field(tmp_path) as f:
        a = f.remember("alpha deploy note", tags=["deploy"])
        f.remember("alpha other note")
        f.checkpoint()
        b = f.remember("alpha deploy later", tags=["deploy"])
    with _field(tmp_path) as f:
        assert {h.id for h in f.recall("alpha", k=10, tags=["deploy"], touch=False)} == {a, b}


def _canonical(t: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", t).casefold().split())


def test_dedup_returns_the_existing_memory_and_reinforces_it(tmp_path):
    with _field(tmp_path) as f:
        first = f.remember("The staging DB runs on port 5432", realm="ops")
        f.remember("unrelated text", realm="ops")
        variants = ["the staging db  runs on port 5432", "THE STAGING DB RUNS ON PORT 5432 "]
        for t in variants:
            assert _canonical(t) == _canonical("The staging DB runs on port 5432")
            assert f.remember(t, realm="ops", dedup=True) == first
        assert f.get(first).access_count == 2  # reinforced once per duplicate
        assert len(f) == 2
        other_realm = f.remember("the staging db runs on port 5432", realm="dev", dedup=True)
        assert other_realm != first
        different = f.remember("The staging DB runs on port 5433", realm="ops", dedup=True)
        assert different != first
        without = f.remember("the staging db runs on port 5432", realm="ops")  # dedup off
        assert without != first
        f.forget(first)
        again = f.remember("the staging db runs on port 5432", realm="ops", dedup=True)
        assert again == without  # the live twin, written without dedup, is found
        with pytest.raises(InvalidArgument):
            f.remember("x", dedup="yes")  # type: ignore[arg-type]
        n = len(f)
        with pytest.raises(InvalidArgument):
            f.remember("   ", dedup=True)
        assert len(f) == n


def test_dedup_sees_memories_of_another_handle(tmp_path):
    with _field(tmp_path) as a, _field(tmp_path) as b:
        mid = a.remember("shared fact about the cache")
        a.flush()
        b.refresh()
        assert b.remember("Shared fact about the cache", dedup=True) == mid


def test_relevance_is_the_query_cosine(tmp_path):
    emb = HashingEmbedder(64)
    with _field(tmp_path) as f:
        texts = [f"the {w} service restarted after the outage" for w in ("auth", "db", "cache")]
        texts += ["lunch is at noon on fridays"]
        for t in texts:
            f.remember(t)
        q = "why did the auth service restart"
        hits = f.recall(q, k=10, touch=False)
        qv = emb.embed([q])[0]
        qv = qv / np.linalg.norm(qv)
        for h in hits:
            mv = emb.embed([h.text])[0]
            assert h.relevance == pytest.approx(float(qv @ (mv / np.linalg.norm(mv))), abs=1e-5)
        cut = sorted(h.relevance for h in hits)[len(hits) // 2]
        kept = f.recall(q, k=10, touch=False, min_score=cut)
        assert {h.id for h in kept} == {h.id for h in hits if h.relevance >= cut}
        for bad in (2.0, "0.5", True):
            with pytest.raises(InvalidArgument):
                f.recall(q, min_score=bad)  # type: ignore[arg-type]


def test_relevance_equals_the_dense_lanes_cosine_bit_for_bit(tmp_path):
    """The native tail takes each hit's relevance from the gather's cosines: the same value,
    bit for bit, as ``cosine_array`` (one dot per row) gives for those ids."""
    with _field(tmp_path) as f:
        f.remember_many([f"service {i % 9} restarted after outage {i % 4}" for i in range(300)])
        for q in ("why did service 3 restart", "outage 2", "lunch"):
            hits = f.recall(q, k=10, touch=False)
            assert hits and all(h.relevance is not None for h in hits)
            qv = f.core.encoding.embed_query([q])[0]
            qv = qv / float(np.sqrt(qv.dot(qv)))  # as recall normalises it
            want = f.core.index.cosine_array(qv, [h.id for h in hits]).tolist()
            assert [h.relevance for h in hits] == want


def test_relevance_is_none_without_vectors(tmp_path):
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.remember("plain words only")
        (h,) = f.recall("plain words", touch=False)
        assert h.relevance is None
        assert f.recall("plain words", touch=False, min_score=0.9)[0].id == h.id
