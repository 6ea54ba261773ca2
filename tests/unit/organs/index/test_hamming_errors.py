"""Bad input at every HammingIndex / HammingRescoreIndex entry point: a clear
chitta.errors error, and the index unchanged (same size, ids and answers)."""

from __future__ import annotations

import numpy as np
import pytest

from chitta.errors import InvalidArgument, NotFound
from chitta.organs.index.hamming import HammingIndex, HammingRescoreIndex, binarize

U64 = np.uint64


def snapshot(index: HammingIndex):
    q = np.arange(8, dtype=U64).reshape(2, 4)
    ids, dist = index.search(q, 10)
    return len(index), index.ids().tolist(), ids.tolist(), dist.tolist()


@pytest.fixture
def index():
    idx = HammingIndex(256)
    rng = np.random.default_rng(0)
    idx.add(np.arange(20, dtype=U64), rng.integers(0, 2**64, (20, 4), dtype=U64))
    return idx


def codes(n, words=4):
    return np.ones((n, words), dtype=U64)


@pytest.mark.parametrize("bits", [0, -64, 100, 65, 65536 + 64])
def test_bits_not_positive_multiple_of_64(bits):
    with pytest.raises(InvalidArgument):
        HammingIndex(bits)


@pytest.mark.parametrize("bits", [64.0, "64", True, None])
def test_bits_not_an_integer(bits):
    with pytest.raises(InvalidArgument):
        HammingIndex(bits)


def test_add_duplicate_existing_id(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="already"):
        index.add(np.array([100, 5], dtype=U64), codes(2))
    assert snapshot(index) == before and 100 not in index


def test_add_duplicate_within_batch(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="twice"):
        index.add(np.array([100, 100], dtype=U64), codes(2))
    assert snapshot(index) == before


def test_add_reserved_pad_id(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="reserved"):
        index.add(np.array([2**64 - 1], dtype=U64), codes(1))
    assert snapshot(index) == before


def test_add_negative_id(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="negative"):
        index.add(np.array([-1], dtype=np.int64), codes(1))
    assert snapshot(index) == before


@pytest.mark.parametrize("dtype", [np.float64, np.bool_, np.str_])
def test_add_ids_wrong_dtype(index, dtype):
    before = snapshot(index)
    with pytest.raises(InvalidArgument):
        index.add(np.array([100], dtype=dtype), codes(1))
    assert snapshot(index) == before


def test_add_ids_not_1d(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument):
        index.add(np.array([[100]], dtype=U64), codes(1))
    assert snapshot(index) == before


@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.float64])
def test_add_codes_wrong_dtype(index, dtype):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="uint64"):
        index.add(np.array([100], dtype=U64), np.ones((1, 4), dtype=dtype))
    assert snapshot(index) == before


@pytest.mark.parametrize("shape", [(1, 3), (1, 5), (4,), (1, 4, 1)])
def test_add_codes_wrong_shape(index, shape):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="shape"):
        index.add(np.array([100], dtype=U64), np.ones(shape, dtype=U64))
    assert snapshot(index) == before


def test_add_count_mismatch(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="must match"):
        index.add(np.array([100, 101], dtype=U64), codes(3))
    assert snapshot(index) == before


def test_remove_unknown_id(index):
    before = snapshot(index)
    with pytest.raises(NotFound):
        index.remove(np.array([3, 999], dtype=U64))
    with pytest.raises(KeyError):  # NotFound is also a KeyError
        index.remove([999])
    assert snapshot(index) == before and 3 in index


def test_remove_duplicate_within_batch(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="twice"):
        index.remove(np.array([3, 3], dtype=U64))
    assert snapshot(index) == before


@pytest.mark.parametrize("k", [0, -1, 2.5, None, True])
def test_search_bad_k(index, k):
    with pytest.raises(InvalidArgument):
        index.search(np.zeros(4, dtype=U64), k)


@pytest.mark.parametrize("shape", [(3,), (2, 5), (1, 1, 4)])
def test_search_wrong_query_width(index, shape):
    with pytest.raises(InvalidArgument, match="shape"):
        index.search(np.zeros(shape, dtype=U64), 3)


def test_search_wrong_query_dtype(index):
    with pytest.raises(InvalidArgument, match="uint64"):
        index.search(np.zeros(4, dtype=np.int64), 3)


def test_core_refuses_wrong_dtype_without_casting(index):
    before = snapshot(index)
    with pytest.raises(InvalidArgument, match="dtype"):
        index._core.add(np.array([100], dtype=np.int64), codes(1))
    with pytest.raises(InvalidArgument, match="contiguous"):
        index._core.add(np.array([100, 0, 101, 0], dtype=U64)[::2], codes(2))
    assert snapshot(index) == before


