"""The graph lane's incremental index (chitta/recall/graph_index.py) against two oracles:
a from-scratch build of the organs' final state and networkx on a graph made here
from the organs' public state by the documented rule. Random sequences of new facts,
reinforcements, new sources, invalidations, re-assertions and association edges."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import chitta
from chitta import ops
from chitta.errors import InvalidArgument
from chitta.organs.graph import GraphOrgan
from chitta.organs.knowledge import KnowledgeOrgan
from chitta.recall import graph_index as gi
from chitta.recall import graph_lane as gl
from chitta.recall.engine import RecallSettings

GRAPH_ON = RecallSettings(lane_weights={**RecallSettings().lane_weights, "graph": 1.0})
KINDS = ("RelatedTo", "CoRetrieved", "Contradicts")


def _random_op(rng: np.random.Generator, kg: KnowledgeOrgan, step: int) -> ops.Op:
    ents = [f"E{i}" for i in range(14)]
    roll = rng.random()
    if roll < 0.25 and kg.triplets:  # invalidate a fact (or one already invalid)
        keys = sorted(kg.triplets)
        t = kg.triplets[keys[int(rng.integers(len(keys)))]]
        return ops.InvalidateTriplet(
            subject=t.subject, predicate=t.predicate, object=t.object, at_ms=step, recorded_ms=step
        )
    if roll < 0.45:
        a, b = (int(x) for x in rng.integers(1, 25, 2))
        kind = KINDS[int(rng.integers(3))]
        return ops.AddAssocEdge(src=a, dst=b, edge=kind, weight=float(rng.random()), at_ms=step)
    s, o = (ents[int(x)] for x in rng.integers(0, len(ents), 2))
    # few predicates: facts repeat (reinforce, gain sources, come back after invalidation)
    return ops.AddTriplet(
        subject=s if rng.random() < 0.5 else s.lower(),
        predicate=["uses", "has"][int(rng.integers(2))],
        object=o,
        weight=float(rng.integers(1, 4)),
        source_memory_id=int(rng.integers(1, 25)),
        valid_from_ms=step,
        recorded_ms=step,
    )


def _networkx(kg: KnowledgeOrgan, graph: GraphOrgan) -> nx.DiGraph:
    """Nodes ("e", entity key) and ("m", memory id), from the organs' public state."""
    g = nx.DiGraph()

    def add(a: tuple[str, object], b: tuple[str, object], w: float) -> None:
        g.add_edge(a, b, weight=g.get_edge_data(a, b, {"weight": 0.0})["weight"] + w)

    for t, view in kg.query():
        s, o, w = ("e", t.subject.casefold()), ("e", t.object.casefold()), view["weight"]
        add(s, o, w)
        add(o, s, gi.REVERSE * w)
        for mid in view["source_memory_ids"]:
            for e in (s, o):
                add(e, ("m", mid), w)
                add(("m", mid), e, w)
    for a, outs in graph.out_edges():
        for b, kind, w in outs:
            if kind != "Contradicts" and w > 0:
                add(("m", a), ("m", b), w)
    return g


def _scores(index: gl.GraphIndex, seeds: list[str], cap: int = 0) -> dict[object, float]:
    nodes = np.array([index.entity[s] for s in seeds], np.uint32)
    got, scores, _, _ = index.native.ppr(nodes, max_hops=2, tol=1e-14, max_iter=5000,
                                         max_nodes=cap)  # fmt: skip
    out: dict[object, float] = {}
    for n, v in zip(got.tolist(), scores.tolist()):
        out[("m", int(index._mid[n])) if index._kind[n] == gi.MEMORY else ("e", index.keys[n])] = v
    return out


