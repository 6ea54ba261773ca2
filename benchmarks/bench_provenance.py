"""Cost of the provenance axis, side by side in one process (docs/PROVENANCE.md).

Writes: remember() on a field without an embedder naming no writer (nothing recorded),
naming one (an assign event in the put's group) and an open-weight tool (inferred,
candidate), interleaved for 4 rounds, best per call.

Recall: two fields with the same N texts, one with no open-weight memories (the native
tail), one with 1% of them open-weight candidates (the provenance factor: the Python tail),
the same queries on both, interleaved, p50 per recall; and the provenance filter.

    python benchmarks/bench_provenance.py [N]
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import chitta

TEXT = "the deploy pipeline waits for the staging smoke tests before it promotes a build"
WORDS = [
    "deploy",
    "pipeline",
    "staging",
    "smoke",
    "tests",
    "build",
    "cache",
    "queue",
    "redis",
    "postgres",
    "worker",
    "cron",
    "backup",
    "restore",
    "latency",
    "budget",
    "alert",
    "pager",
    "rollout",
    "canary",
    "schema",
    "index",
    "shard",
]


def _writes(n: int) -> None:
    with tempfile.TemporaryDirectory() as d, chitta.open(d + "/f", embedder=None) as f:
        cases: dict[str, Callable[[], object]] = {
            "remember(text, realm): no writer named": lambda: f.remember(TEXT, realm="r"),
            "remember(text, realm, provenance='claude')": lambda: f.remember(
                TEXT, realm="r", provenance="claude"
            ),
            "remember(text, realm, source_tool='ollama'): inferred candidate": lambda: f.remember(
                TEXT, realm="r", source_tool="ollama"
            ),
        }
        best: dict[str, float] = {}
        for _ in range(4):
            for name, fn in cases.items():
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                best[name] = min(best.get(name, 1e9), (time.perf_counter() - t0) / n * 1e6)
    for name, us in best.items():
        print(f"{us:7.2f} us/write  {name}")


def _texts(n: int) -> list[str]:
    rng = random.Random(5)
    return [" ".join(rng.choices(WORDS, k=9)) + f" item {i}" for i in range(n)]


def _recalls(n: int) -> None:
    texts = _texts(n)
    rng = random.Random(6)
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(200)]
    with tempfile.TemporaryDirectory() as d:
        plain = chitta.open(d + "/plain", embedder=None)
        mixed = chitta.open(d + "/mixed", embedder=None)
        plain.remember_many(texts)
        mixed.remember_many(
            [
                {"text": t, "provenance": "open_weight_generated"} if i % 100 == 0 else t
                for i, t in enumerate(texts)
            ]
        )
        cases: dict[str, Callable[[str], object]] = {
            "no open-weight memories (native tail)": lambda q: plain.recall(q, touch=False),
            "1% open-weight candidates (provenance factor)": lambda q: mixed.recall(q, touch=False),
            "provenance=['unknown'] filter, 1% candidates": lambda q: mixed.recall(
                q, touch=False, provenance=["unknown"]
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(3):
            for q in queries:
                for name, fn in cases.items():
                    t0 = time.perf_counter()
                    fn(q)
                    times[name].append((time.perf_counter() - t0) * 1e6)
        base = statistics.median(times[next(iter(cases))])
        for name, ts in times.items():
            p50 = statistics.median(ts)
            print(f"{p50:8.1f} us p50 recall ({p50 / base:4.2f}x)  {name}, {n} memories")
        plain.close()
        mixed.close()


def main(n: int) -> None:
    _writes(max(1000, n // 5))
    _recalls(n)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10000)
