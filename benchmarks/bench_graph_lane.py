"""Graph lane (chitta/recall/graph_lane.py, csrc/graph/ppr.cc) vs networkx pagerank.

Smoke (CI, seconds):  pytest benchmarks/bench_graph_lane.py --benchmark-disable
Full run (the numbers in RESULTS.md):
    CHITTA_BENCH_GRAPH=100000,1000000 nice -n 10 pytest benchmarks/bench_graph_lane.py -s

Data: M memories and T triplets over M entities (uniform: each fact picks its
subject, object and source memory at random; predicates from 20), applied as
AddTriplet ops to a KnowledgeOrgan, plus M/2 random CoRetrieved edges in a
GraphOrgan; the lane's GraphIndex is built from the two. Queries name one or two
random entities. Times per query, single thread:

- ``lane``: the whole lane (entity spotting in the text, bounded BFS, PageRank,
  memories ranked): what recall pays;
- ``native``: the PageRank call alone (BFS + iteration);
- ``networkx``: ``networkx.pagerank(personalization=seeds)`` on the same bounded
  subgraph, handed to it prebuilt (its best case: the subgraph build is not timed);
- ``build``: the index made at once from the organs (what an open pays: it is derived);
- ``delta_update``: ``update()`` after one remember + recall's worth of changes (a new
  fact, a reinforcement, an invalidation, two coupling edges).

The max |score difference| between the two over the queries is printed too.
"""

from __future__ import annotations

import os
import time
from typing import Any

import networkx as nx
import numpy as np

from chitta import ops
from chitta.organs.graph import GraphOrgan
from chitta.organs.knowledge import KnowledgeOrgan
from chitta.recall import graph_lane as gl

SIZES = os.environ.get("CHITTA_BENCH_GRAPH", "2000,20000")
NQ = 200


