"""Every bad input to PostingIndex raises its chitta.errors class and changes nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from chitta.errors import InvalidArgument, NotFound
from chitta.organs.index import PostingIndex
from chitta.organs.index.posting import PAD_ID

NF, ACTIVE = 64, 4
QUERIES = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [0, 10, 20, 30]], np.uint32)


@pytest.fixture
def index() -> Iterator[PostingIndex]:
    idx = PostingIndex(n_features=NF, active=ACTIVE)
    rng = np.random.default_rng(0)
    feats = np.argsort(rng.random((50, NF)), axis=1)[:, :ACTIVE].astype(np.uint32)
    acts = rng.random((50, ACTIVE), dtype=np.float32)
    idx.add(np.arange(100, 150, dtype=np.uint64), feats, acts)
    idx.remove(np.array([100, 101], np.uint64))
    yield idx


def snapshot(idx: PostingIndex) -> tuple[Any, ...]:
    ids, counts = idx.search(QUERIES, 60)
    return (len(idx), idx.num_tombstones, idx.ids().tolist(), ids.tolist(), counts.tolist())


def assert_rejected_unchanged(
    idx: PostingIndex, exc: type[BaseException], call: Callable[[], object]
) -> None:
    before = snapshot(idx)
    with pytest.raises(exc):
        call()
    assert snapshot(idx) == before


GOOD_IDS = np.array([1, 2], np.uint64)
GOOD_FEATS = np.array([[1, 2, 3, 4], [4, 5, 6, 7]], np.uint32)
GOOD_ACTS = np.ones((2, ACTIVE), np.float32)


# ---- add ------------------------------------------------------------------------


def test_add_ids_wrong_dtype(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(GOOD_IDS.astype(np.int64), GOOD_FEATS)
    )


def test_add_features_wrong_dtype(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(GOOD_IDS, GOOD_FEATS.astype(np.int64))
    )


def test_add_activations_wrong_dtype(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index,
        InvalidArgument,
        lambda: index.add(GOOD_IDS, GOOD_FEATS, GOOD_ACTS.astype(np.float64)),
    )


def test_add_ids_not_1d(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(GOOD_IDS.reshape(2, 1), GOOD_FEATS)
    )


def test_add_features_not_2d(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(GOOD_IDS[:1], GOOD_FEATS[0])
    )


def test_add_features_wrong_width(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(GOOD_IDS, GOOD_FEATS[:, :3].copy())
    )


def test_add_features_row_count_differs_from_ids(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.add(GOOD_IDS, GOOD_FEATS[:1]))


def test_add_activations_shape_differs(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(GOOD_IDS, GOOD_FEATS, GOOD_ACTS[:1])
    )


def test_add_duplicate_id_in_batch(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(np.array([7, 7], np.uint64), GOOD_FEATS)
    )


def test_add_id_already_present(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(np.array([1, 120], np.uint64), GOOD_FEATS)
    )


def test_add_pad_id(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.add(np.array([1, PAD_ID], np.uint64), GOOD_FEATS)
    )


def test_add_feature_not_below_n_features(index: PostingIndex) -> None:
    bad = GOOD_FEATS.copy()
    bad[1, 2] = NF
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.add(GOOD_IDS, bad))


def test_add_duplicate_feature_in_row(index: PostingIndex) -> None:
    bad = GOOD_FEATS.copy()
    bad[1, 3] = bad[1, 0]
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.add(GOOD_IDS, bad))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_add_non_finite_activation(index: PostingIndex, value: float) -> None:
    bad = GOOD_ACTS.copy()
    bad[1, 1] = value
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.add(GOOD_IDS, GOOD_FEATS, bad))


def test_add_negative_id_in_list(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.add([1, -2], GOOD_FEATS))


def test_add_float_ids_in_list(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.add([1.0, 2.5], GOOD_FEATS))


def test_invalid_argument_is_value_error(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, ValueError, lambda: index.add(np.array([7, 7], np.uint64), GOOD_FEATS)
    )


# ---- remove ---------------------------------------------------------------------


def test_remove_unknown_id(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, NotFound, lambda: index.remove(np.array([120, 999], np.uint64))
    )


def test_remove_unknown_id_is_key_error(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, KeyError, lambda: index.remove(np.array([999], np.uint64)))


def test_remove_already_removed_id(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, NotFound, lambda: index.remove(np.array([100], np.uint64)))


def test_remove_duplicate_id_in_batch(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.remove(np.array([120, 120], np.uint64))
    )


def test_remove_wrong_dtype(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.remove(np.array([120], np.int64))
    )


# ---- search ---------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, -3], ids=["zero", "negative"])
def test_search_k_not_positive(index: PostingIndex, k: int) -> None:
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.search(QUERIES[0], k))


@pytest.mark.parametrize("k", [True, 2.0, "3"], ids=["bool", "float", "str"])
def test_search_k_not_an_int(index: PostingIndex, k: Any) -> None:
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.search(QUERIES[0], k))


def test_search_feature_not_below_n_features(index: PostingIndex) -> None:
    q = np.array([1, 2, 3, NF], np.uint32)
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.search(q, 3))


def test_search_repeated_feature(index: PostingIndex) -> None:
    q = np.array([[1, 2, 3, 4], [1, 2, 1, 4]], np.uint32)
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.search(q, 3))


def test_search_wrong_dtype(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.search(QUERIES.astype(np.int32), 3)
    )


def test_search_3d_query(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, InvalidArgument, lambda: index.search(QUERIES[None], 3))


def test_search_empty_query(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.search(np.zeros(0, np.uint32), 3)
    )


def test_search_allowed_wrong_dtype(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.search(QUERIES, 3, np.array([120], np.int64))
    )


def test_search_allowed_not_1d(index: PostingIndex) -> None:
    assert_rejected_unchanged(
        index, InvalidArgument, lambda: index.search(QUERIES, 3, np.array([[120]], np.uint64))
    )


# ---- constructor and get ----------------------------------------------------------


@pytest.mark.parametrize(
    ("n_features", "active"),
    [(0, 1), (16, 0), (16, 17), (1024, 256), (2**24 + 1, 64), (-1, 4)],
    ids=[
        "no-features",
        "no-active",
        "active-over-features",
        "active-over-255",
        "too-many-features",
        "negative",
    ],
)
def test_constructor_rejects_bad_sizes(n_features: int, active: int) -> None:
    with pytest.raises(InvalidArgument):
        PostingIndex(n_features=n_features, active=active)


def test_constructor_rejects_non_int() -> None:
    with pytest.raises(InvalidArgument):
        PostingIndex(n_features=16.0, active=4)  # type: ignore[arg-type]


def test_get_unknown_id(index: PostingIndex) -> None:
    assert_rejected_unchanged(index, NotFound, lambda: index.get(100))
