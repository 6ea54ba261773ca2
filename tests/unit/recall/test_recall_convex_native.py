"""Convex score fusion in native code (csrc/scoring/convex.h, chitta.recall.native_convex) against
its Python reference chitta.recall.convex.convex_from_ranks: bit for bit on random rank matrices,
scores and cosines (NaN cosines, equal cosines, lanes absent, weights at 0 and 1, an empty list),
bad inputs refused, and a real field whose native and explain paths agree with the expansion lane
on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta import _core
from chitta.errors import InvalidArgument
from chitta.recall.convex import convex_from_ranks
from chitta.recall.engine import RecallSettings


def _native(
    ranks: np.ndarray, names: list[str], cosine: Any, convex: tuple[Any, ...], keep: np.ndarray
) -> np.ndarray:
    kw_col = names.index("bm25") if "bm25" in names else -1
    ex_col = names.index("expansion") if "expansion" in names else -1
    ex, beta = (convex[2], float(convex[3])) if len(convex) > 2 else (None, 0.0)
    return _core._convex_fused(
        ranks, keep, cosine, kw_col, convex[0], float(convex[1]), ex_col, ex, beta
    )


def _case(
    rng: np.random.Generator, names: list[str]
) -> tuple[np.ndarray, np.ndarray, Any, tuple[Any, ...]]:
    rows = int(rng.integers(1, 160))
    lists = len(names)
    ranks = np.zeros((rows, lists), np.int32)
    n_kw, n_ex = int(rng.integers(0, 101)), int(rng.integers(0, 101))
    for c, name in enumerate(names):
        depth = n_kw if name == "bm25" else n_ex if name == "expansion" else 50
        present = rng.random(rows) < 0.6
        ranks[present, c] = rng.integers(1, depth + 10, present.sum())  # some past the list's end
    keep = np.sort(rng.choice(rows, int(rng.integers(0, rows + 1)), replace=False)).astype(
        np.uint32
    )
    kw = np.sort(rng.gamma(2.0, 3.0, n_kw).astype(np.float32))[::-1].copy()
    ex = np.sort(rng.gamma(2.0, 3.0, n_ex).astype(np.float32))[::-1].copy()
    pick = rng.integers(0, 4)
    if pick == 0:
        cosine = None
    else:
        cosine = rng.uniform(-1, 1, len(keep))
        if pick == 2:
            cosine[rng.random(len(keep)) < 0.3] = np.nan
        if pick == 3:
            cosine[:] = 0.25  # all equal
    alpha = float(rng.choice([0.0, 1.0, 0.55, rng.random()]))
    convex: tuple[Any, ...] = (kw, alpha)
    if "expansion" in names:
        convex = (kw, alpha, ex, float(rng.choice([0.0, 0.2, rng.random()])))
    return ranks, keep, cosine, convex


@pytest.mark.parametrize(
    "names",
    [
        ["bm25", "dense"],
        ["bm25", "dense", "expansion"],
        ["dense", "bm25", "neighbour", "expansion"],
        ["dense", "neighbour"],
        ["expansion", "bm25"],
    ],
)
def test_native_convex_equals_the_reference_bit_for_bit(names: list[str]) -> None:
    rng = np.random.default_rng(len(names) * 31 + len(names[0]))
    for _ in range(300):
        ranks, keep, cosine, convex = _case(rng, names)
        want = convex_from_ranks(ranks, names, cosine, convex, keep)
        got = _native(ranks, names, cosine, convex, keep)
        assert got.dtype == np.float64 and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def test_bad_inputs_are_refused() -> None:
    ranks = np.ones((3, 2), np.int32)
    keep = np.arange(3, dtype=np.uint32)
    kw = np.ones(2, np.float32)
    with pytest.raises(InvalidArgument):
        _core._convex_fused(
            ranks, np.array([5], np.uint32), None, 0, kw, 0.5, -1, None, 0.0
        )  # row past the matrix
    with pytest.raises(InvalidArgument):
        _core._convex_fused(ranks, keep, None, 2, kw, 0.5, -1, None, 0.0)  # column past it
    with pytest.raises(InvalidArgument):
        _core._convex_fused(ranks, keep, None, 0, kw.astype(np.float64), 0.5, -1, None, 0.0)
    with pytest.raises(InvalidArgument):
        _core._convex_fused(
            ranks, keep, np.zeros(2), 0, kw, 0.5, -1, None, 0.0
        )  # cosine of another length
    with pytest.raises(InvalidArgument):
        _core._convex_fused(ranks.astype(np.int64), keep, None, 0, kw, 0.5, -1, None, 0.0)


class Embedder:
    name, family, dim = "stub-convex-native-v1", "stub-convex-native", 8

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array(
            [
                np.random.default_rng(sum(map(ord, t)) + 7 * len(t)).standard_normal(8)
                for t in texts
            ],
            np.float32,
        )


@pytest.mark.parametrize("weight", [0.0, 0.3])
def test_a_field_ranks_the_same_on_the_native_and_the_explain_path(
    tmp_path: Path, weight: float
) -> None:
    settings = RecallSettings(fusion_alpha=0.45, expansion_weight=weight, expansion_min_cosine=-1.0)
    with chitta.open(
        tmp_path / "f", embedder=Embedder(), recall_settings=settings, clock=lambda: 1_780_000_000.0
    ) as field:
        field.remember_many(
            [{"text": f"entry {i} about river {i % 7} stone {i % 5} lantern"} for i in range(150)]
        )
        for q in ("river stone", "lantern 3", "entry about", "nothing matches this"):
            native = field.recall(q, k=10, touch=False)
            python = field.recall(q, k=10, touch=False, explain=True)
            assert [(h.id, h.score, h.fused, h.lanes) for h in native] == [
                (h.id, h.score, h.fused, h.lanes) for h in python
            ]
