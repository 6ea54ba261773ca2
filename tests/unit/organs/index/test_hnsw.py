"""HNSW recall, deletions, filters, persistence and concurrency on 50K clustered vectors.

The oracle is a float64 numpy brute force (``_hnsw_helpers.numpy_knn``). The
graph (defaults M=16, ef_construction=200, built with 2 threads) comes from
``_hnsw_data`` and is copied through save/load where a test mutates it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import _hnsw_data as D
import datagen
import numpy as np
import pytest
from _hnsw_helpers import numpy_knn, recall

from chitta.errors import CorruptionError, CrcMismatch
from chitta.organs.index import HNSW, BruteForceIndex
from chitta.organs.index.hnsw import NO_ID

pytestmark = (
    pytest.mark.slow
)  # ~13 s: graphs built against brute force; outside the fast subset (docs/CONTRIBUTING.md)

N, DIM, NQ, K = D.N, D.DIM, D.NQ, D.K


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return D.data()


@pytest.fixture(scope="module")
def ids() -> np.ndarray:
    return D.ids()


@pytest.fixture(scope="module")
def queries() -> np.ndarray:
    return D.queries()


@pytest.fixture(scope="module")
def truth() -> np.ndarray:
    return D.truth()


@pytest.fixture(scope="module")
def saved() -> Path:
    return D.full_path()


@pytest.fixture(scope="module")
def index(saved: Path) -> HNSW:
    return HNSW.load(saved)


def test_recall_at_default_ef_vs_brute_force(
    index: HNSW, queries: np.ndarray, truth: np.ndarray
) -> None:
    got, dist = index.search(queries, K)
    assert got.dtype == np.uint64 and dist.dtype == np.float32 and got.shape == (NQ, K)
    assert recall(truth, got) >= 0.95
    assert np.all(np.diff(dist, axis=1) >= 0)


def test_distances_match_the_oracle(
    index: HNSW, data: np.ndarray, ids: np.ndarray, queries: np.ndarray
) -> None:
    got, dist = index.search(queries[:20], K)
    lookup = {int(i): n for n, i in enumerate(ids)}
    rows = data[[lookup[int(i)] for i in got.ravel()]].reshape(20, K, DIM).astype(np.float64)
    q = queries[:20].astype(np.float64)
    expect = 1.0 - np.einsum("qkd,qd->qk", rows, q / np.linalg.norm(q, axis=1, keepdims=True))
    np.testing.assert_allclose(dist, expect, atol=2e-5)


def test_graph_invariants_hold_after_multithreaded_build(index: HNSW) -> None:
    index.check_integrity()
    assert index.unreachable_count() == 0
    assert len(index) == N == index.node_count


def test_recall_after_twenty_percent_deletions(
    saved: Path, data: np.ndarray, ids: np.ndarray, queries: np.ndarray
) -> None:
    h = HNSW.load(saved)
    rng = np.random.default_rng(3)
    gone = rng.choice(N, size=N // 5, replace=False)
    h.remove(ids[gone])
    assert len(h) == N - N // 5
    keep = np.ones(N, dtype=bool)
    keep[gone] = False
    truth = numpy_knn(data, ids, queries, K, mask=keep)[0]
    got, _ = h.search(queries, K)
    assert not np.isin(got, ids[gone]).any()
    assert recall(truth, got) >= 0.95


def test_save_load_round_trip_gives_identical_results(
    index: HNSW, saved: Path, queries: np.ndarray
) -> None:
    loaded = HNSW.load(saved)
    assert (loaded.dim, loaded.M, loaded.ef_construction, loaded.metric) == (DIM, 16, 200, "cosine")
    assert len(loaded) == len(index)
    a_ids, a_dist = index.search(queries, K)
    b_ids, b_dist = loaded.search(queries, K)
    np.testing.assert_array_equal(a_ids, b_ids)
    np.testing.assert_array_equal(a_dist, b_dist)


def test_flipped_byte_is_detected(saved: Path, tmp_path: Path) -> None:
    raw = bytearray(saved.read_bytes())
    raw[len(raw) // 3] ^= 0x10
    bad = tmp_path / "flipped.hnsw"
    bad.write_bytes(bytes(raw))
    with pytest.raises(CrcMismatch):
        HNSW.load(bad)


def test_truncated_file_is_corruption(saved: Path, tmp_path: Path) -> None:
    bad = tmp_path / "cut.hnsw"
    bad.write_bytes(saved.read_bytes()[:-1000])
    with pytest.raises(CorruptionError, match="truncated"):
        HNSW.load(bad)


@pytest.mark.parametrize("fraction", [0.3, 0.05, 0.004])
def test_filter_returns_only_allowed_ids_with_good_recall(
    index: HNSW, data: np.ndarray, ids: np.ndarray, queries: np.ndarray, fraction: float
) -> None:
    rng = np.random.default_rng(int(fraction * 1000))
    mask = rng.random(N) < fraction
    allowed = ids[mask]
    truth = numpy_knn(data, ids, queries, K, mask=mask)[0]
    got, _ = index.search(queries, K, allowed=allowed)
    assert np.isin(got, allowed).all()
    assert recall(truth, got) >= 0.95


def test_concurrent_searches_match_sequential(index: HNSW, queries: np.ndarray) -> None:
    expect = index.search(queries, K)
    results: list[tuple[np.ndarray, np.ndarray]] = [expect] * 4
    errors: list[BaseException] = []

    def run(slot: int) -> None:
        try:
            results[slot] = index.search(queries, K)
        except Exception as exc:  # noqa: BLE001 - re-raised via the errors list
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for got in results:
        np.testing.assert_array_equal(got[0], expect[0])
        np.testing.assert_array_equal(got[1], expect[1])


def test_batch_threads_match_single_thread(index: HNSW, queries: np.ndarray) -> None:
    a = index.search(queries, K, num_threads=1)
    b = index.search(queries, K, num_threads=3)
    np.testing.assert_array_equal(a[0], b[0])


def test_one_dimensional_query_gives_one_dimensional_result(
    index: HNSW, queries: np.ndarray
) -> None:
    got, dist = index.search(queries[0], K)
    assert got.shape == (K,) and dist.shape == (K,)
    batch, _ = index.search(queries[:1], K)
    np.testing.assert_array_equal(got, batch[0])


def test_missing_results_padded_with_no_id_and_inf() -> None:
    h = HNSW(4)
    empty_ids, empty_dist = h.search(np.ones((2, 4), dtype=np.float32), 3)
    assert (empty_ids == NO_ID).all() and np.isinf(empty_dist).all()
    h.add([5, 6], np.eye(4, dtype=np.float32)[:2])
    got, dist = h.search(np.eye(4, dtype=np.float32)[:1], 4)
    assert got[0].tolist()[:2] == [5, 6]
    assert got[0, 2] == NO_ID and got[0, 3] == NO_ID
    assert np.isinf(dist[0, 2:]).all()


def test_single_thread_build_is_deterministic() -> None:
    x = datagen.clustered_vectors(2000, 32, n_clusters=20, seed=5)
    q = datagen.queries_near(x, 30, seed=6)
    ids = np.arange(2000, dtype=np.uint64)
    results = []
    for _ in range(2):
        h = HNSW(32, ef_construction=64, seed=42)
        h.add(ids, x)
        results.append(h.search(q, 5, ef=8))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_inner_product_metric_uses_raw_dot() -> None:
    x = np.array([[1, 0], [3, 0], [0, 2]], dtype=np.float32)
    h = HNSW(2, metric="ip")
    h.add([1, 2, 3], x)
    got, dist = h.search(np.array([1, 0], dtype=np.float32), 3)
    assert got.tolist() == [2, 1, 3]
    np.testing.assert_allclose(dist, [1 - 3, 1 - 1, 1 - 0])


def test_removed_id_can_be_added_again() -> None:
    x = datagen.clustered_vectors(300, 16, n_clusters=5, seed=8)
    h = HNSW(16)
    h.add(np.arange(300), x)
    h.remove([7])
    assert 7 not in h and len(h) == 299
    h.add([7], -x[:1])
    got, dist = h.search(-x[0], 1)
    assert got[0] == 7 and dist[0] == pytest.approx(0.0, abs=1e-5)


def test_contains_handles_foreign_values() -> None:
    h = HNSW(4)
    h.add([3], np.ones((1, 4), dtype=np.float32))
    assert 3 in h and np.uint64(3) in h
    assert 4 not in h and -1 not in h and "3" not in h and 2**70 not in h and NO_ID not in h


def test_brute_force_index_matches_numpy(data: np.ndarray, ids: np.ndarray) -> None:
    x, i = data[:3000], ids[:3000]
    q = datagen.queries_near(x, 25, seed=4)
    b = BruteForceIndex(DIM)
    b.add(i, x)
    got, dist = b.search(q, K)
    t_ids, t_dist = numpy_knn(x, i, q, K)
    np.testing.assert_array_equal(got, t_ids)
    np.testing.assert_allclose(dist, t_dist, atol=2e-5)


def _python_runs_throughout(call: Callable[[], object]) -> int:
    """Runs call() in a thread and returns in how many of 10 equal slices of its
    duration the main thread still ran Python. Holding the GIL inside the call
    would leave the middle slices empty."""
    window: list[float] = []

    def run() -> None:
        window.append(time.monotonic())
        call()
        window.append(time.monotonic())

    th = threading.Thread(target=run)
    stamps: list[float] = []
    th.start()
    while th.is_alive():
        stamps.append(time.monotonic())
    th.join()
    start, end = window
    slices = {int(10 * (s - start) / (end - start)) for s in stamps if start < s < end}
    return len(slices)


def test_search_releases_the_gil(index: HNSW, queries: np.ndarray) -> None:
    # A wide beam makes the call last long enough to measure.
    assert _python_runs_throughout(lambda: index.search(queries, K, ef=1500)) >= 7


def test_add_releases_the_gil() -> None:
    x = datagen.clustered_vectors(3000, 64, n_clusters=30, seed=12)
    h = HNSW(64)
    assert _python_runs_throughout(lambda: h.add(np.arange(3000), x)) >= 7
