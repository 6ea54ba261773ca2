"""The native recall tail against the Python path it replaces.

Oracle: ``RecallEngine._rank_python`` (fusion by ``rrf_fuse``, the candidates'
state from ``MemoriesOrgan.scoring_states``, cosines by ``cosine_array``, scores
by ``Scorer.score_batch``, order by numpy's ``lexsort``), itself checked against
the per-candidate loop in test_recall_vectorised.py. The native tail
(chitta/recall/native_tail.py, csrc/recall) must give the same hits exactly:
same ids in the same order, the same score and fused floats bit for bit, the
same lanes and equal memories, on random fields where every input varies
(kinds, event times, confidence, strength, tiers, staged and recalled
memories, access traces, superseding / contradicting edges, forgotten
memories, speakers named by the query, dates named by the query, text-only
and vector-only queries, filters, lane subsets, k).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta import _core, ops
from chitta.errors import InvalidArgument
from chitta.model import Memory, memory_of
from chitta.recall.blas import one_thread
from chitta.recall.hit import Hit

T0 = 1_780_000_000.0  # 2026-05-28
DAY = 86_400.0
WORDS = [f"w{i}" for i in range(50)]
KINDS = ("observation", "decision", "lesson", "thought", "episode", "code_fact")
SPEAKERS = ("Ana", "Bo Lee", "Cy")
LANE_SETS = (
    None,
    ("bm25",),
    ("dense",),
    ("posting",),
    ("bm25", "neighbour"),
    ("dense", "posting", "neighbour"),
)
DATES = ("", " in May 2026", " in 2025", " on 3 April 2026", " in June")


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def random_field(root: Path, seed: int, n: int = 300) -> tuple[chitta.Field, np.random.Generator]:
    rng = np.random.default_rng(seed)
    clock = Clock(T0)
    f = chitta.open(root, embedder="hashing", clock=clock, instance_id=0x5EED)
    items: list[dict[str, Any]] = []
    for i in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(3, 9)))
        item: dict[str, Any] = {
            "text": " ".join(words),
            "kind": str(rng.choice(KINDS)),
            "realm": str(rng.choice(["a", "b"])),
            "confidence": float(rng.choice([1.0, 0.5, rng.random()])),
            "at": T0 - float(rng.choice([0.0, 1.0, rng.random() * 500 * DAY])),
        }
        if i % 3 == 0:
            item["meta"] = {"speaker": str(rng.choice(SPEAKERS))}
        items.append(item)
    ids = f.remember_many(items)
    for mid in rng.choice(ids, 30, replace=False).tolist():
        f.update(mid, strength=float(rng.choice([0.0, 0.3, 2.5])), confidence=float(rng.random()))
    for mid in rng.choice(ids, 20, replace=False).tolist():
        f.core.commit_group(
            [ops.DemoteMemory(id=mid, tier=int(rng.integers(1, 4)), at_ms=int(clock.t * 1000))]
        )
    for _ in range(20):
        a, b = rng.choice(ids, 2, replace=False).tolist()
        f.link(a, b, str(rng.choice(["Supersedes", "Contradicts", "RelatedTo"])))
    for _ in range(25):  # access traces, promotions out of the write gate, CoRetrieved edges
        clock.t += float(rng.random() * 3 * DAY)
        f.recall(" ".join(rng.choice(WORDS, 3)), k=int(rng.integers(1, 6)))
    for mid in rng.choice(ids, 10, replace=False).tolist():
        f.forget(mid)
    clock.t += float(rng.random() * DAY)
    return f, rng


def query(rng: np.random.Generator) -> str:
    text = " ".join(rng.choice(WORDS, int(rng.integers(1, 5))))
    if rng.random() < 0.3:
        text = f"what did {rng.choice(SPEAKERS)} say about {text}"
    return text + str(rng.choice(DATES))


def both_paths(f: chitta.Field, **kw: Any) -> tuple[list[Hit], list[Hit]]:
    engine = f.core.engine
    try:
        engine.native = True
        native = f.recall(**kw, touch=False)
        engine.native = False
        python = f.recall(**kw, touch=False)
    finally:
        engine.native = True
    return native, python


def assert_same(native: list[Hit], python: list[Hit]) -> None:
    assert [h.id for h in native] == [h.id for h in python]
    for a, b in zip(native, python):
        assert a.score == b.score, (a.id, a.score, b.score)  # bit for bit, not within a tolerance
        assert a.fused == b.fused
        assert a.lanes == b.lanes
        assert a.text == b.text and a.memory == b.memory
        assert a.factors == b.factors == ()


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_native_tail_equals_the_python_path(tmp_path: Path, seed: int) -> None:
    f, rng = random_field(tmp_path / "f", seed)
    compared = 0
    with f, one_thread():
        assert f.core.graph.suppression_targets  # the fields exercise suppression
        for _ in range(60):
            lanes = LANE_SETS[int(rng.integers(len(LANE_SETS)))]
            filters = [
                {},
                {"realm": "a"},
                {"include_staged": False},
                {"kinds": ["decision", "lesson"]},
            ]
            kw: dict[str, Any] = dict(filters[int(rng.integers(len(filters)))])
            native, python = both_paths(
                f, query=query(rng), k=int(rng.choice([1, 5, 10, 30])), lanes=lanes, **kw
            )
            assert_same(native, python)
            compared += len(native)
    assert compared > 600  # the fields and filters left real work to compare


def test_speaker_and_time_priors_go_through_the_native_tail(tmp_path: Path) -> None:
    f, _rng = random_field(tmp_path / "f", 21)
    with f:
        assert f.core.index.speaker_ids("what did Ana say") is not None
        for text in (
            "what did Ana say about w1 w2",
            "w3 w4 in May 2026",
            "Bo Lee w5 in 2025",
            "w1 w2 w3 in June",
        ):
            native, python = both_paths(f, query=text, k=20)
            assert native
            assert_same(native, python)


def test_vector_only_and_text_only_queries(tmp_path: Path) -> None:
    f, _rng = random_field(tmp_path / "f", 22, n=150)
    with f:
        vec = f.core.encoding.embed(["w1 w2 w3"])[0]
        for kw in ({"vector": vec}, {"query": "w1 w2 w3"}, {"query": "w7", "vector": vec}):
            native, python = both_paths(f, k=10, **kw)  # type: ignore[arg-type]
            assert native
            assert_same(native, python)


def test_explain_takes_the_python_path_and_ranks_the_same(tmp_path: Path) -> None:
    f, _rng = random_field(tmp_path / "f", 23, n=150)
    with f:
        plain = f.recall("w1 w2 w3 w4", k=10, touch=False)
        explained = f.recall("w1 w2 w3 w4", k=10, touch=False, explain=True)
        assert [h.id for h in plain] == [h.id for h in explained]
        assert [h.score for h in plain] == [h.score for h in explained]
        assert all(h.factors for h in explained) and not any(h.factors for h in plain)


def test_touches_after_native_recalls_match_the_python_path(tmp_path: Path) -> None:
    # recall with touch=True writes access traces and promotes staged memories; both paths touch alike
    a, _ = random_field(tmp_path / "a", 24, n=120)
    b, _ = random_field(tmp_path / "b", 24, n=120)
    with a, b:
        b.core.engine.native = False
        for text in ("w1 w2", "w3 w4 w5", "w1 w2", "w6"):
            ha, hb = a.recall(text, k=5), b.recall(text, k=5)
            assert [(h.id, h.score) for h in ha] == [(h.id, h.score) for h in hb]


# ---- the native entry points refuse bad input --------------------------------------------------


def _columns(f: chitta.Field) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    mem_cols, kinds = f.core.memories.recall_columns()
    idx_cols, _vecs, _dim = f.core.index.recall_columns()
    return (*mem_cols, np.ones(len(kinds))), idx_cols


def test_gather_refuses_columns_of_the_wrong_type(tmp_path: Path) -> None:
    f, _rng = random_field(tmp_path / "f", 25, n=60)
    with f:
        mem, idx = _columns(f)
        lists = [np.array(f.core.memories.live_id_array()[:5])]
        assert _core._recall_gather(lists, [1.0], 20.0, 50, mem, idx).size == 5
        bad_mem = list(mem)
        bad_mem[2] = mem[2].astype(np.int32)  # created must be int64, never cast
        with pytest.raises(InvalidArgument, match="created"):
            _core._recall_gather(lists, [1.0], 20.0, 50, tuple(bad_mem), idx)
        with pytest.raises(InvalidArgument, match="RowMap"):
            _core._recall_gather(lists, [1.0], 20.0, 50, ("map", *mem[1:]), idx)
        with pytest.raises(InvalidArgument, match="kind_weight"):
            _core._recall_gather(lists, [1.0], 20.0, 50, (*mem[:7], [1.0]), idx)
        with pytest.raises(InvalidArgument, match="kind code"):
            _core._recall_gather(lists, [1.0], 20.0, 50, (*mem[:7], np.zeros(0)), idx)
        with pytest.raises(InvalidArgument, match="ranked list"):
            _core._recall_gather([lists[0].astype(np.int64)], [1.0], 20.0, 50, mem, idx)
        with pytest.raises(InvalidArgument, match="weight"):
            _core._recall_gather(lists, [-1.0], 20.0, 50, mem, idx)
        with pytest.raises(InvalidArgument, match="index columns"):
            _core._recall_gather(lists, [1.0], 20.0, 50, mem, idx[:2])


def test_rank_refuses_inputs_of_the_wrong_length(tmp_path: Path) -> None:
    f, _rng = random_field(tmp_path / "f", 26, n=60)
    with f:
        mem, idx = _columns(f)
        cands = _core._recall_gather(
            [np.array(f.core.memories.live_id_array()[:5])], [1.0], 20.0, 50, mem, idx
        )
        w = (1.0, 0.02, 0.05, 0.1, 0.01, 0.5, 0.8, 0.25)
        ids, scores, fused, ranks, every = cands.rank(
            None, None, None, None, None, cands.best, 0, w, 3
        )
        assert len(ids) == len(scores) == len(fused) == len(ranks) == 3 and len(every) == 5
        assert scores == sorted(every.tolist(), reverse=True)[:3] and set(ids) <= set(
            cands.kept_ids.tolist()
        )
        assert all(len(r) == 1 and r[0] >= 1 for r in ranks)
        with pytest.raises(InvalidArgument, match="cosine"):
            cands.rank(None, np.zeros(4), None, None, None, cands.best, 0, w, 3)
        with pytest.raises(InvalidArgument, match="go together"):
            cands.rank(None, None, None, np.zeros(6, np.int64), None, cands.best, 0, w, 3)
        with pytest.raises(InvalidArgument, match="trace offsets"):
            cands.rank(
                None,
                None,
                None,
                np.array([0, 1, 1, 1, 1, 9]),
                np.zeros(2, np.int64),
                cands.best,
                0,
                w,
                3,
            )
        with pytest.raises(InvalidArgument, match="8 floats"):
            cands.rank(None, None, None, None, None, cands.best, 0, w[:7], 3)


def test_memory_of_builds_what_the_constructor_builds() -> None:
    values = {f.name: i for i, f in enumerate(dataclasses.fields(Memory))}
    values.update(
        text="t", kind="observation", tags=("x",), meta={"a": 1}, embedding=None, artifacts=()
    )
    m = memory_of(tuple(values.values()))
    assert m == Memory(**values) and type(m) is Memory
    with pytest.raises(TypeError, match="fields"):
        memory_of((1, 2))
    with pytest.raises(TypeError):
        _core._new_slotted(
            Hit,
            tuple(Memory.__dict__[f.name] for f in dataclasses.fields(Memory)),
            tuple(values.values()),
        )  # Memory's slots on a Hit: refused by the descriptors


def test_cosines_come_from_numpys_own_dot_when_it_is_found(tmp_path: Path) -> None:
    from chitta.recall import native_dot, native_tail

    address = native_dot.sdot_address()
    if address is None:
        pytest.skip(
            "numpy's BLAS exposes no 64-bit-integer cblas_sdot here: the tail uses numpy for cosines"
        )
    f, _rng = random_field(tmp_path / "f", 27, n=150)
    with f:
        native, python = both_paths(f, query="w1 w2 w3", k=20)
        assert native_tail._dot_state == [True]
        assert_same(native, python)
        vec = f.core.encoding.embed(["w4 w5"])[0]
        vec = vec / np.linalg.norm(vec)
        mem, idx = _columns(f)
        lists = [np.array(f.core.memories.live_id_array()[:40])]
        cands = _core._recall_gather(
            lists, [1.0], 20.0, 50, mem, idx, vec, f.core.index.recall_columns()[1]
        )
        rows = cands.vector_row
        want = [
            float(f.core.index.recall_columns()[1][r] @ vec) if r >= 0 else float("nan")
            for r in rows.tolist()
        ]
        np.testing.assert_array_equal(cands.cosine, np.array(want))  # bit for bit numpy's dot
        with pytest.raises(InvalidArgument, match="go together"):
            _core._recall_gather(lists, [1.0], 20.0, 50, mem, idx, vec, None)
        with pytest.raises(InvalidArgument, match="width"):
            _core._recall_gather(
                lists, [1.0], 20.0, 50, mem, idx, vec[:-1].copy(), f.core.index.recall_columns()[1]
            )
