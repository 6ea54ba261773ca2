"""The read path: recall's order against an independent BM25 (the formula in
chitta/organs/index/bm25.py computed here in Python) then scope tier then ULID;
skip-not-truncate against a greedy restatement; dispute pairing (both sides
adjacent, or neither) including a budget that fits one side only."""

from __future__ import annotations

import math
import random

import chitta
from chitta.curated import facts as F
from chitta.organs.index.bm25 import tokenize


def _bm25(query: str, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    toks = {i: tokenize(t) for i, t in docs.items()}
    n = len(toks)
    avgdl = sum(map(len, toks.values())) / n
    out = {}
    for i, words in toks.items():
        score = 0.0
        for term in set(tokenize(query)):
            df = sum(term in w for w in toks.values())
            tf = words.count(term)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += (
                    tokenize(query).count(term)
                    * idf
                    * tf
                    * (k1 + 1)
                    / (tf + k1 * (1 - b + b * len(words) / avgdl))
                )
        out[i] = score
    return out


def _file(f: chitta.Field, body: str, path: str, scope: str = "project", **kw: object) -> str:
    fact: str = f.call("memory_remember", body=body, paths=[path], scope=scope, **kw)["fact"]
    return fact


def test_recall_orders_by_relevance_then_scope_then_ulid(field: chitta.Field) -> None:
    rng = random.Random(7)
    words = ["cache", "ccache", "runner", "disk", "linker", "timeout", "flaky", "port"]
    for i in range(40):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(2, 6))) + f" note{i}"
        _file(field, body, rng.choice(["build/cache", "build/ci"]), rng.choice(F.SCOPE_TIERS))
    organ = field.organ("curated")
    live = {f.id: f for f in organ.facts.values() if f.live}
    texts = {i: " ".join([f.body, *f.fields.values()]) for i, f in live.items()}
    for query in ("cache runner", "flaky timeout timeout", "", "nothing matches"):
        got = field.call("memory_recall", paths=["build/cache"], query=query, budget=200_000)
        scores = _bm25(query, texts) if query else {}
        inside = [f for f in live.values() if any(p.render() == "build/cache" for p in f.paths)]
        want = sorted(
            inside, key=lambda f: (-round(scores.get(f.id, 0.0), 4), F.scope_tier(f.scope), f.id)
        )
        assert got["ids"] == [f.id for f in want], query


def test_a_block_that_does_not_fit_is_skipped_and_the_next_one_still_placed(
    field: chitta.Field,
) -> None:
    sizes = [300, 900, 120, 700, 80, 400]
    ids = [_file(field, f"cache {'x' * n} {i}", "build/cache") for i, n in enumerate(sizes)]
    organ = field.organ("curated")
    for budget in (100, 500, 1000, 1300, 2000, 5000):
        got = field.call("memory_recall", paths=["build/cache"], budget=budget)
        ranked = field.call("memory_recall", paths=["build/cache"], budget=200_000)["ids"]
        blocks = {
            i: F.block(i, "fact", "project", organ.facts[i].primary, organ.facts[i].body, {})
            for i in ids
        }
        placed, used = [], 0  # the greedy restatement
        for i in ranked:
            if used + len(blocks[i]) <= budget:
                placed.append(i)
                used += len(blocks[i])
        assert got["ids"] == placed and got["bytes"] == used <= budget
        assert got["text"].encode() == b"".join(blocks[i] for i in placed)  # whole blocks only
        assert set(got["skipped"]) == set(ranked) - set(placed)


def test_both_sides_of_a_dispute_are_adjacent_or_absent(field: chitta.Field) -> None:
    a = _file(field, "the ccache directory is /var/cache/ccache", "build/cache")
    others = [_file(field, f"unrelated fact {i}", "build/cache") for i in range(3)]
    b = _file(field, "the ccache directory is ~/.ccache", "build/ci", disputes=a)  # filed elsewhere
    got = field.call(
        "memory_recall", paths=["build/cache"], query="ccache directory", budget=200_000
    )
    ids = got["ids"]
    assert a in ids and b in ids and abs(ids.index(a) - ids.index(b)) == 1
    assert f"disputes: {b}" in got["text"] and f"disputes: {a}" in got["text"]
    organ = field.organ("curated")
    size = {
        i: len(
            F.block(
                i,
                organ.facts[i].kind,
                "project",
                organ.facts[i].primary,
                organ.facts[i].body,
                {},
                organ.disputes.get(i),
            )
        )
        for i in [a, b, *others]
    }
    one_side = max(size[a], size[b]) + 10  # fits either side alone, not both
    assert one_side < size[a] + size[b]
    got = field.call(
        "memory_recall", paths=["build/cache"], query="ccache directory", budget=one_side
    )
    assert a not in got["ids"] and b not in got["ids"] and {a, b} <= set(got["skipped"])
    assert got["ids"] and set(got["ids"]) <= set(others)  # the rest still fills the budget
    field.call("memory_resolve", fact=a, other=b, winner=b)
    got = field.call(
        "memory_recall", paths=["build/cache", "build/ci"], query="ccache directory", budget=200_000
    )
    assert b in got["ids"] and a not in got["ids"] and "disputes:" not in got["text"]


def test_resolving_with_both_standing_ends_the_pairing(field: chitta.Field) -> None:
    a = _file(field, "tests run with -x", "tests/flaky")
    b = _file(field, "tests never run with -x", "tests/flaky", disputes=a)
    field.call("memory_resolve", fact=a, other=b, winner="both")
    got = field.call("memory_recall", paths=["tests/flaky"])
    assert set(got["ids"]) == {a, b} and "disputes:" not in got["text"]
