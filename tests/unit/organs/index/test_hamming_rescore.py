"""HammingRescoreIndex: rescoring equals numpy brute-force cosine over the same
candidate set; recall@10 against exact search on clustered data; mean rules."""

from __future__ import annotations

import datagen
import numpy as np
import pytest
from _hamming_ref import hamming_topk

from chitta.organs.index.hamming import PAD_ID, HammingRescoreIndex, binarize, default_candidates


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_default_candidates_rule():
    assert default_candidates(0) == 400
    assert default_candidates(400_000) == 400
    assert default_candidates(400_001) == 401
    assert default_candidates(1_000_000) == 1000
    assert default_candidates(2_500_000) == 2500


def test_effective_candidates_follows_size():
    idx = HammingRescoreIndex(4)
    assert idx.candidates is None and idx.effective_candidates == 400
    assert HammingRescoreIndex(4, candidates=25).effective_candidates == 25


@pytest.mark.parametrize("dim", [256, 100])
def test_rescore_equals_numpy_cosine_over_candidates(dim):
    rng = np.random.default_rng(dim)
    x = rng.standard_normal((3000, dim)).astype(np.float32) * 3
    ids = rng.permutation(100_000)[:3000].astype(np.uint64)
    idx = HammingRescoreIndex(dim, candidates=60)
    idx.add(ids[:1000], x[:1000])
    idx.add(ids[1000:], x[1000:])
    gone = rng.random(3000) < 0.1
    idx.remove(ids[gone])
    keep_ids, keep_x = ids[~gone], unit(x[~gone])
    q = rng.standard_normal((8, dim)).astype(np.float32)
    got_ids, got_s = idx.search(q, 10)
    # Candidate set, independently: sign codes against the recorded mean.
    mean = idx.mean
    np.testing.assert_allclose(mean, unit(x[:1000]).mean(axis=0), atol=1e-6)
    codes = binarize(keep_x, mean)
    cand_ids, _ = hamming_topk(keep_ids, codes, binarize(unit(q), mean), 60)
    pos = {int(i): p for p, i in enumerate(keep_ids)}
    for r in range(len(q)):
        np.testing.assert_array_equal(idx.candidate_ids(q[r]), cand_ids[r])
        rows = np.array([pos[int(i)] for i in cand_ids[r]])
        cos = keep_x[rows].astype(np.float64) @ unit(q[r : r + 1])[0].astype(np.float64)
        order = np.argsort(-cos, kind="stable")[:10]
        np.testing.assert_allclose(got_s[r], cos[order], atol=1e-5)
        # Same ids, except where two cosines are within float error of each other.
        for j in range(10):
            if got_ids[r, j] != cand_ids[r][order[j]]:
                assert abs(cos[order[j]] - cos[rows.tolist().index(pos[int(got_ids[r, j])])]) < 1e-5


def test_recall_at_10_on_clustered_vectors():
    n, nq = 20_000, 200
    x = datagen.clustered_vectors(n, 256, spread=0.6, seed=5)
    q = datagen.queries_near(x, nq, noise=0.4, seed=6)
    idx = HammingRescoreIndex(256)
    idx.add(np.arange(n, dtype=np.uint64), x)
    got, _ = idx.search(q, 10)
    exact = np.argsort(-(q @ x.T), axis=1, kind="stable")[:, :10]
    recall = np.mean([len(set(got[i].tolist()) & set(exact[i].tolist())) / 10 for i in range(nq)])
    assert recall >= 0.9, recall


def test_more_candidates_never_lower_recall_on_average():
    n, nq = 10_000, 100
    x = datagen.clustered_vectors(n, 128, n_clusters=50, spread=1.0, seed=8)
    q = datagen.queries_near(x, nq, noise=0.8, seed=9)
    idx = HammingRescoreIndex(128)
    idx.add(np.arange(n), x)
    exact = np.argsort(-(q @ x.T), axis=1, kind="stable")[:, :10]

    def recall(c: int) -> float:
        got, _ = idx.search(q, 10, candidates=c)
        return float(
            np.mean([len(set(got[i].tolist()) & set(exact[i].tolist())) for i in range(nq)])
        )

    r = [recall(c) for c in (10, 100, 1000, n)]
    assert r == sorted(r), r
    assert r[-1] == 10.0  # every memory rescored: exact


def test_explicit_mean_is_used_and_kept():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((50, 16)).astype(np.float32)
    mean = np.full(16, 0.05, dtype=np.float32)
    idx = HammingRescoreIndex(16, mean=mean, candidates=5)
    idx.add(np.arange(50), x)
    np.testing.assert_array_equal(idx.mean, mean)
    codes = binarize(unit(x), mean)
    want, _ = hamming_topk(np.arange(50, dtype=np.uint64), codes, binarize(unit(x[:1]), mean), 5)
    np.testing.assert_array_equal(idx.candidate_ids(x[0]), want[0])


def test_set_mean_before_first_add():
    idx = HammingRescoreIndex(4)
    assert idx.mean is None
    idx.set_mean(np.array([0.1, 0, 0, 0], dtype=np.float32))
    idx.add([1], np.ones((1, 4), dtype=np.float32))
    assert idx.mean.tolist() == pytest.approx([0.1, 0, 0, 0])


def test_scores_are_cosines_of_unnormalised_input():
    idx = HammingRescoreIndex(3)
    idx.add([1, 2], np.array([[10, 0, 0], [0, 5, 5]], dtype=np.float32))
    ids, s = idx.search(np.array([2, 0, 0], dtype=np.float32), 2)
    assert ids.tolist() == [1, 2]
    np.testing.assert_allclose(s, [1.0, 0.0], atol=1e-6)


def test_short_result_padded_with_minus_inf():
    idx = HammingRescoreIndex(3)
    idx.add([4], np.ones((1, 3), dtype=np.float32))
    ids, s = idx.search(np.ones((2, 3), dtype=np.float32), 3)
    assert ids.shape == (2, 3)
    assert ids[0].tolist() == [4, PAD_ID, PAD_ID]
    assert np.isneginf(s[:, 1:]).all()


def test_empty_index_search_is_padding():
    ids, s = HammingRescoreIndex(3).search(np.ones(3, dtype=np.float32), 2)
    assert ids.tolist() == [PAD_ID, PAD_ID] and np.isneginf(s).all()


def test_remove_contains_len_memory():
    idx = HammingRescoreIndex(32)
    base = idx.memory_bytes()
    idx.add(np.arange(100), np.ones((100, 32), dtype=np.float32))
    assert idx.memory_bytes() - base >= 100 * (32 * 4 + 8 + 8)
    idx.remove([3, 4])
    assert len(idx) == 98 and 3 not in idx and 5 in idx
    ids, _ = idx.search(np.ones(32, dtype=np.float32), 100)
    assert 3 not in ids.tolist() and ids[:3].tolist() == [0, 1, 2]
