"""Weighted reciprocal rank fusion against a Python reference."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from chitta.errors import InvalidArgument
from chitta.organs.index import rrf_fuse

PAD = 2**64 - 1


def reference(lists: list[list[int]], k: float, weights: list[float] | None) -> list[tuple]:
    """(id, score, best_rank, ranks) sorted by score desc, best rank, id."""
    w = weights or [1.0] * len(lists)
    score: dict[int, float] = {}
    ranks: dict[int, list[int]] = {}
    for li, lst in enumerate(lists):
        for pos, doc in enumerate(lst):
            if doc == PAD:
                continue
            r = ranks.setdefault(doc, [0] * len(lists))
            if r[li]:
                continue  # repeated in this list: first position counts
            r[li] = pos + 1
            score[doc] = score.get(doc, 0.0) + w[li] / (k + pos + 1)
    rows = [(d, score[d], min(x for x in ranks[d] if x), ranks[d]) for d in score]
    rows.sort(key=lambda t: (-t[1], t[2], t[0]))
    return rows


def random_lists(rng: random.Random) -> list[list[int]]:
    out = []
    for _ in range(rng.randint(1, 5)):
        lst = [rng.randrange(60) for _ in range(rng.randint(0, 40))]
        lst += [PAD] * rng.randint(0, 3)
        out.append(lst)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_matches_python_reference(seed: int) -> None:
    rng = random.Random(seed)
    lists = random_lists(rng)
    weights = [rng.choice([0.0, 0.5, 1.0, 2.5]) for _ in lists] if seed % 2 else None
    k = rng.choice([0, 1, 60, 10.5])
    ids, scores, ranks = rrf_fuse(
        [np.array(x, dtype=np.uint64) for x in lists], k, weights, return_ranks=True
    )
    want = reference(lists, k, weights)
    assert ids.dtype == np.uint64 and scores.dtype == np.float64 and ranks.dtype == np.int32
    assert ranks.shape == (len(want), len(lists))
    # Scores can tie in exact arithmetic but differ in the last bit: compare by id.
    got = {int(i): (s, r.tolist()) for i, s, r in zip(ids, scores, ranks)}
    assert set(got) == {row[0] for row in want}
    for doc, s, _, r in want:
        assert got[doc][0] == pytest.approx(s, rel=1e-12, abs=1e-15)
        assert got[doc][1] == r
    assert np.all(np.diff(scores) <= 1e-15)


def test_python_int_lists_equal_numpy_lists() -> None:
    a, b = [5, 3, 9], [9, 1]
    got = rrf_fuse([a, b])
    want = rrf_fuse([np.array(a, dtype=np.uint64), np.array(b, dtype=np.int64)])
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_score_formula_by_hand() -> None:
    ids, scores = rrf_fuse([[10, 20], [20]], k=60, weights=[1.0, 3.0])
    assert ids.tolist() == [20, 10]
    assert scores[0] == pytest.approx(1 / 62 + 3 / 61)
    assert scores[1] == pytest.approx(1 / 61)


def test_ties_break_by_best_rank_then_id() -> None:
    # 7 and 3 tie (each rank 1 once, rank 2 once): smaller id first.
    assert rrf_fuse([[7, 3], [3, 7]])[0].tolist() == [3, 7]
    # Zero weights: both score 0 and have best rank 1, so the smaller id wins.
    ids, scores = rrf_fuse([[4, 8], [8, 4]], weights=[0.0, 0.0])
    assert ids.tolist() == [4, 8] and scores.tolist() == [0.0, 0.0]


def test_pad_ids_ignored_but_positions_kept() -> None:
    ids, scores, ranks = rrf_fuse([[PAD, 5, PAD, 6]], k=0, return_ranks=True)
    assert ids.tolist() == [5, 6]
    assert ranks[:, 0].tolist() == [2, 4]
    assert scores.tolist() == [0.5, 0.25]


def test_repeated_id_in_one_list_counts_once() -> None:
    ids, scores = rrf_fuse([[1, 1, 2]], k=0)
    assert ids.tolist() == [1, 2] and scores.tolist() == [1.0, 1 / 3]


def test_limit_keeps_best() -> None:
    ids, _scores, ranks = rrf_fuse([[1, 2, 3, 4], [4]], limit=2, return_ranks=True)
    full = rrf_fuse([[1, 2, 3, 4], [4]])
    assert ids.tolist() == full[0][:2].tolist() and ranks.shape == (2, 2)


def test_no_lists_and_empty_lists() -> None:
    ids, _, ranks = rrf_fuse([], return_ranks=True)
    assert ids.size == 0 and ranks.shape == (0, 0)
    ids, _scores = rrf_fuse([[], [PAD]])
    assert ids.size == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": -1}, "k must be finite"),
        ({"k": float("nan")}, "k must be finite"),
        ({"k": "60"}, "k must be a number"),
        ({"weights": [1.0, -0.5]}, "weights must be finite"),
        ({"weights": [1.0, float("nan")]}, "weights must be finite"),
        ({"weights": [1.0, float("inf")]}, "weights must be finite"),
        ({"weights": [1.0]}, "one weight per list"),
        ({"weights": ["a", "b"]}, "weights must be numbers"),
        ({"limit": 0}, "limit"),
    ],
)
def test_bad_parameters_raise(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        rrf_fuse([[1, 2], [2, 3]], **kwargs)


@pytest.mark.parametrize(
    ("lists", "match"),
    [
        ([[1, -2]], r"\[0, 2\*\*64\)"),
        ([np.array([1, -2])], "non-negative"),
        ([np.array([1.0, 2.0])], "integer array"),
        ([np.array([[1, 2]], dtype=np.uint64)], "1-D"),
        ([[1, "x"]], "ints"),
        ([5], "sequence of ints"),
        (np.array([[1, 2]], dtype=np.uint64), "sequence of id lists"),
    ],
)
def test_bad_lists_raise(lists: Any, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        rrf_fuse(lists)
