"""Convex score fusion (RecallSettings.fusion_alpha): hand-computed scores, bad
alphas refused, the embedder's preference, and the order in a real field on
both the native and the Python (explain) path."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.recall.convex import check_alpha, convex_fused, keyword_ranks
from chitta.recall.engine import RecallSettings
from chitta.recall.presets import settings_for


def test_scores_are_the_hand_computed_convex_combination() -> None:
    # cosines over the candidates with a vector: min 0.5, max 0.9; BM25 max 3.0
    # keyword list [4, 2, 9] with BM25 3.0 / 1.5 / 0.6: candidates 1..4 have keyword ranks 0, 2, 0, 1
    cos = np.array([0.9, 0.5, np.nan, 0.7])
    out = convex_fused(np.array([0, 2, 0, 1]), cos, np.array([3.0, 1.5, 0.6]), 0.4)
    # 1: 0.6 * 1; 2: 0.4 * 0.5 + 0.6 * 0; 3: no vector, no keyword hit; 4: 0.4 * 1 + 0.6 * 0.5
    np.testing.assert_allclose(out, [0.6, 0.2, 0.0, 0.7])


def test_alpha_one_is_keyword_only_and_zero_is_cosine_only() -> None:
    cos = np.array([0.2, 0.8])
    rank, kw_scores = np.array([1, 0]), np.array([2.0])
    np.testing.assert_allclose(convex_fused(rank, cos, kw_scores, 1.0), [1.0, 0.0])
    np.testing.assert_allclose(convex_fused(rank, cos, kw_scores, 0.0), [0.0, 1.0])


def test_equal_cosines_count_fully_and_no_vector_counts_nothing() -> None:
    none = np.zeros(2, np.int64)
    np.testing.assert_allclose(
        convex_fused(none, np.array([0.3, 0.3]), np.zeros(0), 0.25), [0.75, 0.75]
    )
    np.testing.assert_allclose(
        convex_fused(np.array([0, 1]), None, np.array([4.0]), 0.25), [0.0, 0.25]
    )
    assert len(convex_fused(np.zeros(0, np.int64), None, np.zeros(0), 0.5)) == 0


def test_keyword_ranks_is_the_bm25_column_or_zeros() -> None:
    ranks = np.array([[1, 0], [0, 2], [3, 1]], np.int32)
    np.testing.assert_array_equal(keyword_ranks(ranks, ["dense", "bm25"]), [0, 2, 1])
    np.testing.assert_array_equal(keyword_ranks(ranks, ["dense", "posting"]), [0, 0, 0])


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, math.inf, True, "0.5", [0.5]])
def test_bad_alpha_is_refused(bad: Any) -> None:
    with pytest.raises(InvalidArgument):
        check_alpha(bad)
    with pytest.raises(InvalidArgument):
        RecallSettings(fusion_alpha=bad)


def test_good_alphas_pass() -> None:
    assert check_alpha(None) is None
    assert check_alpha(0) == 0.0
    assert RecallSettings(fusion_alpha=1).fusion_alpha == 1
    assert RecallSettings().fusion_alpha is None  # weighted RRF unless asked


class _Prefers:
    def __init__(self, alpha: Any) -> None:
        self.recall_fusion_alpha = alpha


def test_embedder_preference_sets_alpha_and_bad_ones_are_ignored() -> None:
    assert settings_for(_Prefers(0.6)).fusion_alpha == 0.6
    assert settings_for(_Prefers(0.6), RecallSettings(time_prior=0.0)).time_prior == 0.0
    for bad in (1.5, -1, math.nan, True, "0.3", None):
        assert settings_for(_Prefers(bad)).fusion_alpha is None
    assert settings_for(object()).fusion_alpha is None


def _unit(cos: float, axis: int) -> np.ndarray:
    v = np.zeros(4, np.float32)
    v[0], v[axis] = cos, math.sqrt(1 - cos * cos)
    return v


def _field(tmp_path: Path, alpha: float | None) -> tuple[Any, dict[str, int]]:
    field = chitta.open(tmp_path / f"f{alpha}", recall_settings=RecallSettings(fusion_alpha=alpha))
    ids = {
        # only "a" holds the query's keyword; "b" is the nearest vector
        "a": field.remember("the violin lesson ran late", embedding=_unit(0.5, 1)),
        "b": field.remember("music practice every evening", embedding=_unit(0.99, 2)),
        "c": field.remember("groceries for the week", embedding=_unit(0.2, 3)),
    }
    return field, ids


@pytest.mark.parametrize("explain", [False, True])
def test_convex_fusion_orders_by_score_size_where_rrf_orders_by_rank(
    tmp_path: Path, explain: bool
) -> None:
    q = np.array([1, 0, 0, 0], np.float32)
    rrf, ids = _field(tmp_path, None)
    with rrf:
        # RRF (bm25 1.0, dense 0.5, k 20): a = 1/21 + 0.5/22 > b = 0.5/21
        assert [h.id for h in rrf.recall("violin", vector=q, k=3, touch=False, explain=explain)][
            :2
        ] == [ids["a"], ids["b"]]
    convex, ids = _field(tmp_path, 0.2)
    with convex:
        hits = convex.recall("violin", vector=q, k=3, touch=False, explain=explain)
    # cosines 0.5 / 0.99 / 0.2 -> min-max 0.3797 / 1 / 0; a = 0.2 + 0.8 * 0.3797, b = 0.8, c = 0
    assert [h.id for h in hits] == [ids["b"], ids["a"], ids["c"]]
    np.testing.assert_allclose(
        [h.fused for h in hits], [0.8, 0.2 + 0.8 * 0.3 / 0.79, 0.0], atol=1e-5
    )


def test_convex_without_a_query_vector_falls_back_to_rrf(tmp_path: Path) -> None:
    field, ids = _field(tmp_path, 0.2)
    with field:
        hits = field.recall("violin", k=3, touch=False)
    assert hits[0].id == ids["a"] and hits[0].fused == pytest.approx(1 / 21)


def test_a_lane_alone_is_not_blended(tmp_path: Path) -> None:
    q = np.array([1, 0, 0, 0], np.float32)
    field, ids = _field(tmp_path, 0.2)
    with field:
        kw = field.recall("violin", vector=q, k=3, touch=False, lanes=("bm25",))
        dense = field.recall("violin", vector=q, k=3, touch=False, lanes=("dense",))
    assert [h.id for h in kw] == [ids["a"]] and kw[0].fused == pytest.approx(
        1 / 21
    )  # RRF of one lane
    assert [h.id for h in dense] == [ids["b"], ids["a"], ids["c"]]
