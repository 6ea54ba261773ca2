"""HNSW vs hnswlib and faiss IndexHNSWFlat, side by side in one run.

All three get the same data (``datagen.clustered_vectors``, 256-d, unit
vectors, cosine), M=16, ef_construction=200, the same number of build threads
(``CHITTA_BENCH_THREADS``, default 2) and one search thread. Measured:

* build time (wall) and resident memory added by the build (RSS delta, bytes
  per vector; chitta's own ``memory_bytes()`` is reported beside it);
* an ef sweep: recall@10 against a numpy brute force and single-thread batch
  QPS at each ef; the headline is QPS at the smallest ef reaching recall@10
  >= 0.95, timed again by pytest-benchmark.

Sizes come from the environment: ``CHITTA_BENCH_N`` (default 5000, the CI
smoke size), ``CHITTA_BENCH_NQ`` (default 500). Smoke run (CI)::

    pytest benchmarks/bench_hnsw.py --benchmark-disable

Full run (the numbers in benchmarks/RESULTS.md)::

    CHITTA_BENCH_N=100000 CHITTA_BENCH_NQ=1000 nice -n 10 pytest benchmarks/bench_hnsw.py \\
        -s --benchmark-min-rounds=3 --benchmark-max-time=0.5 --benchmark-warmup=off

With ``-s`` a markdown table with ratios is printed at the end; set
``CHITTA_BENCH_REPORT=path.md`` to also write it to a file.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from typing import Any

import datagen
import numpy as np
import psutil
import pytest

from chitta import _core
from chitta.organs.index import HNSW

N = int(os.environ.get("CHITTA_BENCH_N", "5000"))
NQ = int(os.environ.get("CHITTA_BENCH_NQ", "500"))
THREADS = int(os.environ.get("CHITTA_BENCH_THREADS", "2"))
DIM = 256
K = 10
M = 16
EF_CONSTRUCTION = 200
TARGET = 0.95
EF_SWEEP = [10, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128, 192, 256]
LIBS = ["chitta", "hnswlib", "faiss"]

_BUILT: dict[str, Any] = {}
_STATS: dict[str, dict[str, Any]] = {}


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if "data" not in _BUILT:
        x = datagen.clustered_vectors(N, DIM, seed=0)
        q = datagen.queries_near(x, NQ, seed=99)
        # Exact truth: the vectors are unit length, so cosine order is dot order.
        sims = q @ x.T
        part = np.argpartition(-sims, K - 1, axis=1)[:, :K]
        _BUILT["data"] = (x, q, part)
    return _BUILT["data"]  # type: ignore[no-any-return]


def _recall(truth: np.ndarray, got: np.ndarray) -> float:
    hits = sum(len(set(t.tolist()) & set(g.tolist())) for t, g in zip(truth, got))
    return hits / truth.size


def _build_chitta(x: np.ndarray) -> tuple[Any, Callable[[np.ndarray, int], np.ndarray]]:
    index = HNSW(DIM, M=M, ef_construction=EF_CONSTRUCTION, metric="cosine")
    index.add(np.arange(len(x), dtype=np.uint64), x, num_threads=THREADS)

    def search(q: np.ndarray, ef: int) -> np.ndarray:
        return index.search(q, K, ef=ef, num_threads=1)[0]

    return index, search


def _build_hnswlib(x: np.ndarray) -> tuple[Any, Callable[[np.ndarray, int], np.ndarray]]:
    hnswlib = pytest.importorskip("hnswlib")
    index = hnswlib.Index(space="cosine", dim=DIM)
    index.init_index(max_elements=len(x), M=M, ef_construction=EF_CONSTRUCTION, random_seed=100)
    index.add_items(x, np.arange(len(x)), num_threads=THREADS)
    index.set_num_threads(1)

    def search(q: np.ndarray, ef: int) -> np.ndarray:
        index.set_ef(ef)
        return index.knn_query(q, k=K, num_threads=1)[0]

    return index, search


def _build_faiss(x: np.ndarray) -> tuple[Any, Callable[[np.ndarray, int], np.ndarray]]:
    faiss = pytest.importorskip("faiss")
    faiss.omp_set_num_threads(THREADS)
    # Inner product on unit vectors is cosine.
    index = faiss.IndexHNSWFlat(DIM, M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    index.add(x)
    faiss.omp_set_num_threads(1)

    def search(q: np.ndarray, ef: int) -> np.ndarray:
        index.hnsw.efSearch = ef
        return index.search(q, K)[1]

    return index, search


_BUILDERS = {"chitta": _build_chitta, "hnswlib": _build_hnswlib, "faiss": _build_faiss}


def _build(lib: str) -> tuple[Any, Callable[[np.ndarray, int], np.ndarray]]:
    if lib not in _BUILT:
        x, _, _ = _data()
        gc.collect()
        proc = psutil.Process()
        rss0 = proc.memory_info().rss
        t0 = time.perf_counter()
        c0 = time.process_time()
        built = _BUILDERS[lib](x)
        build_s = time.perf_counter() - t0
        # CPU seconds of all threads: steadier than wall time on a shared machine.
        _STATS.setdefault(lib, {})["build_cpu_s"] = time.process_time() - c0
        rss = proc.memory_info().rss - rss0
        stats = _STATS.setdefault(lib, {})
        stats["build_s"] = build_s
        stats["rss_bytes_per_vector"] = rss / len(x)
        if lib == "chitta":
            stats["self_bytes_per_vector"] = built[0].memory_bytes() / len(x)
        _BUILT[lib] = built
    return _BUILT[lib]  # type: ignore[no-any-return]


def _sweep(lib: str) -> None:
    stats = _STATS.setdefault(lib, {})
    if "ef" in stats:
        return
    _, q, truth = _data()
    _, search = _build(lib)
    sweep = []
    chosen = None
    for ef in EF_SWEEP:
        t0 = time.perf_counter()
        got = search(q, ef)
        dt = time.perf_counter() - t0
        r = _recall(truth, got)
        sweep.append((ef, r, len(q) / dt))
        if r >= TARGET:
            chosen = (ef, r)
            break
    stats["sweep"] = sweep
    stats["ef"], stats["recall"] = chosen if chosen else (EF_SWEEP[-1], sweep[-1][1])


def _info(benchmark: Any, lib: str) -> None:
    benchmark.extra_info.update(
        {
            "lib": lib,
            "n": N,
            "nq": NQ,
            "dim": DIM,
            "M": M,
            "ef_construction": EF_CONSTRUCTION,
            "build_threads": THREADS,
            "simd": _core.hnsw_distance_implementation(),
            "build_type": "Release",
        }
    )


@pytest.mark.parametrize("lib", LIBS)
def test_build(benchmark: Any, lib: str) -> None:
    _info(benchmark, lib)
    benchmark.pedantic(lambda: _build(lib), rounds=1, iterations=1)
    benchmark.extra_info.update(
        {
            k: v
            for k, v in _STATS[lib].items()
            if k in ("build_s", "build_cpu_s", "rss_bytes_per_vector")
        }
    )
    assert len(_STATS[lib]) >= 3


@pytest.mark.parametrize("lib", LIBS)
def test_search_at_recall(benchmark: Any, lib: str) -> None:
    _info(benchmark, lib)
    _sweep(lib)
    _, q, truth = _data()
    _, search = _build(lib)
    ef = _STATS[lib]["ef"]
    got = benchmark(search, q, ef)
    r = _recall(truth, got)
    stats = benchmark.stats.stats if benchmark.stats is not None else None
    if stats is not None and getattr(stats, "min", 0):
        _STATS[lib]["qps"] = len(q) / stats.min
    else:
        _STATS[lib]["qps"] = _STATS[lib]["sweep"][-1][2]
    benchmark.extra_info.update({"ef": ef, "recall_at_10": r, "qps": _STATS[lib]["qps"]})
    assert r >= TARGET or ef == EF_SWEEP[-1]


def test_report() -> None:
    """Prints (and with CHITTA_BENCH_REPORT writes) the side-by-side table with ratios."""
    for lib in LIBS:
        _build(lib)
        _sweep(lib)
        _STATS[lib].setdefault("qps", _STATS[lib]["sweep"][-1][2])
    base = _STATS["chitta"]
    lines = [
        (
            f"N={N}, NQ={NQ}, dim={DIM}, M={M}, ef_construction={EF_CONSTRUCTION}, "
            f"build threads={THREADS}, search threads=1, "
            f"simd={_core.hnsw_distance_implementation()}"
        ),
        "",
        (
            "| library | build s | build ratio (chitta/x) | build CPU s | CPU ratio (chitta/x) "
            "| RSS B/vec | mem ratio (chitta/x) "
            "| ef @ recall>=0.95 | recall@10 | QPS | QPS ratio (chitta/x) |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for lib in LIBS:
        s = _STATS[lib]
        lines.append(
            f"| {lib} | {s['build_s']:.2f} | {base['build_s'] / s['build_s']:.2f} "
            f"| {s['build_cpu_s']:.2f} | {base['build_cpu_s'] / s['build_cpu_s']:.2f} "
            f"| {s['rss_bytes_per_vector']:.0f} "
            f"| {base['rss_bytes_per_vector'] / max(s['rss_bytes_per_vector'], 1):.2f} "
            f"| {s['ef']} | {s['recall']:.3f} | {s['qps']:.0f} | {base['qps'] / s['qps']:.2f} |"
        )
    lines.append("")
    lines.append(f"chitta self-reported memory: {base['self_bytes_per_vector']:.0f} B/vector")
    lines.append("")
    lines.append("ef sweep (ef: recall@10, QPS):")
    for lib in LIBS:
        sweep = ", ".join(f"{ef}: {r:.3f}, {qps:.0f}" for ef, r, qps in _STATS[lib]["sweep"])
        lines.append(f"- {lib}: {sweep}")
    table = "\n".join(lines)
    print("\n" + table)
    out = os.environ.get("CHITTA_BENCH_REPORT")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(table + "\n")
    assert all(_STATS[lib]["qps"] > 0 for lib in LIBS)
