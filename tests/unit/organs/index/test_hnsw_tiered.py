"""TieredHNSW: routing past the threshold, merged search, merge, RRF vs distance, persistence.

The 50K recall checks reuse the session-built graphs of ``_hnsw_data``: a base
of 45K (threshold 45K) and a delta of 5K, which exceeds merge_ratio=0.10 of
the base, so ``merge()`` fires. Oracle: numpy brute force.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import _hnsw_data as D
import datagen
import numpy as np
import pytest
from _hnsw_helpers import numpy_knn, recall

from chitta.errors import CorruptionError, InvalidArgument, NotFound
from chitta.organs.index import TieredHNSW
from chitta.organs.index.hnsw import HNSW_DELTA_MERGE_RATIO, HNSW_TIER2_THRESHOLD, delta_path


@pytest.fixture()
def tiered(tmp_path: Path) -> TieredHNSW:
    base = tmp_path / "t.hnsw"
    shutil.copy(D.base_path(), base)
    shutil.copy(D.delta_path(), delta_path(base))
    return TieredHNSW.load(base, threshold=D.BASE, merge_ratio=0.10)


def test_seed_constants() -> None:
    assert HNSW_TIER2_THRESHOLD == 100_000
    assert HNSW_DELTA_MERGE_RATIO == 0.10
    t = TieredHNSW(8)
    assert t.threshold == 100_000 and t.merge_ratio == 0.10


def test_delta_path_naming() -> None:
    assert delta_path("x/mem.hnsw") == "x/mem.delta.hnsw"
    assert delta_path("x/mem") == "x/mem.delta.hnsw"


def test_inserts_past_threshold_go_to_delta() -> None:
    x = datagen.clustered_vectors(130, 16, n_clusters=4, seed=1)
    t = TieredHNSW(16, threshold=100, merge_ratio=0.5, ef_construction=40)
    t.add(np.arange(90), x[:90])
    t.add(np.arange(90, 130), x[90:])
    assert (t.base_size, t.delta_size, len(t)) == (100, 30, 130)
    assert not t.needs_merge  # 30 <= 0.5 * 100
    t.add(np.arange(130, 151), datagen.clustered_vectors(21, 16, n_clusters=4, seed=2))
    assert t.needs_merge and t.merge()
    assert (t.base_size, t.delta_size, t.merge_count) == (151, 0, 1)


def test_merge_only_when_delta_exceeds_ratio() -> None:
    x = datagen.clustered_vectors(110, 16, n_clusters=4, seed=3)
    t = TieredHNSW(16, threshold=100, merge_ratio=0.10, ef_construction=40)
    t.add(np.arange(110), x)
    assert not t.needs_merge and not t.merge()  # 10 is not > 10% of 100
    assert t.delta_size == 10
    assert t.merge(force=True) and t.delta_size == 0 and t.base_size == 110


def test_recall_spans_both_tiers_and_after_merge(tiered: TieredHNSW) -> None:
    assert (tiered.base_size, tiered.delta_size) == (D.BASE, D.N - D.BASE)
    truth = D.truth()
    got, _ = tiered.search(D.queries(), D.K)
    before = recall(truth, got)
    assert before >= 0.95
    assert tiered.needs_merge
    assert tiered.merge(num_threads=D.THREADS)
    assert (tiered.base_size, tiered.delta_size) == (D.N, 0)
    got, _ = tiered.search(D.queries(), D.K)
    assert recall(truth, got) >= 0.95


def test_distance_merge_recalls_better_than_rrf(
    tiered: TieredHNSW, record_property: pytest.RecordProperty
) -> None:
    truth = D.truth()
    by_distance = recall(truth, tiered.search(D.queries(), D.K, merge="distance")[0])
    by_rrf = recall(truth, tiered.search(D.queries(), D.K, merge="rrf")[0])
    record_property("recall_distance_merge", by_distance)
    record_property("recall_rrf_merge", by_rrf)
    print(f"recall@10 distance merge {by_distance:.4f}, RRF merge {by_rrf:.4f}")
    assert by_distance > by_rrf


def test_rrf_reports_true_distances(tiered: TieredHNSW) -> None:
    got, dist = tiered.search(D.queries()[:5], D.K, merge="rrf")
    lookup = {int(i): n for n, i in enumerate(D.ids())}
    rows = D.data()[[lookup[int(i)] for i in got.ravel()]].reshape(5, D.K, D.DIM)
    q = D.queries()[:5].astype(np.float64)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    expect = 1.0 - np.einsum("qkd,qd->qk", rows.astype(np.float64), q)
    np.testing.assert_allclose(dist, expect, atol=2e-5)


def test_remove_reaches_both_tiers(tiered: TieredHNSW) -> None:
    ids = D.ids()
    gone = np.concatenate([ids[:4000:2], ids[D.BASE : D.BASE + 2000 : 2]])
    tiered.remove(gone)
    assert len(tiered) == D.N - len(gone)
    keep = ~np.isin(ids, gone)
    truth = numpy_knn(D.data(), ids, D.queries(), D.K, mask=keep)[0]
    got, _ = tiered.search(D.queries(), D.K)
    assert not np.isin(got, gone).any()
    assert recall(truth, got) >= 0.95
    tiered.merge(force=True, num_threads=D.THREADS)
    assert all(int(i) not in tiered for i in gone[:50])


def test_filter_spans_both_tiers(tiered: TieredHNSW) -> None:
    ids = D.ids()
    mask = np.random.default_rng(5).random(D.N) < 0.2
    got, _ = tiered.search(D.queries(), D.K, allowed=ids[mask])
    assert np.isin(got, ids[mask]).all()
    truth = numpy_knn(D.data(), ids, D.queries(), D.K, mask=mask)[0]
    assert recall(truth, got) >= 0.95


def test_searches_continue_while_merge_runs(tiered: TieredHNSW) -> None:
    q = D.queries()[:20]
    stop = threading.Event()
    stamps: list[float] = []
    errors: list[BaseException] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                got, _ = tiered.search(q, D.K)
                assert (got != 2**64 - 1).all()
            except Exception as exc:  # noqa: BLE001 - re-raised via the errors list
                errors.append(exc)
                return
            stamps.append(time.monotonic())

    th = threading.Thread(target=reader)
    th.start()
    start = time.monotonic()
    assert tiered.merge(num_threads=1)
    end = time.monotonic()
    stop.set()
    th.join()
    assert not errors
    # Searches completed while the merge was running, not only before/after.
    assert sum(start < s < end for s in stamps) >= 2


def test_save_load_round_trip(tmp_path: Path) -> None:
    x = datagen.clustered_vectors(300, 16, n_clusters=5, seed=4)
    t = TieredHNSW(16, threshold=200, merge_ratio=5.0, ef_construction=40)
    t.add(np.arange(300), x)
    t.remove([3, 250])
    t.save(tmp_path / "m.hnsw")
    assert (tmp_path / "m.delta.hnsw").exists()
    u = TieredHNSW.load(tmp_path / "m.hnsw", threshold=200, merge_ratio=5.0)
    assert (u.base_size, u.delta_size) == (199, 99)
    q = datagen.queries_near(x, 10, seed=5)
    for a, b in zip(t.search(q, 5), u.search(q, 5)):
        np.testing.assert_array_equal(a, b)


def test_mismatched_tier_files_are_corruption(tmp_path: Path) -> None:
    x = datagen.clustered_vectors(50, 8, n_clusters=3, seed=6)
    t = TieredHNSW(8, threshold=30)
    t.add(np.arange(50), x)
    t.save(tmp_path / "a.hnsw")
    shutil.copy(tmp_path / "a.hnsw", tmp_path / "a.delta.hnsw")  # same ids live twice
    with pytest.raises(CorruptionError, match="both"):
        TieredHNSW.load(tmp_path / "a.hnsw", threshold=30)


def test_duplicate_across_tiers_rejected_unchanged() -> None:
    x = datagen.clustered_vectors(20, 8, n_clusters=2, seed=7)
    t = TieredHNSW(8, threshold=10)
    t.add(np.arange(20), x)
    with pytest.raises(InvalidArgument, match="already"):
        t.add([100, 15], x[:2])
    assert len(t) == 20 and 100 not in t


def test_remove_unknown_id_not_found_unchanged() -> None:
    x = datagen.clustered_vectors(20, 8, n_clusters=2, seed=8)
    t = TieredHNSW(8, threshold=10)
    t.add(np.arange(20), x)
    with pytest.raises(NotFound):
        t.remove([3, 12, 999])
    assert 3 in t and 12 in t and len(t) == 20


def test_bad_merge_mode_rejected() -> None:
    t = TieredHNSW(4)
    with pytest.raises(InvalidArgument, match="merge"):
        t.search(np.ones(4, dtype=np.float32), 1, merge="max")  # type: ignore[arg-type]


@pytest.mark.parametrize("ratio", [0.0, -1.0, float("nan")])
def test_bad_merge_ratio_rejected(ratio: float) -> None:
    with pytest.raises(InvalidArgument, match="merge_ratio"):
        TieredHNSW(4, merge_ratio=ratio)
