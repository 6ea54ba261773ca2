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


def test_rows_mode_equals_own_copy_through_removals_and_a_moved_matrix():
    """HammingRescoreRows over a matrix the caller keeps gives exactly (ids, scores, order)
    what HammingRescoreIndex gives with its own copy of the same unit rows: after removals
    that compact the store, re-added ids, and a matrix reallocated (grown) in between."""
    from chitta.organs.index.hamming_rescore import HammingRescoreRows

    rng = np.random.default_rng(5)
    dim, n = 100, 2000
    mat = np.zeros((n, dim), np.float32)
    mat[:] = unit(rng.standard_normal((n, dim)).astype(np.float32))
    mean = mat.mean(axis=0).astype(np.float32)
    ids = rng.permutation(50_000)[:n].astype(np.uint64)
    rows = rng.permutation(n).astype(np.int64)  # rows in any order, not slot order
    own = HammingRescoreIndex(dim, candidates=80, mean=mean)
    refs = HammingRescoreRows(dim, mean, candidates=80)
    for lo in (0, 700):
        hi = lo + 700
        own.add_coded(ids[lo:hi], mat[rows[lo:hi]], binarize(mat[rows[lo:hi]], mean))
        refs.add_refs(ids[lo:hi], rows[lo:hi], binarize(mat[rows[lo:hi]], mean))
    gone = ids[:700][rng.random(700) < 0.4]  # more than a quarter: the stores compact
    own.remove(gone)
    refs.remove(gone)
    back = gone[:50]
    where = {int(m): int(r) for m, r in zip(ids, rows)}
    back_rows = np.array([where[int(m)] for m in back], np.int64)
    own.add_coded(back, mat[back_rows], binarize(mat[back_rows], mean))
    refs.add_refs(back, back_rows, binarize(mat[back_rows], mean))
    grown = np.zeros(
        (2 * n, dim), np.float32
    )  # the owner grows its matrix: rows keep their numbers
    grown[:n] = mat
    queries = rng.standard_normal((6, dim)).astype(np.float32)
    for matrix in (mat, grown):
        for c in (80, len(own)):
            got = refs.search(queries, 10, matrix, candidates=c)
            want = own.search(queries, 10, candidates=c)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
            for q in queries[:2]:
                assert np.array_equal(
                    refs.candidate_ids(q, candidates=c), own.candidate_ids(q, candidates=c)
                )
    assert len(refs) == len(own)
    # a row number (8 bytes) where the copy keeps the row (4 x dim bytes)
    assert own.memory_bytes() - refs.memory_bytes() >= len(own) * (4 * dim - 8)


def test_rows_mode_refuses_what_it_cannot_read():
    from chitta import _core
    from chitta.errors import InvalidArgument
    from chitta.organs.index.hamming_rescore import HammingRescoreRows

    dim = 8
    mat = unit(np.random.default_rng(1).standard_normal((4, dim)).astype(np.float32))
    mean = mat.mean(axis=0).astype(np.float32)
    idx = HammingRescoreRows(dim, mean, candidates=4)
    idx.add_refs(
        np.array([1, 2, 3], np.uint64),
        np.array([0, 1, 3], np.int64),
        binarize(mat[[0, 1, 3]], mean),
    )
    with pytest.raises(InvalidArgument, match="past the matrix"):
        idx.search(mat[0], 2, mat[:3])  # id 3's row 3 is not in a 3-row matrix
    with pytest.raises(InvalidArgument, match="negative"):
        idx.add_refs(np.array([9], np.uint64), np.array([-1], np.int64), binarize(mat[:1], mean))
    with pytest.raises(InvalidArgument, match="matrix width"):
        idx.search(mat[0], 2, np.zeros((4, dim + 1), np.float32))
    with pytest.raises(InvalidArgument, match="must match"):
        idx.add_refs(np.array([9, 10], np.uint64), np.array([0], np.int64), binarize(mat[:2], mean))
    raw = _core.HammingRescoreIndex(dim, 4, True)
    raw.set_mean(mean)
    with pytest.raises(InvalidArgument, match="external rows"):
        raw.add(np.array([5], np.uint64), mat[:1])
    with pytest.raises(InvalidArgument, match="give the matrix"):
        raw.search(mat[:1], 1, 4)
    own = _core.HammingRescoreIndex(dim, 4)
    own.set_mean(mean)
    with pytest.raises(InvalidArgument, match="its own rows"):
        own.add_refs(np.array([5], np.uint64), np.array([0], np.int64), binarize(mat[:1], mean))
    assert len(idx) == 3  # nothing the refusals touched was added
