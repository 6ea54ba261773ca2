"""chitta.encode.numpy_ops against float64 references written from the definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chitta.encode import mpnet, nomic
from chitta.encode.numpy_ops import layer_norm, masked_mean, softmax_last


@pytest.mark.parametrize("eps", [nomic.EPS, mpnet.EPS])
def test_layer_norm_matches_the_definition(eps: float) -> None:
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((2, 5, 64)) * 3 + 1).astype(np.float32)
    g, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + eps) * g + b
    np.testing.assert_allclose(layer_norm(x, g, b, eps=eps), want, rtol=1e-4, atol=1e-4)


def test_layer_norm_uses_the_callers_epsilon() -> None:
    # A row with variance 1e-8: 1e-12 leaves it unit variance, 1e-5 shrinks it ~sqrt(1e-3).
    x = (np.array([[1.0, -1.0] * 8]) * 1e-4).astype(np.float32)
    one, zero = np.ones(16, np.float32), np.zeros(16, np.float32)
    assert np.allclose(np.abs(layer_norm(x, one, zero, eps=nomic.EPS)), 1.0, rtol=1e-3)
    assert np.allclose(
        np.abs(layer_norm(x, one, zero, eps=mpnet.EPS)), 1 / math.sqrt(1 + 1e3), rtol=1e-3
    )


def test_softmax_last_rows_are_distributions() -> None:
    rng = np.random.default_rng(12)
    s = (rng.standard_normal((2, 3, 4, 7)) * 40).astype(
        np.float32
    )  # large scores: the max shift matters
    s64 = s.astype(np.float64)
    want = np.exp(s64 - s64.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    got = softmax_last(s)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-6)


def test_masked_mean_averages_only_unmasked_tokens() -> None:
    x = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[1, 1, 0], [0, 0, 0]], np.float32)
    got = masked_mean(x, mask)
    assert got.tolist() == [
        [1.0, 2.0],
        [0.0, 0.0],
    ]  # mean of rows 0, 1; an all-pad row pools to zeros
