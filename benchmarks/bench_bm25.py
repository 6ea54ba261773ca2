"""BM25 index and RRF fusion benchmarks, side by side with competitors.

Smoke (CI, seconds):  pytest benchmarks/bench_bm25.py --benchmark-disable
Full run (RESULTS.md):
    CHITTA_BENCH_N=100000 CHITTA_BENCH_NQ=200 pytest benchmarks/bench_bm25.py \
        --benchmark-min-rounds=3 --benchmark-warmup=off --benchmark-columns=min,mean,median,rounds

Corpus: when the LoCoMo file exists (``$CHITTA_LOCOMO`` or
/work/shared/data/locomo/locomo-dev.json) each document is 1-3 sentences
sampled (seeded) from the LoCoMo turns, and the queries are the LoCoMo
questions; otherwise a deterministic synthetic vocabulary with Zipf word
frequencies. ``extra_info['corpus']`` says which was used.

The pruned search (the default) and the exhaustive scan are timed side by side;
the Zipf lane corpus at 100K / 1M (p50/p99, load from the sidecar) is
``bench_bm25_lane.py``.

Competitors: bm25s (method="lucene", numpy backend, fed the chitta tokenizer's
tokens so the top-10 can be compared; tokenization is *excluded* from its
timings but included in chitta's) and SQLite FTS5 (stdlib sqlite3, its own
unicode61 tokenizer, ``ORDER BY rank``). Query timings are per query, k = 10,
one thread.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chitta.organs.index import BM25, rrf_fuse, tokenize

N = int(os.environ.get("CHITTA_BENCH_N", "2000"))
NQ = int(os.environ.get("CHITTA_BENCH_NQ", "30"))
K = 10
LOCOMO = Path(os.environ.get("CHITTA_LOCOMO", "/work/shared/data/locomo/locomo-dev.json"))


def _locomo() -> tuple[list[str], list[str]] | None:
    if not LOCOMO.exists():
        return None
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    sentences: list[str] = []
    questions: list[str] = []
    for sample in data:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    sentences += [s for s in re.split(r"(?<=[.!?])\s+", t["text"]) if s]
        questions += [str(q["question"]) for q in sample["qa"]]
    return sentences, questions


def _make_corpus() -> tuple[list[str], list[str], str]:
    rng = random.Random(1234)
    loc = _locomo()
    if loc is not None:
        sentences, questions = loc
        docs = [" ".join(rng.choices(sentences, k=rng.randint(1, 3))) for _ in range(N)]
        qs = rng.sample(questions, min(NQ, len(questions)))
        return docs, qs, "locomo-sentences"
    vocab = [f"w{i}" for i in range(20000)]
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    weights /= weights.sum()
    nprng = np.random.default_rng(1234)
    docs = [
        " ".join(nprng.choice(vocab, size=int(nprng.integers(5, 40)), p=weights)) for _ in range(N)
    ]
    qs = [" ".join(nprng.choice(vocab[50:5000], size=3)) for _ in range(NQ)]
    return docs, qs, "synthetic-zipf"


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str], str]:
    return _make_corpus()


@pytest.fixture(scope="module")
def chitta_index(corpus: Any) -> BM25:
    docs = corpus[0]
    ix = BM25()
    ix.add(np.arange(len(docs), dtype=np.uint64), docs)
    return ix


@pytest.fixture(scope="module")
def bm25s_index(corpus: Any) -> Any:
    bm25s = pytest.importorskip("bm25s")
    ref = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    ref.index([tokenize(d) for d in corpus[0]], show_progress=False)
    return ref


def _fts5_build(docs: list[str]) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", check_same_thread=False)
    con.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    with con:
        con.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", enumerate(docs))
    return con


@pytest.fixture(scope="module")
def fts5(corpus: Any) -> sqlite3.Connection:
    try:
        return _fts5_build(corpus[0])
    except sqlite3.OperationalError as e:  # sqlite built without FTS5
        pytest.skip(f"FTS5 unavailable: {e}")


def _info(benchmark: Any, corpus: Any, **extra: Any) -> None:
    benchmark.extra_info.update({"n_docs": N, "n_queries": len(corpus[1]), "corpus": corpus[2]})
    benchmark.extra_info.update(extra)


# ---- index time -------------------------------------------------------------------------


def test_index_chitta(benchmark: Any, corpus: Any) -> None:
    docs = corpus[0]
    ids = np.arange(len(docs), dtype=np.uint64)

    def build() -> BM25:
        ix = BM25()
        ix.add(ids, docs)
        return ix

    ix = benchmark.pedantic(build, rounds=3, iterations=1)
    _info(benchmark, corpus, includes_tokenization=True)
    assert len(ix) == len(docs)


def test_index_bm25s(benchmark: Any, corpus: Any) -> None:
    bm25s = pytest.importorskip("bm25s")
    tokens = [tokenize(d) for d in corpus[0]]

    def build() -> Any:
        ref = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        ref.index(tokens, show_progress=False)
        return ref

    benchmark.pedantic(build, rounds=3, iterations=1)
    _info(benchmark, corpus, includes_tokenization=False)


def test_index_fts5(benchmark: Any, corpus: Any) -> None:
    try:
        _fts5_build(corpus[0][:10]).close()
    except sqlite3.OperationalError as e:
        pytest.skip(f"FTS5 unavailable: {e}")
    benchmark.pedantic(lambda: _fts5_build(corpus[0]).close(), rounds=3, iterations=1)
    _info(benchmark, corpus, includes_tokenization=True)


# ---- query latency (one pass over all queries per round) ---------------------------------


def test_query_chitta(benchmark: Any, corpus: Any, chitta_index: BM25) -> None:
    queries = corpus[1]
    benchmark(lambda: [chitta_index.search(q, K) for q in queries])
    _info(benchmark, corpus, per="all queries", accumulator="auto", method="pruned")


def test_query_chitta_exhaustive(benchmark: Any, corpus: Any, chitta_index: BM25) -> None:
    queries = corpus[1]
    for q in queries:  # the pruned search returns exactly the exhaustive top k
        a, b = chitta_index.search(q, K), chitta_index.search(q, K, method="exhaustive")
        assert np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes()
    benchmark(lambda: [chitta_index.search(q, K, method="exhaustive") for q in queries])
    _info(benchmark, corpus, per="all queries", accumulator="auto", method="exhaustive")


def test_query_chitta_sparse_accumulator(benchmark: Any, corpus: Any, chitta_index: BM25) -> None:
    queries = corpus[1]
    benchmark(
        lambda: [
            chitta_index.search(q, K, accumulator="sparse", method="exhaustive") for q in queries
        ]
    )
    _info(benchmark, corpus, per="all queries", accumulator="sparse")


def test_query_bm25s(benchmark: Any, corpus: Any, bm25s_index: Any, chitta_index: BM25) -> None:
    vocab = bm25s_index.vocab_dict
    q_tokens = [[t for t in tokenize(q) if t in vocab] for q in corpus[1]]
    q_tokens = [q for q in q_tokens if q]

    def run() -> list[Any]:
        return [bm25s_index.retrieve([q], k=K, show_progress=False, n_threads=1) for q in q_tokens]

    results = benchmark(run)
    # Equal top-10: same scores rank by rank (bm25s omits the factor k1 + 1), and
    # the same id sets up to exact-score ties at the cut.
    overlaps = []
    for q, (ref_ids, ref_scores) in zip(q_tokens, results):
        ids, scores = chitta_index.search(" ".join(q), K)
        n = int(np.count_nonzero(ref_scores[0] > 0))
        np.testing.assert_allclose(scores[:n] / 2.2, ref_scores[0][:n], rtol=1e-4)
        overlaps.append(len(set(ids[:n].tolist()) & set(ref_ids[0][:n].tolist())) / max(n, 1))
    _info(benchmark, corpus, per="all queries", top10_overlap=float(np.mean(overlaps)))


def test_query_fts5(benchmark: Any, corpus: Any, fts5: sqlite3.Connection) -> None:
    exprs = []
    for q in corpus[1]:
        toks = tokenize(q)
        if toks:
            exprs.append(" OR ".join('"' + t.replace('"', '""') + '"' for t in toks))
    sql = "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?"
    benchmark(lambda: [fts5.execute(sql, (e, K)).fetchall() for e in exprs])
    _info(benchmark, corpus, per="all queries")


# ---- RRF micro-benchmark ------------------------------------------------------------------

RRF_LISTS = [
    np.random.default_rng(s).choice(5000, size=100, replace=False).astype(np.uint64)
    for s in range(3)
]


def python_rrf(lists: list[list[int]], k: float = 60.0) -> list[tuple[int, float]]:
    scores: dict[int, float] = {}
    best: dict[int, int] = {}
    for lst in lists:
        seen: set[int] = set()
        for pos, doc in enumerate(lst, 1):
            if doc in seen:
                continue
            seen.add(doc)
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + pos)
            best[doc] = min(best.get(doc, pos), pos)
    return sorted(scores.items(), key=lambda t: (-t[1], best[t[0]], t[0]))


def test_rrf_chitta(benchmark: Any) -> None:
    ids, _ = benchmark(rrf_fuse, RRF_LISTS, 60)
    want = python_rrf([x.tolist() for x in RRF_LISTS])
    assert ids.tolist() == [d for d, _ in want]
    benchmark.extra_info.update({"lists": 3, "list_len": 100})


def test_rrf_python(benchmark: Any) -> None:
    lists = [x.tolist() for x in RRF_LISTS]
    benchmark(python_rrf, lists)
    benchmark.extra_info.update({"lists": 3, "list_len": 100})
