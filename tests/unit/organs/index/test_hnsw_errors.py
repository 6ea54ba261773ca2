"""Bad input at every HNSW entry point: a clear chitta.errors class, index unchanged.

One test per failure mode. Each runs against HNSW, TieredHNSW (with a delta
tier in use) and BruteForceIndex, and checks afterwards that the index answers
exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import datagen
import numpy as np
import pytest

from chitta.errors import ChittaIOError, CorruptionError, InvalidArgument, NotFound
from chitta.organs.index import HNSW, BruteForceIndex, TieredHNSW

DIM = 8
N = 60

Index = Any


def _make(kind: str) -> Index:
    x = datagen.clustered_vectors(N, DIM, n_clusters=3, seed=1)
    if kind == "hnsw":
        idx: Index = HNSW(DIM, ef_construction=40)
    elif kind == "tiered":
        idx = TieredHNSW(DIM, ef_construction=40, threshold=40)
    else:
        idx = BruteForceIndex(DIM)
    idx.add(np.arange(N, dtype=np.uint64), x)
    return idx


@pytest.fixture(params=["hnsw", "tiered", "brute"])
def index(request: pytest.FixtureRequest) -> Index:
    return _make(request.param)


_Q = datagen.clustered_vectors(5, DIM, n_clusters=3, seed=2)


def _snapshot(idx: Index) -> tuple[int, np.ndarray, np.ndarray]:
    ids, dist = idx.search(_Q, 10, ef=N)
    return len(idx), ids, dist


def _assert_unchanged(idx: Index, before: tuple[int, np.ndarray, np.ndarray]) -> None:
    after = _snapshot(idx)
    assert after[0] == before[0]
    np.testing.assert_array_equal(after[1], before[1])
    np.testing.assert_array_equal(after[2], before[2])


def _expect(idx: Index, exc: type[BaseException], match: str, fn: Callable[[], object]) -> None:
    before = _snapshot(idx)
    with pytest.raises(exc, match=match):
        fn()
    _assert_unchanged(idx, before)


def _vecs(n: int = 2) -> np.ndarray:
    return datagen.clustered_vectors(n, DIM, n_clusters=2, seed=9)


# ---- add ---------------------------------------------------------------------


def test_add_float64_vectors_rejected(index: Index) -> None:
    _expect(
        index, InvalidArgument, "float32", lambda: index.add([100, 101], _vecs().astype(np.float64))
    )


def test_add_list_vectors_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "numpy", lambda: index.add([100], [[0.0] * DIM]))


def test_add_wrong_dim_rejected(index: Index) -> None:
    _expect(
        index,
        InvalidArgument,
        "columns",
        lambda: index.add([100], np.ones((1, DIM + 1), np.float32)),
    )


def test_add_three_dimensional_rejected(index: Index) -> None:
    _expect(
        index, InvalidArgument, "2-D", lambda: index.add([100], np.ones((1, 1, DIM), np.float32))
    )


def test_add_length_mismatch_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "ids for", lambda: index.add([100, 101, 102], _vecs()))


def test_add_nan_rejected(index: Index) -> None:
    v = _vecs()
    v[1, 3] = np.nan
    _expect(index, InvalidArgument, "NaN", lambda: index.add([100, 101], v))


def test_add_inf_rejected(index: Index) -> None:
    v = _vecs()
    v[0, 0] = np.inf
    _expect(index, InvalidArgument, "infinite", lambda: index.add([100, 101], v))


def test_add_zero_vector_rejected_for_cosine(index: Index) -> None:
    v = _vecs()
    v[1] = 0
    _expect(index, InvalidArgument, "zero", lambda: index.add([100, 101], v))


def test_add_duplicate_id_in_batch_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "twice", lambda: index.add([100, 100], _vecs()))


def test_add_existing_id_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "already", lambda: index.add([100, 5], _vecs()))


def test_add_existing_delta_id_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "already", lambda: index.add([100, N - 1], _vecs()))


def test_add_reserved_id_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "reserved", lambda: index.add([100, 2**64 - 1], _vecs()))


def test_add_negative_id_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "non-negative", lambda: index.add([100, -1], _vecs()))


def test_add_float_ids_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "integers", lambda: index.add(np.array([1.0, 2.0]), _vecs()))


def test_add_zero_threads_rejected(index: Index) -> None:
    _expect(
        index, InvalidArgument, "num_threads", lambda: index.add([100, 101], _vecs(), num_threads=0)
    )


def test_zero_vector_allowed_for_inner_product() -> None:
    h = HNSW(DIM, metric="ip")
    h.add([1], np.zeros((1, DIM), np.float32))
    assert len(h) == 1


# ---- remove ------------------------------------------------------------------


def test_remove_unknown_id_not_found(index: Index) -> None:
    _expect(index, NotFound, "not in the index", lambda: index.remove([1, 2, 999]))


def test_remove_duplicate_id_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "twice", lambda: index.remove([4, 4]))


def test_remove_already_removed_not_found(index: Index) -> None:
    index.remove([4])
    _expect(index, NotFound, "not in the index", lambda: index.remove([5, 4]))


def test_remove_two_dimensional_ids_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "1-D", lambda: index.remove([[1, 2]]))


# ---- search ------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, -3])
def test_search_non_positive_k_rejected(index: Index, k: int) -> None:
    _expect(index, InvalidArgument, "k must be", lambda: index.search(_Q, k))


def test_search_bool_k_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "k must be", lambda: index.search(_Q, True))


def test_search_zero_ef_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "ef must be", lambda: index.search(_Q, 3, ef=0))


def test_search_float64_queries_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "float32", lambda: index.search(_Q.astype(np.float64), 3))


def test_search_wrong_dim_rejected(index: Index) -> None:
    _expect(
        index, InvalidArgument, "columns", lambda: index.search(np.ones(DIM - 1, np.float32), 3)
    )


def test_search_nan_query_rejected(index: Index) -> None:
    q = _Q.copy()
    q[2, 1] = np.nan
    _expect(index, InvalidArgument, "NaN", lambda: index.search(q, 3))


def test_search_zero_query_rejected_for_cosine(index: Index) -> None:
    _expect(index, InvalidArgument, "zero", lambda: index.search(np.zeros(DIM, np.float32), 3))


def test_search_bad_allowed_dtype_rejected(index: Index) -> None:
    _expect(index, InvalidArgument, "allowed", lambda: index.search(_Q, 3, allowed=np.array([0.5])))


def test_search_unknown_allowed_ids_are_ignored(index: Index) -> None:
    ids, _ = index.search(_Q, 3, allowed=[7, 10**12])
    assert set(ids[:, 0].tolist()) == {7}
    assert (ids[:, 1:] == 2**64 - 1).all()


# ---- construction and files ---------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dim": 0}, "dim"),
        ({"dim": 8, "M": 1}, "M"),
        ({"dim": 8, "ef_construction": 0}, "ef_construction"),
        ({"dim": 8, "metric": "l2"}, "metric"),
        ({"dim": 8, "ef": 0}, "ef"),
        ({"dim": 8.0}, "dim"),
    ],
)
def test_bad_constructor_arguments_rejected(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        HNSW(**kwargs)
    with pytest.raises(InvalidArgument, match=match):
        TieredHNSW(**kwargs)


def test_load_missing_file_is_io_error(tmp_path: Path) -> None:
    with pytest.raises(ChittaIOError):
        HNSW.load(tmp_path / "nope.hnsw")


def test_load_wrong_magic_is_corruption(tmp_path: Path) -> None:
    p = tmp_path / "x.hnsw"
    p.write_bytes(b"NOTHNSW!" + bytes(100))
    with pytest.raises(CorruptionError, match="magic"):
        HNSW.load(p)
