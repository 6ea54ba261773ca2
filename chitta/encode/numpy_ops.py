"""Numpy building blocks shared by the numpy forward passes of the
transformer embedders (:mod:`chitta.encode.nomic`, :mod:`chitta.encode.mpnet`).

Each model passes its own constants (the layer norm's epsilon differs: 1e-12
for nomic-bert, 1e-5 for mpnet); the arithmetic is the models' own, unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def layer_norm(
    x: npt.NDArray[np.float32],
    g: npt.NDArray[np.float32],
    b: npt.NDArray[np.float32],
    *,
    eps: float,
) -> Any:
    """Layer normalisation over the last axis: ``(x - mean) / sqrt(var + eps) * g + b``."""
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def softmax_last(s: Any) -> Any:
    """Softmax over the last axis of attention scores (a new array; the max is subtracted first)."""
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    return s


def masked_mean(
    x: npt.NDArray[np.float32], mask: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Mean of ``x`` ``[b, n, d]`` over the tokens whose ``mask`` ``[b, n]`` is 1 (mean pooling)."""
    m = mask[:, :, None]
    pooled: npt.NDArray[np.float32] = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled
