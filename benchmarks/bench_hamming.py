"""Hamming top-400 over 256-bit codes: chitta vs faiss IndexBinaryFlat vs numpy,
and vs the single-thread memory-bandwidth bound measured in the same run.

Smoke (CI, seconds):   pytest benchmarks/bench_hamming.py --benchmark-disable
pytest-benchmark run:  CHITTA_BENCH_N=100000,1000000 pytest benchmarks/bench_hamming.py \
                           --benchmark-min-rounds=5 --benchmark-warmup=on
Ratio table (what RESULTS.md quotes; interleaved rounds, best of each), plus the
rescoring recall table with CHITTA_BENCH_RECALL=1:
                       CHITTA_BENCH_N=100000,1000000 python benchmarks/bench_hamming.py

Everything is single-threaded (faiss is set to 1 thread). Codes are uniform
random 256-bit codes; queries are stored codes with 20 bits flipped, so real
near neighbours exist. The bandwidth bound is the time chitta's own read probe
(`_hamming_read_bytes`, 2 x 32-byte loads per step) takes to read the same
code array once: a scan cannot be faster than reading its bytes.
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
import pytest

from chitta import _core
from chitta.organs.index.hamming import HammingIndex, simd_level

BITS = 256
K = 400
NQ = 8


def sizes() -> list[int]:
    return [int(s) for s in os.environ.get("CHITTA_BENCH_N", "20000").split(",") if s.strip()]


def make(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2**64, size=(n, BITS // 64), dtype=np.uint64)
    queries = codes[rng.integers(0, n, size=NQ)].copy()
    for q in queries:
        for bit in rng.choice(BITS, size=20, replace=False):
            q[bit // 64] ^= np.uint64(1) << np.uint64(bit % 64)
    return codes, queries


class Case:
    """One data set and every contender built over it."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.codes, self.queries = make(n)
        self.index = HammingIndex(BITS)
        self.index.add(np.arange(n, dtype=np.uint64), self.codes)
        self.faiss = None
        try:
            import faiss

            faiss.omp_set_num_threads(1)
            self.faiss = faiss.IndexBinaryFlat(BITS)
            self.faiss.add(self.codes.view(np.uint8))
        except ImportError:  # faiss is a bench extra
            pass
        self.i = 0

    def next_query(self) -> np.ndarray:
        self.i = (self.i + 1) % NQ
        return self.queries[self.i]

    def chitta(self) -> object:
        return self.index.search(self.next_query(), K)

    def faiss_search(self) -> object:
        assert self.faiss is not None
        return self.faiss.search(self.next_query()[None].view(np.uint8), K)

    def numpy(self) -> object:
        d = np.bitwise_count(self.codes ^ self.next_query()).sum(axis=1, dtype=np.uint32)
        part = np.argpartition(d, K)[:K]
        return part[np.lexsort((part, d[part]))]

    def bandwidth(self) -> object:
        return _core._hamming_read_bytes(self.codes)


_CASES: dict[int, Case] = {}


def case(n: int) -> Case:
    if n not in _CASES:
        _CASES.clear()  # keep one data set in memory at a time
        _CASES[n] = Case(n)
    return _CASES[n]


def _bench(benchmark, n: int, contender: str) -> None:
    """Times ``Case.<contender>`` on the data set of size ``n`` (one group per ``n``)."""
    c = case(n)
    if contender == "faiss_search" and c.faiss is None:
        pytest.skip("faiss-cpu not installed")
    benchmark.extra_info.update(
        n=n, bits=BITS, k=K, simd=simd_level(), bytes_scanned=n * BITS // 8, threads=1
    )
    benchmark.group = f"hamming top-{K} n={n}"
    benchmark(getattr(c, contender))


@pytest.mark.parametrize("n", sizes())
def test_chitta_hamming_top400(benchmark, n):
    _bench(benchmark, n, "chitta")


@pytest.mark.parametrize("n", sizes())
def test_faiss_binary_flat_top400(benchmark, n):
    _bench(benchmark, n, "faiss_search")


@pytest.mark.parametrize("n", sizes())
def test_numpy_bitwise_count_top400(benchmark, n):
    _bench(benchmark, n, "numpy")


