"""The graph lane (chitta/recall/graph_lane.py, csrc/graph/ppr.cc) against networkx.

The oracle is ``networkx.pagerank(personalization=...)`` on the subgraph a bounded
BFS reaches, the BFS done by networkx too; the lane's graph is rebuilt here from
the field's public state (kg_query and the graph organ's edges) by the rule the
module documents.
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import chitta
from chitta import _core
from chitta.errors import InvalidArgument
from chitta.recall import graph_lane as gl
from chitta.recall.engine import RecallSettings

# The lane is opt-in (weight 0 by default, D-053): these tests turn it on.
GRAPH_ON = RecallSettings(lane_weights={**RecallSettings().lane_weights, "graph": 1.0})

TOL = 1e-6


def bounded(g: nx.DiGraph, seeds: list[int], hops: int) -> nx.DiGraph:
    reach: set[int] = set()
    for s in seeds:
        reach |= set(nx.single_source_shortest_path_length(g, s, cutoff=hops))
    return g.subgraph(reach)


def nx_ppr(g: nx.DiGraph, seeds: list[int], hops: int) -> dict[int, float]:
    sub = bounded(g, seeds, hops)
    pers = {s: 1.0 for s in seeds}
    out: dict[int, float] = nx.pagerank(
        sub, alpha=0.85, personalization=pers, tol=1e-13, max_iter=5000
    )
    return out


@pytest.mark.parametrize("seed", range(6))
def test_native_ppr_equals_networkx(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    m = int(rng.integers(n, 6 * n))
    src = rng.integers(0, n, m).astype(np.uint32)
    dst = rng.integers(0, n, m).astype(np.uint32)
    w = rng.random(m) * 3
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for a, b, c in zip(src.tolist(), dst.tolist(), w.tolist()):
        prev = g.get_edge_data(a, b, {"weight": 0.0})["weight"]
        g.add_edge(a, b, weight=prev + c)  # parallel edges add up
    seeds = sorted({int(x) for x in rng.integers(0, n, int(rng.integers(1, 4)))})
    hops = int(rng.integers(1, 4))
    nodes, scores, parents, _ = _core._PprGraph(n, src, dst, w).ppr(
        np.array(seeds, np.uint32), max_hops=hops, tol=1e-13, max_iter=5000
    )
    want = nx_ppr(g, seeds, hops)
    assert set(nodes.tolist()) == set(want)
    for node, score in zip(nodes.tolist(), scores.tolist()):
        assert abs(score - want[node]) < TOL
    for node, parent in zip(nodes.tolist(), parents.tolist()):
        assert (parent == 0xFFFFFFFF) == (node in seeds)
        if parent != 0xFFFFFFFF:
            assert g.has_edge(parent, node)


def test_native_ppr_rejects_bad_input() -> None:
    u = np.array([0], np.uint32)
    with pytest.raises(InvalidArgument, match="node"):
        _core._PprGraph(1, u, np.array([3], np.uint32), np.array([1.0]))
    with pytest.raises(InvalidArgument, match="negative"):
        _core._PprGraph(2, u, u, np.array([-1.0]))
    with pytest.raises(InvalidArgument, match="dtype"):
        _core._PprGraph(2, u, u, np.array([1.0], np.float32))
    with pytest.raises(InvalidArgument, match="same length"):
        _core._PprGraph(2, u, np.array([0, 1], np.uint32), np.array([1.0]))
    g = _core._PprGraph(2, u, np.array([1], np.uint32), np.array([1.0]))
    with pytest.raises(InvalidArgument, match="seed"):
        g.ppr(np.array([5], np.uint32))
    with pytest.raises(InvalidArgument, match="alpha"):
        g.ppr(u, alpha=1.5)


def _field(tmp_path: Path) -> chitta.Field:
    return chitta.open(tmp_path / "f", embedder=None, recall_settings=GRAPH_ON)


def _reference_graph(f: chitta.Field) -> nx.DiGraph:
    """The lane's graph from public state: nodes ("e", entity) and ("m", memory id)."""
    g = nx.DiGraph()

    def add(a: tuple[str, object], b: tuple[str, object], w: float) -> None:
        prev = g.get_edge_data(a, b, {"weight": 0.0})["weight"]
        g.add_edge(a, b, weight=prev + w)

    facts = f.call("kg_query", limit=1000)["triplets"]
    for t in facts:
        s, o, w = ("e", t["subject_entity"]), ("e", t["object_entity"]), t["weight"]
        add(s, o, w)
        add(o, s, gl.REVERSE * w)
        for mid in t["source_memory_ids"]:
            for e in (s, o):
                add(e, ("m", mid), w)
                add(("m", mid), e, w)
    graph = f.organ("graph")
    for a, outs in graph.out_edges():  # type: ignore[attr-defined]
        for b, kind, w in outs:
            if kind not in ("Supersedes", "Contradicts"):
                add(("m", a), ("m", b), w)
    return g


