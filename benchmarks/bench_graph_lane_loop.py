"""Recall p50 with the graph lane off / on (deltas) / on (whole rebuild), side by side,
under a remember + recall loop with write-time extraction on (D-051, D-053).

    python benchmarks/bench_graph_lane_loop.py [prefill] [loops]     (default 3000 300)

Three fields get the same writes: ``prefill`` fact-shaped memories ("Person12 uses
Tool34.", "Tool34 has Feature5.", "Person3 lives in City7."), then ``loops`` rounds of
one new memory and one recall whose query names an entity (the recall's top hits
couple, so each round changes both the knowledge and the graph organ). Configs:

- ``off``: lane weight 0 (the default until this measurement);
- ``deltas``: lane weight 1.0, the index takes each change as a delta;
- ``rebuild``: lane weight 1.0, the index built whole after every change (what the
  lane did before: chitta/recall/graph_index.py's ``stale`` forced true).

The rounds interleave the three fields, so load changes hit all three alike. Times are
each recall() call; embedder=None (the lane's cost does not depend on the model).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import chitta
from chitta.recall import graph_index
from chitta.recall.engine import RecallSettings

CONFIGS = ("off", "deltas", "rebuild")


def sentence(rng: np.random.Generator) -> str:
    p, t, f, c = (int(x) for x in rng.integers(0, 400, 4))
    return [
        f"Person{p} uses Tool{t}.",
        f"Tool{t} has Feature{f}.",
        f"Person{p} lives in City{c}.",
        f"Person{p} works at Company{c}.",
    ][int(rng.integers(4))]


def query(rng: np.random.Generator) -> str:
    p, t = (int(x) for x in rng.integers(0, 400, 2))
    return [f"what does Person{p} use?", f"which features does Tool{t} have?"][int(rng.integers(2))]


def main(prefill: int, loops: int) -> None:
    base = RecallSettings().lane_weights
    fields = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in CONFIGS:
            weights = {**base, "graph": 0.0 if name == "off" else 1.0}
            f = chitta.open(Path(tmp) / name, embedder=None,
                            recall_settings=RecallSettings(lane_weights=weights))  # fmt: skip
            f.call("kg_set_extraction", on=True)
            fields[name] = f
        rng = np.random.default_rng(0)
        texts = [sentence(rng) for _ in range(prefill)]
        for f in fields.values():
            for i in range(0, prefill, 500):
                f.remember_many(texts[i : i + 500])
            f.recall("what does Person1 use?", k=5)  # the first build (deltas, rebuild)
        real_stale = graph_index.GraphStore.stale
        times: dict[str, list[float]] = {n: [] for n in CONFIGS}
        try:
            for _ in range(loops):
                text, q = sentence(rng), query(rng)
                for name, f in fields.items():
                    force = name == "rebuild"
                    graph_index.GraphStore.stale = (  # type: ignore[method-assign]
                        (lambda self, kg, g: True) if force else real_stale
                    )
                    f.remember(text)
                    t0 = time.perf_counter()
                    hits = f.recall(q, k=10)
                    times[name].append(time.perf_counter() - t0)
                    assert hits is not None
        finally:
            graph_index.GraphStore.stale = real_stale  # type: ignore[method-assign]
        facts = fields["off"].call("kg_query", limit=1)["total"]
        for f in fields.values():
            f.close()
    p50 = {n: float(np.percentile(np.array(t) * 1e3, 50)) for n, t in times.items()}
    p99 = {n: float(np.percentile(np.array(t) * 1e3, 99)) for n, t in times.items()}
    print(f"prefill {prefill} memories, {loops} remember+recall rounds, {facts} current facts")
    for n in CONFIGS:
        print(f"  {n:<8} recall p50 {p50[n]:8.3f} ms   p99 {p99[n]:8.3f} ms")
    print(f"  lane cost (deltas - off) p50 {p50['deltas'] - p50['off']:+.3f} ms; "
          f"rebuild / deltas p50 x{p50['rebuild'] / p50['deltas']:.1f}")  # fmt: skip


def test_graph_lane_loop_smoke() -> None:
    main(200, 20)


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 3000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 300,
    )
