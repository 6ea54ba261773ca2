"""RowMap (native id -> row map) against a Python dict oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.errors import InvalidArgument
from chitta.organs.index.row_map import RowMap

U64_MAX = 2**64 - 1
ids_st = st.one_of(
    st.integers(0, 40),  # small space: duplicates inside and across batches
    st.sampled_from([0, 1, U64_MAX, U64_MAX - 1, 2**63, 2**32]),
    st.integers(0, U64_MAX),
)


class Oracle:
    def __init__(self) -> None:
        self.rows: dict[int, int] = {}

    def add(self, ids: list[int]) -> list[bool]:
        out = []
        for i in ids:
            fresh = i not in self.rows
            if fresh:
                self.rows[i] = len(self.rows)
            out.append(fresh)
        return out


def _u64(xs: list[int]) -> np.ndarray:
    return np.array(xs, dtype=np.uint64)


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(ids_st, max_size=30), max_size=12),
    probes=st.lists(ids_st, max_size=20),
)
def test_random_adds_match_dict(batches: list[list[int]], probes: list[int]) -> None:
    m, ref = RowMap(), Oracle()
    for batch in batches:
        fresh = m.add(_u64(batch))
        assert fresh.dtype == np.bool_ and fresh.shape == (len(batch),)
        assert fresh.tolist() == ref.add(batch)
        assert len(m) == len(ref.rows)
    assert m.ids().tolist() == list(ref.rows)
    for q in probes + [b for batch in batches for b in batch]:
        want = ref.rows.get(q, -1)
        assert m.row(q) == want
        assert (q in m) == (want >= 0)
    got = m.rows(_u64(probes))
    assert got.dtype == np.int64
    assert got.tolist() == [ref.rows.get(q, -1) for q in probes]


def test_zero_and_max_are_ids() -> None:
    m = RowMap()
    assert m.add(_u64([U64_MAX, 0, U64_MAX, 0])).tolist() == [True, True, False, False]
    assert m.row(U64_MAX) == 0 and m.row(0) == 1 and m.row(5) == -1
    assert m.ids().tolist() == [U64_MAX, 0]
    assert U64_MAX in m and 0 in m and 5 not in m


def test_growth_past_many_rehashes() -> None:
    rng = np.random.default_rng(3)
    m, ref = RowMap(), Oracle()
    for _ in range(40):
        batch = rng.integers(0, 60_000, size=rng.integers(0, 3000), dtype=np.uint64)
        batch[::7] <<= np.uint64(40)
        assert m.add(batch).tolist() == ref.add(batch.tolist())
    assert len(m) > 40_000  # from 16 slots: a dozen doublings
    keys = np.array(list(ref.rows), dtype=np.uint64)
    assert m.rows(keys).tolist() == list(range(len(keys)))
    absent = rng.integers(60_000, 2**40, size=5000, dtype=np.uint64)
    assert (m.rows(absent) == -1).all()
    assert m.memory_bytes() >= 16 * len(m)


def test_add_one_and_from_ids() -> None:
    m = RowMap.from_ids(_u64([9, 3, 7]))
    assert m.ids().tolist() == [9, 3, 7] and m.row(7) == 2
    assert m.add_one(3) == -1 and m.add_one(4) == 3
    with pytest.raises(InvalidArgument):
        RowMap.from_ids(_u64([1, 2, 1]))


def test_empty_arrays() -> None:
    m = RowMap()
    assert m.add(_u64([])).shape == (0,)
    assert m.rows(_u64([])).shape == (0,)
    assert m.ids().shape == (0,) and m.ids().dtype == np.uint64


@pytest.mark.parametrize(
    "bad",
    [
        np.array([1, 2], dtype=np.int64),
        np.array([1.0], dtype=np.float64),
        np.array([[1, 2]], dtype=np.uint64),
        np.arange(10, dtype=np.uint64)[::2],
        [1, 2, 3],
        None,
    ],
    ids=["int64", "float", "2d", "strided", "list", "none"],
)
def test_bad_arrays_refused_and_nothing_changes(bad: object) -> None:
    m = RowMap()
    m.add(_u64([5]))
    with pytest.raises(InvalidArgument):
        m.add(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        m.rows(bad)  # type: ignore[arg-type]
    assert len(m) == 1 and m.ids().tolist() == [5]


@pytest.mark.parametrize("bad", [-1, 2**64, 1.5, "3", True])
def test_bad_scalar_ids(bad: object) -> None:
    m = RowMap()
    with pytest.raises(InvalidArgument):
        m.row(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        m.add_one(bad)  # type: ignore[arg-type]
    assert bad not in m and len(m) == 0


def test_numpy_scalar_ids() -> None:
    m = RowMap()
    m.add(_u64([2**63 + 5]))
    assert m.row(np.uint64(2**63 + 5)) == 0
    assert np.uint64(2**63 + 5) in m