@pytest.mark.parametrize("n", sizes())
def test_read_bandwidth_bound(benchmark, n):
    _bench(benchmark, n, "bandwidth")


@pytest.mark.parametrize("n", sizes())
def test_contenders_agree_on_distances(n):
    """Same distances from every contender (ids may differ only inside ties)."""
    c = case(n)
    q = c.queries[0]
    ids, dist = c.index.search(q, K)
    ref = np.bitwise_count(c.codes ^ q).sum(axis=1, dtype=np.uint32)
    np.testing.assert_array_equal(np.sort(ref)[:K], dist)
    np.testing.assert_array_equal(ref[ids.astype(np.int64)], dist)
    if c.faiss is not None:
        fd, _ = c.faiss.search(q[None].view(np.uint8), K)
        np.testing.assert_array_equal(fd[0], dist)


# ---- ratio table ------------------------------------------------------------------


def _best(fn, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    levels = [lv for lv in ("avx512", "avx2", "generic") if _core._hamming_simd_supported(lv)]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"python {platform.python_version()}, numpy {np.__version__}"
    )
    header = "| n | bytes | bound (read) | " + " | ".join(f"chitta {lv}" for lv in levels)
    header += " | faiss 1 thr | numpy | chitta/bound | faiss/chitta | numpy/chitta |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for n in sizes():
        c = case(n)
        rounds = max(5, min(200, 20_000_000 // n))
        times: dict[str, float] = {"bound": float("inf"), "faiss": float("inf")}
        times["numpy"] = float("inf")
        for lv in levels:
            times[lv] = float("inf")
        for _ in range(3):  # interleave contenders so drift hits all alike
            times["bound"] = min(times["bound"], _best(c.bandwidth, rounds))
            for lv in levels:
                _core._hamming_force_simd(lv)
                times[lv] = min(times[lv], _best(c.chitta, rounds))
            if c.faiss is not None:
                times["faiss"] = min(times["faiss"], _best(c.faiss_search, rounds))
            times["numpy"] = min(times["numpy"], _best(c.numpy, max(3, rounds // 10)))
        _core._hamming_force_simd(levels[0])
        best = times[levels[0]]

        def ms(t: float) -> str:
            return f"{t * 1e3:.3f} ms"

        row = f"| {n:,} | {n * BITS // 8 / 2**20:.1f} MiB | {ms(times['bound'])} | "
        row += " | ".join(ms(times[lv]) for lv in levels)
        row += f" | {ms(times['faiss'])} | {ms(times['numpy'])} | {best / times['bound']:.2f}x"
        row += f" | {times['faiss'] / best:.2f}x | {times['numpy'] / best:.1f}x |"
        print(row, flush=True)


def recall_table() -> None:
    """recall@10 of HammingRescoreIndex vs exact cosine, by candidate count."""
    import datagen

    from chitta.organs.index.hamming import HammingRescoreIndex

    nq = 100
    print("| n | spread | candidates | recall@10 | ms/query |")
    print("|---|---|---|---|---|")
    for n in sizes():
        for spread in (0.35, 1.0):
            x = datagen.clustered_vectors(n, 256, spread=spread, seed=1)
            q = datagen.queries_near(x, nq, noise=spread, seed=2)
            sims = q @ x.T
            exact = np.argpartition(-sims, 10, axis=1)[:, :10]  # the true top-10 sets
            del sims
            idx = HammingRescoreIndex(256)
            idx.add(np.arange(n, dtype=np.uint64), x)
            for c in (100, 400, 1000, 4000):
                t = time.perf_counter()
                got, _ = idx.search(q, 10, candidates=c)
                per_q = (time.perf_counter() - t) / nq * 1e3
                hit = [len(set(got[i].tolist()) & set(exact[i].tolist())) for i in range(nq)]
                print(f"| {n:,} | {spread} | {c} | {np.mean(hit) / 10:.3f} | {per_q:.2f} |")
            del x


if __name__ == "__main__":
    main()
    if os.environ.get("CHITTA_BENCH_RECALL"):
        recall_table()
