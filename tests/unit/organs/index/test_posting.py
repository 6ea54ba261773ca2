"""PostingIndex search against the numpy brute-force reference."""

from __future__ import annotations

import threading

import datagen
import numpy as np
import pytest
from posting_reference import numpy_reference

from chitta.organs.index import PostingIndex
from chitta.organs.index.posting import PAD_ID


def random_codes(rng: np.random.Generator, n: int, n_features: int, active: int) -> np.ndarray:
    """n rows of `active` distinct feature ids, deliberately unsorted."""
    return np.argsort(rng.random((n, n_features)), axis=1)[:, :active].astype(np.uint32)


def quarter_acts(rng: np.random.Generator, n: int, active: int) -> np.ndarray:
    """Activations in {0.25, 0.5, 0.75, 1.0}: exact sums, many ties."""
    return (rng.integers(1, 5, size=(n, active)) * 0.25).astype(np.float32)


class Stored:
    """What the index should hold, in insertion order (for numpy_reference)."""

    def __init__(self, n_features: int, active: int) -> None:
        self.n_features = n_features
        self.ids = np.zeros(0, np.uint64)
        self.feats = np.zeros((0, active), np.uint32)
        self.acts = np.zeros((0, active), np.float32)
        self.live = np.zeros(0, bool)

    def add(self, ids: np.ndarray, feats: np.ndarray, acts: np.ndarray | None) -> None:
        if acts is None:
            acts = np.ones(feats.shape, np.float32)
        self.ids = np.concatenate([self.ids, ids])
        self.feats = np.concatenate([self.feats, feats])
        self.acts = np.concatenate([self.acts, acts])
        self.live = np.concatenate([self.live, np.ones(len(ids), bool)])

    def remove(self, ids: np.ndarray) -> None:
        self.live &= ~np.isin(self.ids, ids)

    def search(self, q: np.ndarray, k: int, allowed: np.ndarray | None = None):
        return numpy_reference(
            self.ids, self.feats, self.acts, self.live, self.n_features, q, k, allowed
        )


def assert_matches(index: PostingIndex, stored: Stored, queries: np.ndarray, k: int, allowed=None):
    got_ids, got_counts = index.search(queries, k, allowed)
    for i, q in enumerate(queries):
        want_ids, want_counts = stored.search(q, k, allowed)
        np.testing.assert_array_equal(got_ids[i], want_ids, err_msg=f"query {i}")
        np.testing.assert_array_equal(got_counts[i], want_counts, err_msg=f"query {i}")


def build(seed: int, n: int, n_features: int, active: int, with_acts: bool):
    rng = np.random.default_rng(seed)
    index = PostingIndex(n_features=n_features, active=active)
    stored = Stored(n_features, active)
    ids = rng.permutation(10 * n)[:n].astype(np.uint64) * np.uint64(7919)
    feats = random_codes(rng, n, n_features, active)
    acts = quarter_acts(rng, n, active) if with_acts else None
    for lo in range(0, n, 97):  # several batches
        a = None if acts is None else acts[lo : lo + 97]
        index.add(ids[lo : lo + 97], feats[lo : lo + 97], a)
        stored.add(ids[lo : lo + 97], feats[lo : lo + 97], a)
    return rng, index, stored


@pytest.mark.parametrize("mode", ["auto", "touched", "dense"])
@pytest.mark.parametrize("with_acts", [False, True], ids=["unit", "activations"])
def test_search_matches_numpy_reference(with_acts: bool, mode: str) -> None:
    rng, index, stored = build(1, 1500, 96, 8, with_acts)
    index._set_count_mode(mode)
    for k in (1, 5, 37, 400):
        assert_matches(index, stored, random_codes(rng, 20, 96, 8), k)


def test_search_matches_reference_on_datagen_sparse_codes() -> None:
    feats, acts = datagen.sparse_codes(
        3000, n_features=2048, active=32, n_clusters=20, pool=64, from_pool=24, seed=3
    )
    ids = np.arange(3000, dtype=np.uint64) + np.uint64(2**40)
    index = PostingIndex(n_features=2048, active=32)
    index.add(ids, feats, acts)
    stored = Stored(2048, 32)
    stored.add(ids, feats, acts)
    for mode in ("touched", "dense"):
        index._set_count_mode(mode)
        assert_matches(index, stored, feats[::150], 10)
        assert_matches(index, stored, feats[::300], 250)


def test_query_width_may_differ_from_active() -> None:
    rng, index, stored = build(2, 800, 64, 8, True)
    assert_matches(index, stored, random_codes(rng, 10, 64, 3), 20)
    assert_matches(index, stored, random_codes(rng, 10, 64, 40), 20)


@pytest.mark.parametrize("mode", ["touched", "dense"])
def test_removed_memories_are_skipped(mode: str) -> None:
    rng, index, stored = build(4, 1200, 80, 8, True)
    index._set_count_mode(mode)
    gone = rng.choice(stored.ids, size=200, replace=False)  # 1/6: below auto-compaction
    index.remove(gone)
    stored.remove(gone)
    assert index.num_tombstones == 200
    assert len(index) == 1000
    assert_matches(index, stored, random_codes(rng, 15, 80, 8), 30)
    index.compact()
    assert index.num_tombstones == 0
    assert_matches(index, stored, random_codes(rng, 15, 80, 8), 30)