@pytest.mark.parametrize("seed", range(8))
def test_incremental_index_equals_a_fresh_build_and_networkx(seed: int) -> None:
    rng = np.random.default_rng(seed)
    kg, graph = KnowledgeOrgan(), GraphOrgan()
    live = gl.GraphIndex.build(kg, graph)
    for step in range(1, 241):
        op = _random_op(rng, kg, step)
        (kg if isinstance(op, ops.AddTriplet | ops.InvalidateTriplet) else graph).apply(op)
        if rng.random() < 0.3:  # deltas arrive in batches of any size
            assert not live.stale(kg, graph)
            live.update()
        if step % 60:
            continue
        live.update()
        fresh = gl.GraphIndex.build(kg, graph)
        ref = _networkx(kg, graph)
        for _ in range(6):
            seeds = sorted({f"e{int(x)}" for x in rng.integers(0, 14, int(rng.integers(1, 3)))})
            seeds = [s for s in seeds if s in live.entity]
            if not seeds:
                continue
            a, b = _scores(live, seeds), _scores(fresh, seeds)
            assert set(a) == set(b)
            assert max(abs(a[n] - b[n]) for n in a) < 1e-9
            # the node cap picks the same nodes: each node's edges keep one order
            assert _scores(live, seeds, cap=7).keys() == _scores(fresh, seeds, cap=7).keys()
            sub = ref.subgraph(
                set().union(*(
                    nx.single_source_shortest_path_length(ref, ("e", s), cutoff=2)
                    for s in seeds if ("e", s) in ref
                ))
                | {("e", s) for s in seeds}
            ).copy()  # fmt: skip
            sub.add_nodes_from(("e", s) for s in seeds)  # a seed whose facts all ended
            want = nx.pagerank(sub, alpha=gl.ALPHA, tol=1e-14, max_iter=5000,
                               personalization={("e", s): 1.0 for s in seeds})  # fmt: skip
            assert set(a) == set(want)
            assert max(abs(a[n] - want[n]) for n in a) < 1e-9


def test_an_alias_rebuilds_and_a_restore_rebuilds() -> None:
    kg, graph = KnowledgeOrgan(), GraphOrgan()
    kg.apply(ops.AddTriplet(subject="Bob", predicate="uses", object="Rust", source_memory_id=1))
    index = gl.GraphIndex.build(kg, graph)
    kg.apply(ops.AddTriplet(subject="Robert", predicate="has", object="Tokio"))
    assert not index.stale(kg, graph)
    kg.apply(ops.AddTriplet(subject="Robert", predicate="alias_of", object="Bob"))
    assert index.stale(kg, graph)  # alias classes merge nodes: a new build
    again = gl.GraphIndex.build(kg, graph)
    assert again.entity["robert"] == again.entity["bob"]
    assert index.stale(kg, GraphOrgan())  # another organ object


def test_the_recall_path_takes_deltas_and_never_builds_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    real = gl.GraphIndex.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[gl.GraphIndex], kg: object, graph: object) -> gl.GraphIndex:
        builds.append(1)
        out: gl.GraphIndex = real(cls, kg, graph)
        return out

    monkeypatch.setattr(gl.GraphIndex, "build", classmethod(counted))
    with chitta.open(tmp_path / "f", embedder=None, recall_settings=GRAPH_ON) as f:
        f.call("kg_set_extraction", on=True)
        f.remember("Jeff uses Rust.")
        f.recall("what does Jeff use?", k=3)
        for i in range(20):
            f.remember(f"Rust has crate{i}.")
            f.remember("Jeff lives in Lisbon." if i % 2 else "Jeff lives in Porto.")
            hits = f.recall(f"what does Jeff use with crate{i}?", k=3)
            assert hits
        assert builds == [1]
        lane = gl.graph_lane_hook(f.core)("Jeff and crate7", 50, None)
        assert lane is not None and len(lane.ids)
    with chitta.open(tmp_path / "f", embedder=None, recall_settings=GRAPH_ON) as f:
        again = gl.graph_lane_hook(f.core)("Jeff and crate7", 50, None)
        assert again is not None
        assert again.ids.tolist() == lane.ids.tolist()
        assert np.allclose(again.scores, lane.scores, rtol=0, atol=1e-12)


def test_native_deltas_reject_bad_input() -> None:
    from chitta import _core

    e = np.zeros(0, np.uint32)
    g = _core._PprGraph(2, e, e, np.zeros(0))
    assert g.add_nodes(np.array([0], np.uint8), np.array([9], np.uint64)) == 2
    assert g.add_edges(np.array([0, 2], np.uint32), np.array([2, 1], np.uint32),
                       np.array([1.0, 2.0])) == 0  # fmt: skip
    with pytest.raises(InvalidArgument, match="slot"):
        g.set_weights(np.array([5], np.uint64), np.array([1.0]))
    with pytest.raises(InvalidArgument, match="negative"):
        g.set_weights(np.array([0, 1], np.uint64), np.array([1.0, -1.0]))
    with pytest.raises(InvalidArgument, match="node"):
        g.add_edges(np.array([0], np.uint32), np.array([3], np.uint32), np.array([1.0]))
    with pytest.raises(InvalidArgument, match="same length"):
        g.add_nodes(np.array([0], np.uint8), np.array([], np.uint64))
    assert g.edges == 2  # nothing changed by the refused calls
    g.set_weights(np.array([0], np.uint64), np.array([0.0]))  # a tombstone is never followed
    nodes, _, _, _ = g.ppr(np.array([0], np.uint32))
    assert nodes.tolist() == [0]
