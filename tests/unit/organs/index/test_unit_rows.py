"""The recall index's unit vectors (``_core._row_norms`` / ``_core._unit_rows``)
against numpy in float64 as the oracle, and the arguments they refuse."""

from __future__ import annotations

import numpy as np
import pytest

from chitta import _core
from chitta.errors import InvalidArgument


def test_norms_and_units_match_float64_numpy() -> None:
    rng = np.random.default_rng(3)
    src = (rng.standard_normal((257, 384)) * rng.uniform(0.01, 100, (257, 1))).astype(np.float32)
    want = np.sqrt(np.sum(src.astype(np.float64) ** 2, axis=1)).astype(np.float32)
    norms = _core._row_norms(src)
    assert norms.dtype == np.float32
    np.testing.assert_allclose(norms, want, rtol=2e-7, atol=0)
    dst = np.zeros_like(src)
    got, written = _core._unit_rows(src, dst)
    assert written == len(src)
    assert np.array_equal(got, norms)  # one norm for both calls
    assert np.array_equal(dst, src / norms[:, None])  # float32 division by that norm, bit for bit
    np.testing.assert_allclose(np.linalg.norm(dst.astype(np.float64), axis=1), 1.0, rtol=1e-6)


def test_rows_without_a_usable_norm_are_skipped_and_the_rest_packed() -> None:
    src = np.arange(1, 25, dtype=np.float32).reshape(6, 4)
    src[1] = 0
    src[3, 2] = np.nan
    src[4, 0] = np.inf
    dst = np.full((8, 4), -7, np.float32)
    norms, written = _core._unit_rows(src, dst)
    assert written == 3
    keep = [0, 2, 5]
    assert np.array_equal(dst[:3], src[keep] / norms[keep, None])
    assert np.all(dst[3:] == -7)
    assert norms[1] == 0 and np.isnan(norms[3]) and np.isinf(norms[4])


def test_a_row_gets_the_same_norm_alone_or_among_many() -> None:
    src = np.random.default_rng(5).standard_normal((100, 385)).astype(np.float32)
    many = _core._row_norms(src)
    assert all(_core._row_norms(src[i : i + 1])[0] == many[i] for i in range(100))


def test_bad_arguments() -> None:
    src = np.ones((4, 3), np.float32)
    for bad_src in (
        np.ones((4, 3), np.float64),
        np.ones(12, np.float32),
        np.ones((3, 4), np.float32).T,
    ):
        with pytest.raises(InvalidArgument):
            _core._row_norms(bad_src)
        with pytest.raises(InvalidArgument):
            _core._unit_rows(bad_src, np.zeros((4, 3), np.float32))
    with pytest.raises(InvalidArgument, match="width"):
        _core._unit_rows(src, np.zeros((4, 4), np.float32))
    with pytest.raises(InvalidArgument, match="fewer rows"):
        _core._unit_rows(src, np.zeros((3, 3), np.float32))
    with pytest.raises(InvalidArgument, match="overlap"):
        _core._unit_rows(src, src)
    big = np.ones((8, 3), np.float32)
    with pytest.raises(InvalidArgument, match="overlap"):
        _core._unit_rows(big[:4], big[2:])
    frozen = np.zeros((4, 3), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(InvalidArgument, match="writable"):
        _core._unit_rows(src, frozen)
    assert _core._unit_rows(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))[1] == 0