@pytest.mark.parametrize("mode", ["touched", "dense"])
@pytest.mark.parametrize("strategy", ["auto", "count", "scan"])
def test_allowed_restricts_results(strategy: str, mode: str) -> None:
    rng, index, stored = build(5, 1200, 80, 8, True)
    index._set_count_mode(mode)
    index.remove(stored.ids[:100])
    stored.remove(stored.ids[:100])
    index._set_allowed_strategy(strategy)
    for size in (0, 5, 300, 1200):
        allowed = rng.choice(stored.ids, size=size, replace=False)
        # unknown and removed ids are ignored, duplicates harmless
        allowed = np.concatenate([allowed, stored.ids[:3], [np.uint64(12345)], allowed[:2]])
        assert_matches(index, stored, random_codes(rng, 8, 80, 8), 25, allowed.astype(np.uint64))


def test_single_query_gives_1d_results_equal_to_batch_row() -> None:
    rng, index, _ = build(6, 500, 64, 8, True)
    queries = random_codes(rng, 5, 64, 8)
    batch_ids, batch_counts = index.search(queries, 7)
    assert batch_ids.shape == (5, 7) and batch_ids.dtype == np.uint64
    assert batch_counts.shape == (5, 7) and batch_counts.dtype == np.uint32
    for i in range(5):
        ids, counts = index.search(queries[i], 7)
        assert ids.shape == (7,) and counts.shape == (7,)
        np.testing.assert_array_equal(ids, batch_ids[i])
        np.testing.assert_array_equal(counts, batch_counts[i])


def test_fewer_hits_than_k_are_padded() -> None:
    index = PostingIndex(n_features=32, active=2)
    index.add(np.array([1, 2, 3], np.uint64), np.array([[0, 1], [1, 2], [5, 6]], np.uint32))
    ids, counts = index.search(np.array([1, 9], np.uint32), 4)
    assert ids.tolist() == [1, 2, PAD_ID, PAD_ID]
    assert counts.tolist() == [1, 1, 0, 0]
    ids, counts = PostingIndex(32, 2).search(np.array([1, 9], np.uint32), 2)
    assert ids.tolist() == [PAD_ID, PAD_ID] and counts.tolist() == [0, 0]


def test_activation_breaks_count_ties_then_insertion_order() -> None:
    index = PostingIndex(n_features=16, active=2)
    feats = np.array([[1, 2], [1, 3], [1, 4], [1, 5]], np.uint32)
    acts = np.array([[0.5, 1], [0.9, 1], [0.5, 1], [0.9, 0]], np.float32)
    index.add(np.array([10, 11, 12, 13], np.uint64), feats, acts)
    ids, counts = index.search(np.array([1, 9], np.uint32), 4)
    # all share feature 1; its stored activation ranks them, then insertion
    assert ids.tolist() == [11, 13, 10, 12]
    assert counts.tolist() == [1, 1, 1, 1]


def test_readded_id_ranks_as_newest() -> None:
    index = PostingIndex(n_features=16, active=2)
    index.add(np.array([1, 2], np.uint64), np.array([[1, 2], [1, 2]], np.uint32))
    index.remove(np.array([1], np.uint64))
    index.add(np.array([1], np.uint64), np.array([[2, 1]], np.uint32))
    ids, _ = index.search(np.array([1, 2], np.uint32), 2)
    assert ids.tolist() == [2, 1]
    assert index.ids().tolist() == [2, 1]


def test_auto_compaction_past_a_quarter_of_slots() -> None:
    rng, index, stored = build(7, 400, 64, 4, False)
    index.remove(stored.ids[:100])  # exactly 25%: kept as tombstones
    assert index.num_tombstones == 100
    index.remove(stored.ids[100:101])
    assert index.num_tombstones == 0
    stored.remove(stored.ids[:101])
    assert_matches(index, stored, random_codes(rng, 10, 64, 4), 15)


def test_len_contains_properties_and_memory() -> None:
    index = PostingIndex()
    assert (index.n_features, index.active, len(index)) == (16384, 64, 0)
    empty = index.memory_bytes()
    feats, acts = datagen.sparse_codes(200, seed=1)
    index.add(np.arange(200, dtype=np.uint64), feats, acts)
    assert len(index) == 200
    assert 0 in index and 199 in index and 200 not in index
    assert "x" not in index and -1 not in index and True not in index
    # at least rows (ids, features as u16 below 65,536 features, activations) and one
    # u32 posting per feature
    assert index.memory_bytes() - empty >= 200 * (8 + 64 * (2 + 4 + 4))


def test_get_returns_sorted_row_with_aligned_activations() -> None:
    index = PostingIndex(n_features=32, active=3)
    index.add(
        np.array([5], np.uint64),
        np.array([[9, 2, 4]], np.uint32),
        np.array([[0.9, 0.2, 0.4]], np.float32),
    )
    feats, acts = index.get(5)
    assert feats.tolist() == [2, 4, 9]
    np.testing.assert_array_equal(acts, np.array([0.2, 0.4, 0.9], np.float32))


def test_python_sequences_are_accepted() -> None:
    index = PostingIndex(n_features=16, active=2)
    index.add([3, 4], [[1, 2], [2, 3]], [[1.0, 0.5], [1.0, 1.0]])
    ids, counts = index.search([2, 3], 2, allowed=[3, 4])
    assert ids.tolist() == [4, 3] and counts.tolist() == [2, 1]
    index.remove([3])
    assert len(index) == 1


def test_concurrent_searches_match_serial_results() -> None:
    rng, index, _ = build(8, 2000, 128, 8, True)
    queries = random_codes(rng, 64, 128, 8)
    want = index.search(queries, 10)
    errors: list[str] = []

    def worker() -> None:
        for _ in range(5):
            got = index.search(queries, 10)
            if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
                errors.append("mismatch")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
