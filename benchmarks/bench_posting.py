"""Posting index: single-query latency vs numpy (inverted lists + bincount) and scipy.sparse.

Smoke (CI, seconds):  pytest benchmarks/bench_posting.py --benchmark-disable
Full run (the numbers in RESULTS.md):
    CHITTA_BENCH_N=100000,1000000 nice -n 10 pytest benchmarks/bench_posting.py \\
        --benchmark-min-rounds=200 --benchmark-warmup=on -s

Data: ``datagen.sparse_codes(N)`` (64 of 16,384 features, 1000 clusters),
cached under build/bench_cache/. Queries: stored codes with 16 of their 64
features swapped for random ones (true neighbours exist). k = 10.

All three return the top-k by overlap count. The competitors get the easier
job: they break count ties arbitrarily (argpartition), chitta also ranks ties
by summed activation and insertion order. ``test_p50_table`` times the three
side by side on the same queries and prints p50s and ratios. ``scipy`` is
the brief's CSR (memory x feature) times the query indicator vector, which
touches every stored nonzero; ``scipy_rows`` is the fairer transpose that sums
only the query's 64 feature rows (inverted lists in scipy).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import datagen
import numpy as np
import pytest
import scipy.sparse as sp

from chitta.organs.index import PostingIndex

NF, ACTIVE, K, NQ = 16384, 64, 10, 200
SIZES = [int(s) for s in os.environ.get("CHITTA_BENCH_N", "20000").split(",")]
CACHE = Path(__file__).resolve().parent.parent / "build" / "bench_cache"
_STATE: dict[int, dict[str, Any]] = {}


def codes(n: int) -> tuple[np.ndarray, np.ndarray]:
    path = CACHE / f"sparse_codes_{n}.npz"
    if path.exists():
        z = np.load(path)
        return z["feats"], z["acts"]
    feats, acts = datagen.sparse_codes(n)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(path, feats=feats, acts=acts)
    return feats, acts


def make_queries(feats: np.ndarray, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for row in feats[rng.integers(0, len(feats), size=NQ)]:
        keep = rng.choice(row, size=ACTIVE - 16, replace=False)
        extra = rng.choice(np.setdiff1d(np.arange(NF), keep), size=16, replace=False)
        out.append(np.sort(np.concatenate([keep, extra])))
    return np.asarray(out, dtype=np.uint32)


class NumpyBincount:
    """Inverted lists as one CSR-style array; counts with np.bincount."""

    def __init__(self, feats: np.ndarray) -> None:
        flat = feats.ravel()
        order = np.argsort(flat, kind="stable")
        self.rows = (order // feats.shape[1]).astype(np.int32)
        self.offsets = np.concatenate([[0], np.cumsum(np.bincount(flat, minlength=NF))])
        self.n = len(feats)

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        off = self.offsets
        cand = np.concatenate([self.rows[off[f] : off[f + 1]] for f in q])
        counts = np.bincount(cand, minlength=self.n)
        top = np.argpartition(-counts, k)[:k]
        top = top[np.argsort(-counts[top], kind="stable")]
        return top, counts[top]


class ScipyCsr:
    """Memory x feature CSR matrix times the query indicator vector."""

    def __init__(self, feats: np.ndarray) -> None:
        n = len(feats)
        indptr = np.arange(0, n * ACTIVE + 1, ACTIVE, dtype=np.int64)
        data = np.ones(n * ACTIVE, dtype=np.float32)
        self.m = sp.csr_matrix((data, feats.ravel().astype(np.int32), indptr), shape=(n, NF))

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        x = np.zeros(NF, dtype=np.float32)
        x[q] = 1.0
        counts = self.m @ x
        top = np.argpartition(-counts, k)[:k]
        top = top[np.argsort(-counts[top], kind="stable")]
        return top, counts[top].astype(np.uint32)


class ScipyRows:
    """Fairer scipy variant: feature x memory CSR, summing only the query's rows."""

    def __init__(self, csr: ScipyCsr) -> None:
        self.mt = csr.m.T.tocsr()

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        counts = np.asarray(self.mt[q].sum(axis=0)).ravel()
        top = np.argpartition(-counts, k)[:k]
        top = top[np.argsort(-counts[top], kind="stable")]
        return top, counts[top].astype(np.uint32)


def state(n: int) -> dict[str, Any]:
    if n not in _STATE:
        feats, acts = codes(n)
        index = PostingIndex(NF, ACTIVE)
        t0 = time.perf_counter()
        index.add(np.arange(n, dtype=np.uint64), feats, acts)
        build_s = time.perf_counter() - t0
        _STATE.clear()  # one size in memory at a time
        csr = ScipyCsr(feats)
        _STATE[n] = {
            "chitta": index,
            "numpy": NumpyBincount(feats),
            "scipy": csr,
            "scipy_rows": ScipyRows(csr),
            "queries": make_queries(feats),
            "build_s": build_s,
        }
    return _STATE[n]


def runner(s: dict[str, Any], impl: str):
    queries = s["queries"]
    it = iter(range(1 << 62))
    if impl == "chitta":
        index = s["chitta"]
        return lambda: index.search(queries[next(it) % NQ], K)
    other = s[impl]
    return lambda: other.search(queries[next(it) % NQ], K)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("impl", ["chitta", "numpy", "scipy", "scipy_rows"])
def test_single_query_latency(benchmark: Any, n: int, impl: str) -> None:
    s = state(n)
    benchmark.group = f"posting single query, N={n}, k={K}"
    benchmark.extra_info.update({"n": n, "k": K, "impl": impl, "build": "Release"})
    benchmark(runner(s, impl))


@pytest.mark.parametrize("n", SIZES)
def test_p50_table(n: int) -> None:
    """Same queries through all three, interleaved; prints p50/p90 and ratios."""
    s = state(n)
    # The three agree on the overlap counts of the top k (ties may pick other ids).
    for q in s["queries"][:20]:
        ours = s["chitta"].search(q, K)[1]
        np.testing.assert_array_equal(ours, s["numpy"].search(q, K)[1])
        np.testing.assert_array_equal(ours, s["scipy"].search(q, K)[1])
        np.testing.assert_array_equal(ours, s["scipy_rows"].search(q, K)[1])
    reps = int(os.environ.get("CHITTA_BENCH_REPS", "1"))
    times: dict[str, list[float]] = {"chitta": [], "numpy": [], "scipy": [], "scipy_rows": []}
    fns = {impl: runner(s, impl) for impl in times}
    for _ in range(reps * NQ):
        for impl, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[impl].append(time.perf_counter() - t0)
    p50 = {impl: float(np.median(t)) * 1e3 for impl, t in times.items()}
    p90 = {impl: float(np.percentile(t, 90)) * 1e3 for impl, t in times.items()}
    mem = s["chitta"].memory_bytes() / 2**20
    print(f"\nN={n} k={K} build={s['build_s']:.2f}s chitta_mem={mem:.0f}MiB")
    for impl in times:
        print(
            f"  {impl:10s} p50={p50[impl]:.3f} ms  p90={p90[impl]:.3f} ms  "
            f"ratio_vs_chitta={p50[impl] / p50['chitta']:.1f}x"
        )
