"""The recall-index organ's share of replay: CPU per put of ``apply_run`` (decoded
PutPayload runs) vs ``apply_columns`` (the same runs as PutColumns), timed around
the organ alone, plus the first keyword flush, the organ's resident bytes and the time of a
filtered ``allowed()`` (after a write, when its arrays are rebuilt, and cached).

    python benchmarks/recall_columns_replay.py --n 1000000 [--dim 0] [--json]

Runs of 4,096 puts (replay's batch), labels like an agent's field (3 kinds, 8
realms, 500 sessions, no harness), texts of ~100 bytes, 1 in 50 puts with meta (``--meta-every``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time

import numpy as np
import psutil

from chitta.ops import OpType, PutPayload
from chitta.organs.recall_index import RecallIndexOrgan
from chitta.ops.put_columns import PutColumns

RUN = 4096
WORDS = ["alpha", "beta", "gamma", "delta", "memory", "agent", "tool", "call", "result", "user", "said", "the", "plan", "next", "step", "file"]


def make_runs(n: int, dim: int, meta_every: int, seed: int = 1) -> list[list[PutPayload]]:
    rng = np.random.default_rng(seed)
    words = rng.integers(0, len(WORDS), size=(n, 14))
    kinds, realms, sessions = rng.integers(0, 3, n), rng.integers(0, 8, n), rng.integers(0, 500, n)
    vecs = rng.standard_normal((n, dim)).astype("<f4") if dim else None
    puts = []
    for i in range(n):
        meta = {"speaker": f"s{i % 7}"} if meta_every and i % meta_every == 0 else None
        puts.append(PutPayload(
            id=i + 1, text=" ".join(WORDS[w] for w in words[i]) + f" {i}", created_ms=1_700_000_000_000 + i,
            kind=("episodic", "semantic", "procedural")[kinds[i]], realm=f"r{realms[i]}", session=f"s{sessions[i]}",
            meta=meta, embedding=None if vecs is None else vecs[i].tobytes(),
        ))
    return [puts[lo : lo + RUN] for lo in range(0, n, RUN)]


def rss() -> int:
    gc.collect()
    return int(psutil.Process().memory_info().rss)


def measure(mode: str, runs: list[list[PutPayload]], cols: list[PutColumns] | None, n: int) -> dict[str, float]:
    gc.collect()
    gc.disable()
    before = rss()
    organ = RecallIndexOrgan()
    t0 = time.process_time()
    if mode == "apply_run":
        for run in runs:
            organ.apply_run(OpType.PutPayload, run)  # type: ignore[arg-type]
    else:
        assert cols is not None
        for c in cols:
            organ.apply_columns(c)
    t1 = time.process_time()
    after = rss()
    organ.keyword("memory plan", 10, None)  # the first keyword query flushes every pending text
    t2 = time.process_time()
    after_bm25 = rss()
    gc.enable()
    filters = {"kind": {"kinds": frozenset({"semantic"})}, "realm": {"realm": "r3"}, "session": {"session": "s7"},
               "realm+time": {"realm": "r3", "since_ms": 1_700_000_000_000 + n // 2},
               "not_staged": {"include_staged": False, "realm": "r1"}}
    cold, warm = {}, {}
    for name, kw in filters.items():
        times = []
        for _ in range(5):  # after a write: the filter arrays are rebuilt
            organ._sorted_ids.clear()
            t = time.perf_counter()
            organ.allowed(**kw)
            times.append(time.perf_counter() - t)
        cold[name] = sorted(times)[2] * 1e3
        t = time.perf_counter()
        for _ in range(20):
            organ.allowed(**kw)
        warm[name] = (time.perf_counter() - t) / 20 * 1e3
    return {
        "allowed_after_write_ms": cold,  # type: ignore[dict-item]
        "allowed_cached_ms": warm,  # type: ignore[dict-item]
        "apply_us_per_put": (t1 - t0) / n * 1e6,
        "keyword_flush_s": t2 - t1,
        "rss_bytes_per_memory": (after - before) / n,
        "rss_bytes_per_memory_with_bm25": (after_bm25 - before) / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=0)
    ap.add_argument("--meta-every", type=int, default=50, help="1 put in this many has meta (0: none)")
    ap.add_argument("--modes", default="apply_run,apply_columns")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    runs = make_runs(args.n, args.dim, args.meta_every)
    modes = args.modes.split(",")
    cols = [PutColumns.from_puts(r) for r in runs] if "apply_columns" in modes else None
    out = {"n": args.n, "dim": args.dim, "meta_every": args.meta_every, "pid_load": os.getloadavg()[0]}
    for mode in modes:
        out[mode] = measure(mode, runs, cols, args.n)  # type: ignore[assignment]
    if args.json:
        print(json.dumps(out))
        return
    print(f"n={args.n} dim={args.dim} load={out['pid_load']:.1f}")
    print(f"{'mode':<14} {'us/put':>8} {'flush s':>8} {'RSS B/mem':>10} {'+BM25':>8}")
    for mode in modes:
        r = out[mode]
        print(f"{mode:<14} {r['apply_us_per_put']:>8.3f} {r['keyword_flush_s']:>8.2f} "  # type: ignore[index]
              f"{r['rss_bytes_per_memory']:>10.0f} {r['rss_bytes_per_memory_with_bm25']:>8.0f}")  # type: ignore[index]
    for mode in modes:
        r = out[mode]
        print(f"{mode}: allowed() ms after a write / cached: " + ", ".join(  # type: ignore[index]
            f"{k} {r['allowed_after_write_ms'][k]:.2f}/{r['allowed_cached_ms'][k]:.3f}" for k in r["allowed_after_write_ms"]))  # type: ignore[index]


if __name__ == "__main__":
    main()