def test_lane_scores_equal_networkx_on_the_fields_graph(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    people = [f"Person{i}" for i in range(12)]
    things = [f"Thing{i}" for i in range(15)]
    with _field(tmp_path) as f:
        mids = [f.remember(f"note {i} about work") for i in range(30)]
        for i in range(60):
            s = people[int(rng.integers(len(people)))] if i % 2 else things[int(rng.integers(15))]
            o = things[int(rng.integers(len(things)))]
            f.call(
                "kg_add",
                subject=s,
                predicate=["uses", "has", "likes"][i % 3],
                object=o,
                weight=float(rng.integers(1, 4)),
                source_memory_id=mids[int(rng.integers(len(mids)))],
            )
        for _ in range(25):
            a, b = rng.choice(len(mids), 2, replace=False)
            f.link(mids[int(a)], mids[int(b)], "RelatedTo", float(rng.random() + 0.1))
        f.link(mids[0], mids[1], "Contradicts", 5.0)  # suppressing: not a path
        ref = _reference_graph(f)
        lane = gl.graph_lane_hook(f.core)
        for query, seeds in (
            ("what does person3 use?", ["Person3"]),  # names match case-blind; shown as written
            ("Person1 and THING4", ["Person1", "Thing4"]),
        ):
            got = lane(query, 1000, None)
            assert got is not None
            assert list(got.seeds) == seeds
            seed_nodes = [("e", s) for s in seeds]
            want = nx.pagerank(
                bounded(ref, seed_nodes, gl.MAX_HOPS),  # type: ignore[arg-type]
                alpha=gl.ALPHA,
                personalization={s: 1.0 for s in seed_nodes},
                tol=1e-13,
                max_iter=5000,
            )
            want_m = {n[1]: v for n, v in want.items() if n[0] == "m"}
            assert set(got.ids.tolist()) == set(want_m)
            for mid, score in zip(got.ids.tolist(), got.scores.tolist()):
                assert abs(score - want_m[mid]) < TOL
            assert list(got.scores) == sorted(got.scores, reverse=True)


def test_explain_shows_the_path_and_the_lane_finds_the_second_hop(tmp_path: Path) -> None:
    with _field(tmp_path) as f:
        jeff = f.remember("Jeff uses Rust for the backend.")
        tokio = f.remember("Rust has async via Tokio.")
        for i in range(30):
            f.remember(f"Filler {i}: the stack of plates, what we use at home, Jeffrey's notes.")
        f.call("kg_add", subject="Jeff", predicate="uses", object="Rust", source_memory_id=jeff)
        f.call("kg_add", subject="Rust", predicate="has", object="Tokio", source_memory_id=tokio)
        off = f.recall("What does Jeff's stack use for concurrency?", k=5, lanes=("bm25",))
        assert tokio not in [h.id for h in off]  # no shared word: keywords alone miss it
        hits = f.recall("What does Jeff's stack use for concurrency?", k=5, explain=True)
        by_id = {h.id: h for h in hits}
        assert tokio in by_id and jeff in by_id
        assert by_id[tokio].graph_path == f"Jeff -uses-> Rust -has-> Tokio -> memory {tokio}"
        assert "graph path: Jeff -uses-> Rust" in by_id[tokio].explain()
        f.forget(tokio)
        assert tokio not in [h.id for h in f.recall("What does Jeff's stack use?", k=5)]


def test_lane_is_the_same_after_replay_and_after_a_checkpoint(tmp_path: Path) -> None:
    def lane_of(f: chitta.Field) -> list[tuple[int, float]]:
        got = gl.graph_lane_hook(f.core)("what about Jeff and Tokio", 100, None)
        assert got is not None
        return list(zip(got.ids.tolist(), got.scores.tolist()))

    with _field(tmp_path) as f:
        a = f.remember("Jeff uses Rust.")
        b = f.remember("Rust has Tokio.")
        c = f.remember("Tokio runs tasks.")
        f.call("kg_add", subject="Jeff", predicate="uses", object="Rust", source_memory_id=a)
        f.call("kg_add", subject="Rust", predicate="has", object="Tokio", source_memory_id=b)
        f.link(b, c, "RelatedTo", 0.5)
        f.recall("Jeff Rust Tokio", k=3)  # CoRetrieved couplings join the graph
        want = lane_of(f)
        assert {a, b, c} <= {m for m, _ in want}
    for checkpoint in (True, False):
        with _field(tmp_path) as f:
            assert lane_of(f) == want
            if checkpoint:
                f.checkpoint()


def test_co_occurrence_links_memories_through_the_names_they_share(tmp_path: Path) -> None:
    texts = ["Alice met Bob at the station.", "Bob fixed the boiler.", "Carol baked bread."]
    assert gl.proper_names("Dana: I think Alice's Bob and Bob left.") == ["Alice", "Bob", "Bob"]
    with chitta.open(tmp_path / "off", embedder=None) as f:
        for t in texts:
            f.remember(t)
        assert gl.graph_lane_hook(f.core)("what did Alice see?", 10, None) is None  # opt-in
    settings = RecallSettings(graph_mentions=True, lane_weights=GRAPH_ON.lane_weights)
    with chitta.open(tmp_path / "on", embedder=None, recall_settings=settings) as f:
        a, b, c = (f.remember(t) for t in texts)
        f.core.check_open()  # applies this handle's queued puts, as recall does first
        got = gl.graph_lane_hook(f.core)("what did Alice see?", 10, None)
        assert got is not None and got.seeds == ("Alice",)
        # Alice -> her memory -> Bob -> his memory: three hops; Carol shares no name
        assert got.ids.tolist()[:2] == [a, b] and c not in got.ids.tolist()
        f.remember("Alice and Carol met.")  # a new memory rebuilds the graph
        f.core.check_open()
        again = gl.graph_lane_hook(f.core)("what did Alice see?", 10, None)
        assert again is not None and c in again.ids.tolist()