def test_binarize_nan_vector():
    x = np.ones((2, 8), dtype=np.float32)
    x[1, 3] = np.nan
    with pytest.raises(InvalidArgument, match="NaN"):
        binarize(x, np.zeros(8, dtype=np.float32))


def test_binarize_wrong_mean_length():
    with pytest.raises(InvalidArgument, match="mean"):
        binarize(np.ones((2, 8), dtype=np.float32), np.zeros(7, dtype=np.float32))


def test_binarize_float64_refused():
    with pytest.raises(InvalidArgument, match="float32"):
        binarize(np.ones((2, 8)), np.zeros(8, dtype=np.float32))


# ---- HammingRescoreIndex ----------------------------------------------------------


def rsnapshot(idx: HammingRescoreIndex):
    q = np.eye(8, dtype=np.float32)[:2]
    ids, scores = idx.search(q, 5)
    mean = idx.mean
    return len(idx), ids.tolist(), scores.tolist(), None if mean is None else mean.tolist()


@pytest.fixture
def rindex():
    idx = HammingRescoreIndex(8)
    rng = np.random.default_rng(1)
    idx.add(np.arange(30), rng.standard_normal((30, 8)).astype(np.float32))
    return idx


@pytest.mark.parametrize("dim", [0, -3, 1.5, 65537])
def test_rescore_bad_dim(dim):
    with pytest.raises(InvalidArgument):
        HammingRescoreIndex(dim)


@pytest.mark.parametrize("cand", [0, -5])
def test_rescore_bad_candidates(cand):
    with pytest.raises(InvalidArgument):
        HammingRescoreIndex(8, candidates=cand)


def test_rescore_add_nan_vector(rindex):
    before = rsnapshot(rindex)
    v = np.ones((2, 8), dtype=np.float32)
    v[0, 0] = np.nan
    with pytest.raises(InvalidArgument, match="NaN"):
        rindex.add([100, 101], v)
    assert rsnapshot(rindex) == before


def test_rescore_add_zero_vector(rindex):
    before = rsnapshot(rindex)
    with pytest.raises(InvalidArgument, match="norm"):
        rindex.add([100], np.zeros((1, 8), dtype=np.float32))
    assert rsnapshot(rindex) == before


def test_rescore_add_wrong_dim(rindex):
    before = rsnapshot(rindex)
    with pytest.raises(InvalidArgument, match="shape"):
        rindex.add([100], np.ones((1, 9), dtype=np.float32))
    assert rsnapshot(rindex) == before


def test_rescore_add_float64_refused(rindex):
    before = rsnapshot(rindex)
    with pytest.raises(InvalidArgument, match="float32"):
        rindex.add([100], np.ones((1, 8)))
    assert rsnapshot(rindex) == before


def test_rescore_add_duplicate_id(rindex):
    before = rsnapshot(rindex)
    with pytest.raises(InvalidArgument, match="already"):
        rindex.add([5], np.ones((1, 8), dtype=np.float32))
    assert rsnapshot(rindex) == before


def test_rescore_first_batch_failure_fixes_no_mean():
    idx = HammingRescoreIndex(4)
    with pytest.raises(InvalidArgument):
        idx.add([1, 1], np.ones((2, 4), dtype=np.float32))
    assert idx.mean is None and len(idx) == 0


def test_rescore_remove_unknown(rindex):
    before = rsnapshot(rindex)
    with pytest.raises(NotFound):
        rindex.remove([1, 999])
    assert rsnapshot(rindex) == before


def test_rescore_set_mean_after_add(rindex):
    before = rsnapshot(rindex)
    with pytest.raises(InvalidArgument, match="fixed"):
        rindex.set_mean(np.zeros(8, dtype=np.float32))
    assert rsnapshot(rindex) == before


def test_rescore_mean_with_nan():
    with pytest.raises(InvalidArgument, match="NaN"):
        HammingRescoreIndex(3, mean=np.array([0, np.nan, 0], dtype=np.float32))


def test_rescore_search_nan_query(rindex):
    q = np.ones(8, dtype=np.float32)
    q[2] = np.inf
    with pytest.raises(InvalidArgument, match="NaN"):
        rindex.search(q, 3)


def test_rescore_search_zero_query(rindex):
    with pytest.raises(InvalidArgument, match="norm"):
        rindex.search(np.zeros(8, dtype=np.float32), 3)


@pytest.mark.parametrize("k", [0, -2])
def test_rescore_search_bad_k(rindex, k):
    with pytest.raises(InvalidArgument):
        rindex.search(np.ones(8, dtype=np.float32), k)


def test_rescore_search_bad_candidates(rindex):
    with pytest.raises(InvalidArgument):
        rindex.search(np.ones(8, dtype=np.float32), 3, candidates=0)
