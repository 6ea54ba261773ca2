"""What the learned factors cost recall: p50 latency with and without learning state.

Two fields with the same N memories (no embedder: the keyword lane) answer the same
queries; one of them holds learning state touching every hit (a rated source pair, a
debt, surprise credit, a predictor transition), so recall takes 3x candidates and
reranks them with every learned factor. Side by side, same run.

    python benchmarks/bench_learned_rerank.py [--n 100000] [--queries 300] [--k 10]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import chitta

WORDS = [f"w{i}" for i in range(5000)]


def fill(root: Path, n: int) -> tuple[chitta.Field, list[int]]:
    rng = random.Random(1)
    f = chitta.open(root, embedder=None)
    ids: list[int] = []
    for lo in range(0, n, 5000):
        ids += f.remember_many([" ".join(rng.sample(WORDS, 12)) for _ in range(min(5000, n - lo))])
    return f, ids


def p50(f: chitta.Field, queries: list[str], k: int) -> float:
    return p50_pair(f, f, queries, k)[0]


def p50_pair(a: chitta.Field, b: chitta.Field, queries: list[str], k: int) -> tuple[float, float]:
    """p50 of each field over the same queries, interleaved (a, b, b, a, ...) so that the
    machine's load falls on both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for i, q in enumerate(queries):
        for j in (0, 1) if i % 2 == 0 else (1, 0):
            t0 = time.perf_counter()
            (a, b)[j].recall(q, k=k, touch=False)
            times[j].append(time.perf_counter() - t0)
    return statistics.median(times[0]) * 1000, statistics.median(times[1]) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--k", type=int, default=10)
    a = ap.parse_args()
    rng = random.Random(2)
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(a.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        plain, _ = fill(Path(tmp) / "plain", a.n)
        learned, ids = fill(Path(tmp) / "learned", a.n)
        with plain, learned:
            learned.call("feedback", memory_id=ids[0], useful=True)  # rates (default, field)
            learned.call("record_outcome", expected="a", actual="b", memory_ids=ids[:3])
            learned.call("record_access", ids=[ids[1], ids[2]])
            learned.call("debt_register", question="why?", memory_ids=[ids[3]])
            p50_pair(plain, learned, queries[:20], a.k)  # warm up
            base, with_state = p50_pair(plain, learned, queries, a.k)
    print(f"n={a.n} k={a.k} queries={a.queries}")
    print(f"p50 recall, no learning state   {base:.3f} ms")
    print(f"p50 recall, every learned factor {with_state:.3f} ms")
    print(f"difference {with_state - base:+.3f} ms, ratio {with_state / base:.2f}")


if __name__ == "__main__":
    main()
