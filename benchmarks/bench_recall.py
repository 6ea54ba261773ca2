"""End-to-end ``Field.recall`` latency (query embedding excluded) and
``Field.remember`` throughput.

Recall: a field of N memories (synthetic texts over a 5,000-word vocabulary,
384-d ``datagen.clustered_vectors``), queried with a perturbed stored vector
plus a 4-word text (``recall(text, vector=..., k=10, touch=False)``), so the
time is the index + fusion + scoring path alone. p50/p99 per lane set:
bm25, dense, posting, and the full hybrid. Published competitor numbers for
the whole search call (not run here, they include their own embedding and
network hops): mem0 search p50 148 ms, Zep 87 ms.

Remember: memories/s of ``remember_many`` (groups of 256) with caller vectors
(no embedder), with the hashing embedder, and with the ONNX MiniLM model (when
installed; measured on a smaller N).

    python benchmarks/bench_recall.py [--sizes 10000,100000] [--queries 300] [--json]
    CHITTA_BENCH_RECALL_N=2000 pytest benchmarks/bench_recall.py --benchmark-disable   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen  # noqa: E402

import chitta  # noqa: E402

LANE_SETS = {"bm25": ("bm25",), "dense": ("dense",), "posting": ("posting",), "hybrid": None}
VOCAB = [f"w{i}" for i in range(5000)]


def texts(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    words = rng.zipf(1.3, size=(n, 12)) % len(VOCAB)
    return [" ".join(VOCAB[w] for w in row) for row in words]


def build(root: Path, n: int, progress: Progress | None = None) -> tuple[chitta.Field, np.ndarray, list[str]]:
    vecs = datagen.clustered_vectors(n, 384, n_clusters=max(10, n // 100), seed=1)
    docs = texts(n)
    field = chitta.open(root, durability="buffered", embedder=None)
    task = progress.add_task(f"writing {n:,}", total=n) if progress else None
    for lo in range(0, n, 2048):
        field.remember_many([{"text": t, "embedding": v} for t, v in zip(docs[lo : lo + 2048], vecs[lo : lo + 2048])])
        if progress and task is not None:
            progress.advance(task, min(2048, n - lo))
    return field, vecs, docs


def recall_latency(field: chitta.Field, vecs: np.ndarray, docs: list[str], nq: int) -> dict[str, dict[str, float]]:
    queries = datagen.queries_near(vecs, nq, seed=7)
    rng = np.random.default_rng(11)
    qtexts = [" ".join(docs[int(i)].split()[:4]) for i in rng.integers(0, len(docs), nq)]
    out = {}
    for name, lanes in LANE_SETS.items():
        field.recall(qtexts[0], vector=queries[0], k=10, lanes=lanes, touch=False)  # builds lazy indexes
        times = []
        for q, t in zip(queries, qtexts):
            t0 = time.perf_counter()
            field.recall(t, vector=q, k=10, lanes=lanes, touch=False)
            times.append(time.perf_counter() - t0)
        ms = np.array(times) * 1000
        out[name] = {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99))}
    return out


def remember_rate(root: Path, n: int, embedder: Any, vectors: bool) -> float:
    docs = texts(n, seed=5)
    vecs = datagen.clustered_vectors(n, 384, seed=2) if vectors else None
    with chitta.open(root, durability="buffered", embedder=embedder) as field:
        t0 = time.perf_counter()
        for lo in range(0, n, 256):
            items = [{"text": t} for t in docs[lo : lo + 256]]
            if vecs is not None:
                for item, v in zip(items, vecs[lo : lo + 256]):
                    item["embedding"] = v
            field.remember_many(items)
        return n / (time.perf_counter() - t0)


def run(sizes: list[int], nq: int, write_n: int, console: Console) -> dict[str, Any]:
    from chitta.encode import HashingEmbedder, default_embedder

    result: dict[str, Any] = {"recall": {}, "remember": {}}
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console, transient=True) as progress:
        for n in sizes:
            field, vecs, docs = build(Path(tmp) / f"r{n}", n, progress)
            result["recall"][n] = recall_latency(field, vecs, docs, nq)
            field.close()
        result["remember"]["caller vectors"] = remember_rate(Path(tmp) / "w1", write_n, None, True)
        result["remember"]["no vectors"] = remember_rate(Path(tmp) / "w0", write_n, None, False)
        result["remember"]["hashing embedder"] = remember_rate(Path(tmp) / "w2", write_n, HashingEmbedder(), False)
        onnx = default_embedder()
        if onnx.name != HashingEmbedder().name:
            result["remember"]["onnx MiniLM"] = remember_rate(Path(tmp) / "w3", max(256, write_n // 20), onnx, False)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=os.environ.get("CHITTA_BENCH_RECALL_N", "10000,100000"))
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--write-n", type=int, default=10000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    sizes = [int(s) for s in args.sizes.split(",")]
    result = run(sizes, args.queries, args.write_n, console)
    if args.json:
        print(json.dumps(result))
        return 0
    table = Table(title="Field.recall latency (query embedding excluded), k=10", title_justify="left")
    for col in ("N", "lanes", "p50 ms", "p99 ms", "vs mem0 148 ms p50", "vs Zep 87 ms p50"):
        table.add_column(col)
    for n, lanes in result["recall"].items():
        for name, t in lanes.items():
            table.add_row(f"{n:,}", name, f"{t['p50_ms']:.3f}", f"{t['p99_ms']:.3f}",
                          f"{148 / t['p50_ms']:.0f}x", f"{87 / t['p50_ms']:.0f}x")
    console.print(table)
    wt = Table(title="Field.remember_many throughput", title_justify="left")
    wt.add_column("path")
    wt.add_column("memories/s")
    for name, rate in result["remember"].items():
        wt.add_row(name, f"{rate:,.0f}")
    console.print(wt)
    return 0


def test_recall_bench_smoke(tmp_path: Path) -> None:
    n = int(os.environ.get("CHITTA_BENCH_RECALL_N", "2000").split(",")[0])
    field, vecs, docs = build(tmp_path / "f", n)
    lat = recall_latency(field, vecs, docs, 20)
    field.close()
    assert set(lat) == set(LANE_SETS)


if __name__ == "__main__":
    sys.exit(main())