def organs(n_mem: int, n_facts: int, seed: int = 0) -> tuple[KnowledgeOrgan, GraphOrgan]:
    rng = np.random.default_rng(seed)
    kg = KnowledgeOrgan()
    subj = rng.integers(0, n_mem, n_facts)
    obj = rng.integers(0, n_mem, n_facts)
    src = rng.integers(1, n_mem + 1, n_facts)
    pred = rng.integers(0, 20, n_facts)
    for s, o, m, p in zip(subj.tolist(), obj.tolist(), src.tolist(), pred.tolist()):
        kg.apply(ops.AddTriplet(subject=f"ent{s}", predicate=f"rel{p}", object=f"ent{o}",
                                source_memory_id=m, recorded_ms=1))  # fmt: skip
    graph = GraphOrgan()
    for a, b in rng.integers(1, n_mem + 1, (n_mem // 2, 2)).tolist():
        graph.apply(ops.AddAssocEdge(src=a, dst=b, edge="CoRetrieved", weight=0.1, at_ms=1))
    return kg, graph


def deltas(index: gl.GraphIndex, n_mem: int, rounds: int = 500) -> dict[str, float]:
    """One round = what a remember + recall adds: a new fact (a new source memory), a
    reinforcement, an invalidation and two coupling edges; then ``update()``."""
    kg, graph = index.knowledge, index.graph
    assert kg is not None and graph is not None
    rng = np.random.default_rng(5)
    times = []
    keys = list(kg.triplets)[:: max(1, len(kg.triplets) // 1000)]
    for r in range(rounds):
        s, o, m = (int(x) for x in rng.integers(0, n_mem, 3))
        old, gone = kg.triplets[keys[r % len(keys)]], kg.triplets[keys[(7 * r + 3) % len(keys)]]
        for op in (
            ops.AddTriplet(subject=f"ent{s}", predicate="rel1", object=f"ent{o}",
                           source_memory_id=n_mem + 1 + r, recorded_ms=2),
            ops.AddTriplet(subject=old.subject, predicate=old.predicate, object=old.object,
                           source_memory_id=m + 1, recorded_ms=2),
            ops.InvalidateTriplet(
                subject=gone.subject, predicate=gone.predicate, object=gone.object,
                at_ms=3, recorded_ms=3,
            ),
        ):  # fmt: skip
            kg.apply(op)
        graph.apply(ops.AddAssocEdge(src=m + 1, dst=s + 1, edge="CoRetrieved", weight=0.1, at_ms=1))
        graph.apply(
            ops.AddAssocEdge(src=s + 1, dst=m + 1, edge="CoRetrieved", weight=0.03, at_ms=1)
        )
        t0 = time.perf_counter()
        index.update()
        times.append(time.perf_counter() - t0)
    return {"delta_update_p50_ms": _p50(times), "delta_update_p99_ms": float(
        np.percentile(np.array(times) * 1e3, 99))}  # fmt: skip


def _p50(times: list[float]) -> float:
    return float(np.percentile(np.array(times) * 1e3, 50))


def measure(index: gl.GraphIndex, n_entities: int, seed: int = 1) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    texts = []
    for i in range(NQ):
        names = [f"ent{x}" for x in rng.integers(0, n_entities, 1 + i % 2)]
        texts.append("what do we know about " + " and ".join(names) + "?")
    live = lambda m: True
    for t in texts[:20]:  # warm
        index.lane(t, 50, None, live)
    lane_t, native_t, nx_t, diff, sizes = [], [], [], 0.0, []
    for t in texts:
        t0 = time.perf_counter()
        index.lane(t, 50, None, live)
        lane_t.append(time.perf_counter() - t0)
        seeds = index.seeds(t)
        t0 = time.perf_counter()
        nodes, scores, _ = index.run(seeds)
        native_t.append(time.perf_counter() - t0)
        sizes.append(len(nodes))
    for t in texts[:50]:  # networkx is slow: 50 queries
        seeds = index.seeds(t)
        nodes, scores, _ = index.run(seeds)
        s, d, w = index.native.edges_among(nodes)
        sub = nx.DiGraph()
        sub.add_nodes_from(nodes.tolist())
        summed: dict[tuple[int, int], float] = {}
        for a, b, c in zip(s.tolist(), d.tolist(), w.tolist()):  # parallel edges add up
            summed[a, b] = summed.get((a, b), 0.0) + c
        sub.add_weighted_edges_from((a, b, c) for (a, b), c in summed.items())
        t0 = time.perf_counter()
        pr = nx.pagerank(
            sub, alpha=gl.ALPHA, personalization=dict.fromkeys(seeds, 1.0), tol=1e-12, max_iter=1000
        )
        nx_t.append(time.perf_counter() - t0)
        diff = max(diff, max(abs(pr[n] - v) for n, v in zip(nodes.tolist(), scores.tolist())))
    legacy_t, legacy_diff = [], 0.0
    for t in texts:  # the code before D-069, same queries, same process
        seeds = index.seeds(t)
        t0 = time.perf_counter()
        ln, ls, _, _ = index.native.ppr(np.array(seeds, np.uint32), max_hops=gl.MAX_HOPS,
                                        tol=gl.TOL, max_nodes=gl.MAX_NODES, legacy=True)  # fmt: skip
        legacy_t.append(time.perf_counter() - t0)
        nodes, scores, _ = index.run(seeds)
        assert (ln == nodes).all()
        legacy_diff = max(legacy_diff, float(np.abs(ls - scores).max()))
    capped = {}
    for cap in (4096, 512):  # the node cap trades reach for time
        ts = []
        for t in texts:
            seeds = index.seeds(t)
            t0 = time.perf_counter()
            index.native.ppr(np.array(seeds, np.uint32), max_hops=gl.MAX_HOPS, tol=gl.TOL,
                             max_nodes=cap)  # fmt: skip
            ts.append(time.perf_counter() - t0)
        capped[f"native_cap{cap}_p50_ms"] = _p50(ts)
    return {
        **capped,
        "lane_p50_ms": _p50(lane_t),
        "native_p50_ms": _p50(native_t),
        "native_p99_ms": float(np.percentile(np.array(native_t) * 1e3, 99)),
        "legacy_p50_ms": _p50(legacy_t),
        "legacy_p99_ms": float(np.percentile(np.array(legacy_t) * 1e3, 99)),
        "max_abs_diff_vs_legacy": legacy_diff,
        "networkx_p50_ms": _p50(nx_t),
        "networkx_p99_ms": float(np.percentile(np.array(nx_t) * 1e3, 99)),
        "ratio_nx_over_native": _p50(nx_t) / _p50(native_t),  # same capped subgraph
        "max_abs_diff": diff,
        "subgraph_nodes_p50": float(np.median(sizes)),
    }


def test_graph_lane_vs_networkx() -> None:
    pairs = [int(x) for x in SIZES.split(",")]
    n_mem, n_facts = pairs[0], pairs[1]
    kg, graph = organs(n_mem, n_facts)
    t0 = time.perf_counter()
    index = gl.GraphIndex.build(kg, graph)  # what an open pays (the index is derived)
    built = time.perf_counter() - t0
    out = measure(index, n_mem)
    out.update(deltas(index, n_mem))
    print(f"\nmemories {n_mem} triplets {n_facts} nodes {index.native.nodes} "
          f"edges {index.native.edges} build {built:.1f} s")  # fmt: skip
    for k, v in out.items():
        print(f"  {k:<22} {v:.4g}")
    assert out["max_abs_diff"] < 1e-6
