"""Where the expansion lane's word search should switch from the exact scan to the HNSW graph.

``chitta._core._WordIndex`` (csrc/recall/word_index.h) over n word vectors (384-d), one query at a
time, ``want`` = 10 rows (5 words + a query's own words): the exact scan's and the graph's (beam 64,
M 16, ef_construction 200) time per search (p50, us), the graph's build time, and the graph's
recall of the exact answer (the 5 best rows: what the lane keeps). Two kinds of vectors:

- ``random``: deterministic random unit vectors (no structure: the graph's worst case);
- ``minilm``: the distinct words of LoCoMo dev (``vocabulary_words`` of every turn) embedded by the
  default MiniLM model, the queries its questions (what the lane meets on LoCoMo). Needs the model;
  the vectors are kept in ``--cache``.

    python research/word_search_cost.py [--sizes 1024,2048,4096,8192,16384] [--queries 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from chitta import _core
from chitta.recall.expand import vocabulary_words

DATA = Path("/work/shared/data/locomo/locomo-dev.json")


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def minilm(cache: Path) -> tuple[np.ndarray, np.ndarray]:
    if cache.exists():
        z = np.load(cache)
        return z["words"], z["questions"]
    from chitta.encode import default_embedder

    samples = json.loads(DATA.read_text())
    words: set[str] = set()
    questions: list[str] = []
    for s in samples:
        for key, session in s["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    words |= vocabulary_words(turn.get("text", ""))
        questions += [q["question"] for q in s["qa"] if q.get("question")]
    model = default_embedder()
    w = unit(
        np.concatenate(
            [
                np.asarray(model.embed(b.tolist()), np.float32)
                for b in np.array_split(sorted(words), max(1, len(words) // 512))
            ]
        )
    )
    q = unit(np.asarray(model.embed(questions[:1000]), np.float32))
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, words=w, questions=q)
    return w, q


def timed(index: _core._WordIndex, qs: np.ndarray, want: int) -> tuple[float, list[list[int]]]:
    times, rows = [], []
    for q in qs:
        t0 = time.perf_counter_ns()
        r, _ = index.search(q, want)
        times.append(time.perf_counter_ns() - t0)
        rows.append(r)
    return float(np.percentile(times, 50)) / 1000.0, rows


def measure(
    name: str, words: np.ndarray, qs: np.ndarray, want: int
) -> dict[str, float | int | str]:
    n, dim = words.shape
    exact = _core._WordIndex(dim, n, 64)
    exact.add(words)
    t0 = time.perf_counter()
    graph = _core._WordIndex(dim, 0, 64)
    graph.add(words)
    build_s = time.perf_counter() - t0
    exact_us, truth = timed(exact, qs, want)
    graph_us, got = timed(graph, qs, want)
    recall = np.mean([len(set(a[:5]) & set(b[:5])) / 5 for a, b in zip(truth, got)])
    same = np.mean([a[:5] == b[:5] for a, b in zip(truth, got)])
    return {
        "vectors": name,
        "n": n,
        "exact_us": exact_us,
        "graph_us": graph_us,
        "graph_build_s": build_s,
        "graph_recall5": float(recall),
        "graph_same5": float(same),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024,2048,4096,8192,16384")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--want", type=int, default=10)
    ap.add_argument("--no-model", action="store_true")
    ap.add_argument(
        "--cache", type=Path, default=Path("/tmp/chitta-word-search/minilm-locomo-words.npz")
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    rng = np.random.default_rng(0)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("word search", total=len(sizes) + (0 if args.no_model else 1))
        qs = unit(rng.standard_normal((args.queries, 384)))
        for n in sizes:
            rows.append(measure("random", unit(rng.standard_normal((n, 384))), qs, args.want))
            progress.advance(task)
        if not args.no_model:
            words, questions = minilm(args.cache)
            rows.append(measure("minilm", words, questions[: args.queries], args.want))
            for n in (s for s in sizes if s < len(words)):  # the first n words (sorted order) only
                rows.append(measure("minilm", words[:n], questions[: args.queries], args.want))
            progress.advance(task)
    out = {"load": os.getloadavg(), "want": args.want, "queries": args.queries, "rows": rows}
    if args.json:
        print(json.dumps(out))
        return 0
    table = Table(
        title=f"word search, 384-d, want {args.want}, {args.queries} queries (load {out['load'][0]:.1f})",
        title_justify="left",
    )
    for col in (
        "vectors",
        "n",
        "exact p50 us",
        "graph p50 us",
        "graph build s",
        "graph recall@5",
        "same top 5",
    ):
        table.add_column(col)
    for r in rows:
        table.add_row(
            str(r["vectors"]),
            f"{r['n']:,}",
            f"{r['exact_us']:.1f}",
            f"{r['graph_us']:.1f}",
            f"{r['graph_build_s']:.2f}",
            f"{r['graph_recall5']:.3f}",
            f"{r['graph_same5']:.3f}",
        )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
