"""The code lane of recall (chitta/policies/code_lane.py): a query naming a symbol
brings the memories about it, and about its callers and callees, with the code prior."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from code_repo import make_repo

import chitta
from chitta.policies.code_index import index_code
from chitta.policies.code_lane import CODE_PRIOR, named_symbols
from chitta.policies.code_trust import CodeState

LEDGER = """class Ledger:
    def post(self, amount):
        return self.check(amount)

    def check(self, amount):
        return amount > 0


def fetch_page(url):
    return url
"""


@pytest.fixture
def field(tmp_path: Path) -> chitta.Field:
    repo = make_repo(tmp_path / "repo", {"ledger.py": LEDGER})
    now = time.time()
    f = chitta.open(tmp_path / "f", embedder=None, clock=lambda: now)  # scores repeat exactly
    index_code(f._core, repo, "demo")
    return f


def test_named_symbols_token_rules(field: chitta.Field) -> None:
    with field as f:
        state = CodeState(f._core)
        assert named_symbols(state, "why does Ledger.post fail") == {"ledger.py#Ledger.post"}
        assert named_symbols(state, "fetch_page is slow") == {"ledger.py#fetch_page"}
        assert named_symbols(state, "see ledger.py#Ledger.check") == {"ledger.py#Ledger.check"}
        assert named_symbols(state, "call check() twice") == {"ledger.py#Ledger.check"}
        assert named_symbols(state, "post the check to the bank") == set()  # plain words


def _scores(f: chitta.Field, query: str) -> dict[int, float]:
    return {h.id: h.score for h in f.recall(query, k=10, touch=False)}


def test_query_naming_a_symbol_boosts_its_memories_and_one_hop(field: chitta.Field) -> None:
    with field as f:
        on_post = f.remember(
            "amounts are posted twice on retry", artifacts=["ledger.py#Ledger.post"]
        )
        on_check = f.remember(
            "negative amounts are rejected", artifacts=["ledger.py:6"]
        )  # in check
        on_fetch = f.remember(
            "amounts in fetch_page are cached", artifacts=["ledger.py#fetch_page"]
        )
        plain_note = f.remember("why amounts fail: the bank")
        query = "why does Ledger.post fail with amounts"
        got = _scores(f, query)
        lane, f._core.engine.code_lane = f._core.engine.code_lane, None
        plain = _scores(f, query)  # the reference: no code lane
        f._core.engine.code_lane = lane
        assert set(got) == {on_post, on_check, on_fetch, plain_note}
        assert max(got, key=got.__getitem__) == on_post
        hits = {h.id: h for h in f.recall(query, k=10, touch=False, explain=True)}
        prior = {
            i: next((x.value for x in h.factors if x.name == "code"), 1.0) for i, h in hits.items()
        }
        assert prior == {
            on_post: 1 + CODE_PRIOR,
            on_check: 1 + CODE_PRIOR / 2,
            on_fetch: 1.0,
            plain_note: 1.0,
        }
        assert hits[on_post].lanes.get("code") == 1 and hits[on_check].lanes.get("code") == 2
        # the unboosted memories keep their scores up to one common factor (the lane adds to
        # the best fused score every score is divided by)
        assert got[plain_note] / plain[plain_note] == pytest.approx(got[on_fetch] / plain[on_fetch])
        # without a symbol named, recall is exactly what it is without the lane
        assert _scores(f, "amounts fail") == plain_without_lane(f, "amounts fail")


def plain_without_lane(f: chitta.Field, query: str) -> dict[int, float]:
    lane, f._core.engine.code_lane = f._core.engine.code_lane, None
    try:
        return _scores(f, query)
    finally:
        f._core.engine.code_lane = lane


def test_find_symbol_by_name_and_by_embedding(tmp_path: Path) -> None:
    """With an embedder the indexer embeds each symbol's name, signature and doc, and
    find_symbol falls back to the nearest embeddings (checked against brute force)."""
    import numpy as np

    from chitta.encode import HashingEmbedder
    from chitta.policies.code_index import symbol_text

    repo = make_repo(tmp_path / "repo", {"ledger.py": LEDGER})
    emb = HashingEmbedder(dim=64)
    with chitta.open(tmp_path / "f", embedder=emb) as f:
        index_code(f._core, repo, "demo")
        symbols = f._core.registry.by_name["symbols"]
        for s in symbols.symbols.values():  # each embedding is its text's, as the embedder gives it
            assert np.frombuffer(s.embedding, "<f4") == pytest.approx(
                np.asarray(emb.embed([symbol_text(s.op())])[0], np.float32), abs=1e-6
            )
        found = f.call("find_symbol", name="post")["symbols"]
        assert [(r["name"], r["match"]) for r in found][:1] == [("ledger.py#Ledger.post", "exact")]
        assert found[0]["callees"] == ["ledger.py#Ledger.check"]
        fuzzy = f.call("find_symbol", name="fetch_pag")["symbols"]
        assert ("ledger.py#fetch_page", "prefix") in [(r["name"], r["match"]) for r in fuzzy]
        q = np.asarray(emb.embed(["amount > 0"])[0], np.float32)
        cos = {
            n: float(q @ np.frombuffer(s.embedding, "<f4"))
            / (np.linalg.norm(q) * np.linalg.norm(np.frombuffer(s.embedding, "<f4")))
            for n, s in symbols.symbols.items()
        }
        want = sorted((n for n, c in cos.items() if c >= 0.3), key=lambda n: (-cos[n], n))
        got = [
            r["name"]
            for r in f.call("find_symbol", name="amount > 0")["symbols"]
            if r["match"] == "semantic"
        ]
        assert got == want and want  # some symbol is near (its signature says amount)
