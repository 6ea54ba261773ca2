"""BM25 index against a straight Python implementation of the formula and bm25s."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from bm25_corpus import (
    english_corpus,
    english_queries,
    locomo_turns,
    reference_scores,
)

from chitta.organs.index import BM25, tokenize
from chitta.organs.index.bm25 import PAD_ID


def build(texts: list[str], ids: list[int] | None = None, **kw: object) -> BM25:
    ix = BM25(**kw)  # type: ignore[arg-type]
    ids = list(range(len(texts))) if ids is None else ids
    ix.add(np.array(ids, dtype=np.uint64), texts)
    return ix


def check_against_reference(
    ix: BM25, docs: dict[int, str], queries: list[str], k: int, stem: bool = False
) -> None:
    doc_tokens = {i: tokenize(t, stem=stem) for i, t in docs.items()}
    for q in queries:
        want = reference_scores(doc_tokens, tokenize(q, stem=stem), ix.k1, ix.b)
        ids, scores = ix.search(q, k)
        n_hits = min(k, len(want))
        assert np.all(ids[n_hits:] == PAD_ID) and np.all(scores[n_hits:] == 0)
        for i, s in zip(ids[:n_hits], scores[:n_hits]):
            assert int(i) in want, q
            assert s == pytest.approx(want[int(i)], rel=1e-5), q
        ranked = sorted(want.values(), reverse=True)
        # Same scores in the same order (ids may swap only within exact-score ties).
        np.testing.assert_allclose(scores[:n_hits], ranked[:n_hits], rtol=1e-5)


@pytest.fixture(scope="module")
def locomo() -> tuple[list[str], list[str]]:
    data = locomo_turns()
    if data is None:
        pytest.skip("LoCoMo file not present")
    return data


def test_scores_equal_reference_on_english_corpus() -> None:
    texts = english_corpus(300)
    ix = build(texts)
    check_against_reference(ix, dict(enumerate(texts)), english_queries(60), k=10)


def test_scores_equal_reference_on_locomo(locomo: tuple[list[str], list[str]]) -> None:
    texts, questions = locomo
    texts = texts[:1500]
    ix = build(texts)
    check_against_reference(ix, dict(enumerate(texts)), questions[:80], k=10)


def test_scores_equal_reference_with_stemming_and_other_params() -> None:
    texts = english_corpus(200, seed=5)
    ix = build(texts, k1=0.9, b=0.4, stem=True)
    check_against_reference(ix, dict(enumerate(texts)), english_queries(40), k=5, stem=True)


def test_changing_k1_b_rescored_exactly() -> None:
    texts = english_corpus(150, seed=2)
    ix = build(texts)
    ix.k1, ix.b = 2.0, 1.0
    assert (ix.k1, ix.b) == (2.0, 1.0)
    check_against_reference(ix, dict(enumerate(texts)), english_queries(20), k=8)


def test_repeated_query_terms_count_each_time() -> None:
    texts = english_corpus(100)
    ix = build(texts)
    check_against_reference(ix, dict(enumerate(texts)), ["cats cats shelter", "port port port"], 5)


def test_top10_agrees_with_bm25s(locomo: tuple[list[str], list[str]]) -> None:
    bm25s = pytest.importorskip("bm25s")
    texts, questions = locomo
    texts = [t for t in texts[:2000] if tokenize(t)]
    ix = build(texts)
    ref = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    ref.index([tokenize(t) for t in texts], show_progress=False)
    overlaps = []
    for q in questions[:150]:
        qt = [t for t in tokenize(q) if t in ref.vocab_dict]
        if not qt:
            continue
        ref_ids, ref_scores = ref.retrieve([qt], k=10, show_progress=False, n_threads=1)
        ids, scores = ix.search(q, 10)
        n = int(np.count_nonzero(ref_scores[0] > 0))
        # bm25s (like Lucene >= 8) leaves out the constant factor (k1 + 1).
        np.testing.assert_allclose(scores[:n] / 2.2, ref_scores[0][:n], rtol=1e-4)
        overlaps.append(len(set(ids[:n].tolist()) & set(ref_ids[0][:n].tolist())) / max(n, 1))
    assert len(overlaps) > 100
    # Only exact-score ties at the 10th place may differ.
    assert np.mean(overlaps) >= 0.97


def test_incremental_add_remove_equals_fresh_index() -> None:
    texts = english_corpus(400, seed=9)
    ix = build(texts[:300])
    rng = random.Random(4)
    gone = rng.sample(range(300), 180)  # enough tombstones to trigger compaction
    ix.remove(np.array(gone, dtype=np.uint64))
    ix.add(np.arange(300, 400, dtype=np.uint64), texts[300:])
    keep = [i for i in range(400) if i not in set(gone)]
    fresh = build([texts[i] for i in keep], keep)
    assert len(ix) == len(fresh) == len(keep)
    assert ix.avg_doc_length == pytest.approx(fresh.avg_doc_length, rel=1e-12)
    assert ix.vocabulary_size == fresh.vocabulary_size
    for q in english_queries(50, seed=3):
        a_ids, a_scores = ix.search(q, 10)
        b_ids, b_scores = fresh.search(q, 10)
        np.testing.assert_array_equal(a_ids, b_ids)
        np.testing.assert_allclose(a_scores, b_scores, rtol=1e-6)


def test_random_operations_match_python_model() -> None:
    rng = random.Random(11)
    pool = english_corpus(600, seed=12)
    ix = BM25()
    model: dict[int, str] = {}
    next_id = 10**12
    for _ in range(25):
        n = rng.randint(0, 30)
        ids = list(range(next_id, next_id + n))
        next_id += n + rng.randint(0, 3)
        batch = [rng.choice(pool) for _ in ids]
        ix.add(np.array(ids, dtype=np.uint64), batch)
        model.update(zip(ids, batch))
        if model and rng.random() < 0.7:
            victims = rng.sample(sorted(model), rng.randint(1, max(1, len(model) // 3)))
            ix.remove(victims)
            for v in victims:
                del model[v]
        assert len(ix) == len(model)
        assert all(i in ix for i in model)
        if model:
            check_against_reference(ix, model, english_queries(5, seed=rng.randint(0, 99)), 6)


def test_allowed_restricts_to_given_ids() -> None:
    texts = english_corpus(200, seed=21)
    ix = build(texts)
    allowed = np.array(list(range(0, 200, 3)) + [10**9], dtype=np.uint64)  # one unknown id
    doc_tokens = {i: tokenize(texts[i]) for i in range(0, 200, 3)}
    for q in english_queries(20, seed=8):
        ids, scores = ix.search(q, 10, allowed=allowed)
        want = reference_scores(
            {i: tokenize(texts[i]) for i in range(200)}, tokenize(q), ix.k1, ix.b
        )
        want = {i: s for i, s in want.items() if i in doc_tokens}
        hits = ids[ids != PAD_ID]
        assert len(hits) == min(10, len(want))
        for i, s in zip(hits, scores):
            assert int(i) % 3 == 0
            assert s == pytest.approx(want[int(i)], rel=1e-5)


def test_dense_and_sparse_accumulators_identical() -> None:
    texts = english_corpus(300, seed=31)
    ix = build(texts)
    for q in english_queries(30, seed=30):
        d = ix.search(q, 10, accumulator="dense")
        s = ix.search(q, 10, accumulator="sparse")
        np.testing.assert_array_equal(d[0], s[0])
        np.testing.assert_array_equal(d[1], s[1])


def test_results_padded_when_fewer_hits() -> None:
    ix = build(["red fox", "blue whale", "green frog"])
    ids, scores = ix.search("fox", 5)
    assert ids.dtype == np.uint64 and scores.dtype == np.float32
    assert ids.tolist() == [0] + [PAD_ID] * 4
    assert scores[0] > 0 and np.all(scores[1:] == 0)


@pytest.mark.parametrize("query", ["", "   ", "the of and", "zzzunknown"])
def test_query_without_known_terms_returns_only_padding(query: str) -> None:
    ix = build(["red fox", "blue whale"])
    ids, scores = ix.search(query, 3)
    assert ids.tolist() == [PAD_ID] * 3 and scores.tolist() == [0.0] * 3


def test_search_on_empty_index_returns_padding() -> None:
    ids, _ = BM25().search("anything", 2)
    assert ids.tolist() == [PAD_ID, PAD_ID]


def test_ties_break_by_smaller_id() -> None:
    ix = build(["same words here"] * 4, [40, 7, 19, 3])
    ids, scores = ix.search("words", 4)
    assert ids.tolist() == [3, 7, 19, 40]
    assert len(set(scores.tolist())) == 1


def test_len_contains_and_doc_freq() -> None:
    ix = build(["alpha beta", "beta gamma"], [5, 9])
    assert len(ix) == 2 and 5 in ix and 9 in ix and 6 not in ix
    assert -1 not in ix and "5" not in ix
    assert ix.doc_freq("beta") == 2 and ix.doc_freq("alpha") == 1
    ix.remove([5])
    assert ix.doc_freq("beta") == 1 and ix.doc_freq("alpha") == 0 and 5 not in ix


def test_empty_document_counts_toward_average_length() -> None:
    ix = build(["alpha beta", "", "the"])
    assert len(ix) == 3
    assert ix.avg_doc_length == pytest.approx(2 / 3)


def test_empty_batch_is_a_no_op() -> None:
    ix = BM25()
    ix.add(np.array([], dtype=np.uint64), [])
    ix.remove(np.array([], dtype=np.uint64))
    assert len(ix) == 0


def test_concurrent_searches_equal_sequential() -> None:
    texts = english_corpus(500, seed=41)
    ix = build(texts)
    queries = english_queries(40, seed=42)
    expected = [ix.search(q, 10) for q in queries]
    errors: list[str] = []

    def worker() -> None:
        for _ in range(5):
            for q, (e_ids, e_scores) in zip(queries, expected):
                ids, scores = ix.search(q, 10)
                if not (np.array_equal(ids, e_ids) and np.array_equal(scores, e_scores)):
                    errors.append(q)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
