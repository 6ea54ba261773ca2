"""Lifecycle passes at scale: demotion, surprise, dedup, curation, reconciler.

Smoke (CI):
    pytest benchmarks/bench_lifecycle.py --benchmark-disable
Numbers:
    CHITTA_BENCH_N=20000 pytest benchmarks/bench_lifecycle.py --benchmark-min-rounds=1 \
        --benchmark-warmup=off --benchmark-columns=min,median,rounds -s

A field of ``CHITTA_BENCH_N`` (default 2,000) memories with random 64-d vectors,
5% of them planted near-duplicates (cosine 0.98 to an original, same text
plus a suffix, same significant tokens) and 1% exact duplicates; the clock
then jumps 40 days. Each pass is timed once per round on a fresh copy of the
field (passes write ops, so a second run on the same field would do nothing).
The dedup pass (a blocked exact cosine scan, ``dedup.near_pairs``) is
compared with a brute-force oracle (one full cosine matrix, same F_merge rule,
including re-reading the field): ``extra_info`` holds both merge counts and the
oracle's time.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.policies import dedup

N = int(os.environ.get("CHITTA_BENCH_N", "2000"))
DIM = 64
DAY = 86_400.0
T0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lifecycle") / "f"
    rng = np.random.default_rng(6)
    vecs = rng.standard_normal((N, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    texts = [f"note {i} about topic {i % 97} in module m{i % 13}" for i in range(N)]
    n_near, n_exact = N // 20, N // 100
    for j in range(n_near):
        src, dst = j, N - 1 - j
        noise = rng.standard_normal(DIM).astype(np.float32)
        noise -= (noise @ vecs[src]) * vecs[src]
        noise /= np.linalg.norm(noise)
        vecs[dst] = 0.98 * vecs[src] + np.sqrt(1 - 0.98**2) * noise
        texts[dst] = texts[src] + " (again)"
    for j in range(n_exact):
        texts[n_near + j + 1] = texts[n_near + j]
    clock = [T0]
    with chitta.open(root, embedder=None, durability="buffered", clock=lambda: clock[0]) as f:
        for lo in range(0, N, 1000):
            f.remember_many(
                [{"text": texts[i], "embedding": vecs[i]} for i in range(lo, min(N, lo + 1000))]
            )
    return root


def _fresh(source: Path, tmp_path: Path) -> chitta.Field:
    root = tmp_path / "copy"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(source, root)
    return chitta.open(root, embedder=None, clock=lambda: T0 + 40 * DAY)


@pytest.mark.parametrize(
    "name", ["demote_pass", "surprise_pass", "dedup_pass", "curate", "detect_contradictions"]
)
def test_pass(benchmark, source: Path, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    fields: list[chitta.Field] = []

    def setup() -> tuple[tuple[()], dict[str, object]]:
        fields.append(_fresh(source, tmp_path))
        return (), {}

    def run() -> object:
        return getattr(fields[-1], name)()

    result = benchmark.pedantic(run, setup=setup, rounds=1, iterations=1)
    benchmark.extra_info.update({"n": N, "dim": DIM, "pass": name})
    if name == "dedup_pass":
        f = fields[-1]
        t = time.perf_counter()
        oracle = _oracle_pairs(source)
        benchmark.extra_info["oracle_s"] = time.perf_counter() - t
        benchmark.extra_info["merged"] = result.merged  # type: ignore[attr-defined]
        benchmark.extra_info["oracle_pairs"] = oracle
        assert result.merged >= 0.95 * oracle  # type: ignore[attr-defined]
        f.close()
    for f in fields:
        f.close()


def _oracle_pairs(root: Path) -> int:
    """Merges a full cosine matrix would make under the same rule (greedy, one pass)."""
    with chitta.open(root, read_only=True, embedder=None) as f:
        mems = list(f.memories())
    vecs = np.stack([m.embedding for m in mems])  # type: ignore[misc]
    sims = vecs @ vecs.T
    clusters = dedup.Clusters()
    for group in dedup.exact_groups(mems):
        for other in group[1:]:
            clusters.join(group[0], other)
    pairs = []
    ii, jj = np.nonzero(np.triu(sims > 1 - dedup.LAMBDA, 1))
    for i, j in zip(ii.tolist(), jj.tolist()):
        a, b = mems[i], mems[j]
        if a.realm == b.realm and a.kind == b.kind:
            fm = dedup.f_merge(float(sims[i, j]), a.text, b.text)
            if fm < 0:
                pairs.append((fm, i, j))
    for _, i, j in sorted(pairs):
        clusters.join(mems[i], mems[j])
    return len(clusters.dropped)
