"""Bad input at every BM25 entry point raises a clear error and changes nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from chitta.errors import InvalidArgument, NotFound
from chitta.organs.index import BM25
from chitta.organs.index.bm25 import PAD_ID

U64 = np.uint64


@pytest.fixture()
def ix() -> BM25:
    index = BM25()
    index.add(np.array([1, 2, 3], dtype=U64), ["red fox jumps", "lazy brown dog", "red dog"])
    return index


def state(index: BM25) -> tuple[Any, ...]:
    ids, scores = index.search("red dog fox brown lazy jumps", 10)
    return (
        len(index),
        index.vocabulary_size,
        index.avg_doc_length,
        ids.tolist(),
        scores.tolist(),
        sorted(index._index.export_docs()),
    )


def assert_unchanged_after(index: BM25, exc: type[BaseException], fn: Any, match: str) -> None:
    before = state(index)
    with pytest.raises(exc, match=match):
        fn()
    assert state(index) == before


def test_add_duplicate_id_in_batch(ix: BM25) -> None:
    assert_unchanged_after(
        ix,
        InvalidArgument,
        lambda: ix.add(np.array([7, 7], dtype=U64), ["a b", "c d"]),
        "duplicate id 7",
    )


def test_add_existing_id(ix: BM25) -> None:
    assert_unchanged_after(
        ix,
        InvalidArgument,
        lambda: ix.add(np.array([8, 2], dtype=U64), ["new", "again"]),
        "already indexed",
    )


def test_add_pad_id(ix: BM25) -> None:
    assert_unchanged_after(
        ix, InvalidArgument, lambda: ix.add(np.array([PAD_ID], dtype=U64), ["x"]), "reserved"
    )


def test_add_length_mismatch(ix: BM25) -> None:
    assert_unchanged_after(
        ix,
        InvalidArgument,
        lambda: ix.add(np.array([8, 9], dtype=U64), ["only one"]),
        "2 ids but 1 texts",
    )


def test_add_non_str_text(ix: BM25) -> None:
    assert_unchanged_after(
        ix,
        InvalidArgument,
        lambda: ix.add(np.array([8, 9], dtype=U64), ["ok", b"bytes"]),
        "must be str",
    )


def test_add_texts_as_one_string(ix: BM25) -> None:
    assert_unchanged_after(
        ix, InvalidArgument, lambda: ix.add(np.array([8], dtype=U64), "x"), "sequence of str"
    )


def test_add_lone_surrogate_text(ix: BM25) -> None:
    assert_unchanged_after(
        ix,
        InvalidArgument,
        lambda: ix.add(np.array([8, 9], dtype=U64), ["ok", "\udc80"]),
        "UTF-8",
    )


def test_add_float_ids(ix: BM25) -> None:
    assert_unchanged_after(
        ix, InvalidArgument, lambda: ix.add(np.array([8.0]), ["x"]), "integer array"
    )


def test_add_negative_ids(ix: BM25) -> None:
    assert_unchanged_after(
        ix, InvalidArgument, lambda: ix.add(np.array([-1], dtype=np.int64), ["x"]), "non-negative"
    )


def test_add_two_dimensional_ids(ix: BM25) -> None:
    assert_unchanged_after(
        ix, InvalidArgument, lambda: ix.add(np.array([[8, 9]], dtype=U64), ["x", "y"]), "1-D"
    )


def test_add_bool_in_id_list(ix: BM25) -> None:
    assert_unchanged_after(ix, InvalidArgument, lambda: ix.add([True], ["x"]), "ints")


def test_remove_unknown_id_is_not_found(ix: BM25) -> None:
    assert_unchanged_after(ix, NotFound, lambda: ix.remove([1, 99]), "99")
    with pytest.raises(KeyError):
        ix.remove([99])


def test_remove_duplicate_ids(ix: BM25) -> None:
    assert_unchanged_after(ix, InvalidArgument, lambda: ix.remove([1, 1]), "duplicate id 1")


def test_remove_id_too_large(ix: BM25) -> None:
    assert_unchanged_after(ix, InvalidArgument, lambda: ix.remove([2**64]), r"\[0, 2\*\*64\)")


@pytest.mark.parametrize("k", [0, -3, 2**24 + 1])
def test_search_k_out_of_range(ix: BM25, k: int) -> None:
    with pytest.raises(InvalidArgument, match="k must be in"):
        ix.search("red", k)


@pytest.mark.parametrize("k", [1.5, "3", True, None])
def test_search_k_not_int(ix: BM25, k: Any) -> None:
    with pytest.raises(InvalidArgument, match="k must be an int"):
        ix.search("red", k)


def test_search_query_not_str(ix: BM25) -> None:
    with pytest.raises(InvalidArgument, match="query must be str"):
        ix.search(b"red", 3)  # type: ignore[arg-type]


def test_search_query_lone_surrogate(ix: BM25) -> None:
    with pytest.raises(InvalidArgument, match="UTF-8"):
        ix.search("red \ud800", 3)


def test_search_allowed_float_dtype(ix: BM25) -> None:
    with pytest.raises(InvalidArgument, match="allowed must be an integer array"):
        ix.search("red", 3, allowed=np.array([1.0]))


def test_search_bad_accumulator(ix: BM25) -> None:
    with pytest.raises(InvalidArgument, match="accumulator"):
        ix.search("red", 3, accumulator="fast")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("k1", "b"), [(-0.1, 0.75), (float("nan"), 0.75), (1.2, 1.01), (1.2, -0.5), (float("inf"), 0.5)]
)
def test_constructor_bad_params(k1: float, b: float) -> None:
    with pytest.raises(InvalidArgument):
        BM25(k1, b)


def test_setting_bad_k1_leaves_params(ix: BM25) -> None:
    with pytest.raises(InvalidArgument, match="k1"):
        ix.k1 = -1.0
    with pytest.raises(InvalidArgument, match="b must be"):
        ix.b = 2.0
    assert (ix.k1, ix.b) == (1.2, 0.75)


def test_low_level_add_refuses_wrong_dtype(ix: BM25) -> None:
    assert_unchanged_after(
        ix, InvalidArgument, lambda: ix._index.add(np.array([9], dtype=np.int64), ["x"]), "uint64"
    )
