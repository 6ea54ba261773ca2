"""What convex score fusion (``RecallSettings.fusion_alpha``) or a larger candidate pool costs a hybrid recall.

Builds (or reuses) ``bench_recall.py``'s synthetic field of N memories (12-word
zipf texts, 384-d clustered vectors, checkpointed so that 100K opens with its
HNSW graph) and times ``recall(text, vector=..., k=10, touch=False)`` with
weighted RRF and with convex fusion (or, with ``--pools A,B``, convex fusion
with ``RecallSettings.pool`` / ``keyword_pool`` A and B, each "lanes/keyword"), in alternating blocks (the machine is
shared: alternation spreads the load over both). Prints wall-clock p50/p99 and
the calling thread's CPU p50 per setting, and the difference.

    python research/locomo_fusion_cost.py [--n 100000] [--queries 300] [--blocks 3] [--alpha 0.55]
                                            [--pools A,B] [--field-dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_recall import build, queries

import chitta
from chitta.recall.engine import RecallSettings


def timed(field: chitta.Field, qv: np.ndarray, qt: list[str]) -> tuple[list[float], list[float]]:
    field.recall(qt[0], vector=qv[0], k=10, touch=False)  # lazy indexes
    wall, cpu = [], []
    for v, t in zip(qv, qt):
        c0, t0 = time.thread_time(), time.perf_counter()
        field.recall(t, vector=v, k=10, touch=False)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    return wall, cpu


def percentile_rows(got: dict[str, tuple[list[float], list[float]]]) -> dict[str, dict[str, float]]:
    """Per setting: wall p50/p99 and thread CPU p50/p99 (ms) of its (wall, cpu) samples."""
    return {
        name: {
            "p50_ms": float(np.percentile(w, 50)),
            "p99_ms": float(np.percentile(w, 99)),
            "cpu_p50_ms": float(np.percentile(c, 50)),
            "cpu_p99_ms": float(np.percentile(c, 99)),
        }
        for name, (w, c) in got.items()
    }


def print_ab(console: Console, out: dict[str, Any]) -> None:
    """The rows of ``out`` as a table, then each later setting minus the first."""
    table = Table(
        title=f"hybrid recall at N={out['n']:,}, k=10 ({out['queries']} queries per setting, "
        f"load {out['load'][0]:.1f})",
        title_justify="left",
    )
    for col in ("setting", "p50 ms", "p99 ms", "thread CPU p50 ms", "thread CPU p99 ms"):
        table.add_column(col)
    for name, r in out["rows"].items():
        table.add_row(
            name,
            f"{r['p50_ms']:.3f}",
            f"{r['p99_ms']:.3f}",
            f"{r['cpu_p50_ms']:.3f}",
            f"{r.get('cpu_p99_ms', float('nan')):.3f}",
        )
    console.print(table)
    (name_a, a), *others = out["rows"].items()
    for name_b, b in others:  # each later setting minus the first
        console.print(
            f"{name_b} - {name_a}: p50 {b['p50_ms'] - a['p50_ms']:+.3f} ms, "
            f"thread CPU p50 {b['cpu_p50_ms'] - a['cpu_p50_ms']:+.3f} ms"
        )


def field_queries(args: argparse.Namespace, console: Console) -> tuple[Path, np.ndarray, list[str]]:
    """bench_recall's field of ``args.n`` memories under ``args.field_dir`` (built once, kept) and its
    ``args.queries`` queries: (the field's root, query vectors, query texts)."""
    root = args.field_dir / f"n{args.n}"
    with Progress(console=console, transient=True) as progress:
        field, vecs, docs = build(root, args.n, progress)
    field.close()
    qv, qt = queries(vecs, docs, args.queries)
    return root, qv, qt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=0.55)
    ap.add_argument(
        "--pools",
        default=None,
        help="A,B, each LANES/KEYWORD: compare RecallSettings.pool / keyword_pool (convex fusion)",
    )
    ap.add_argument("--field-dir", type=Path, default=Path("/tmp/chitta-fusion-cost"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    root, qv, qt = field_queries(args, console)
    settings = {
        "rrf": RecallSettings(),
        f"convex {args.alpha}": RecallSettings(fusion_alpha=args.alpha),
    }
    if args.pools:  # "lanes/keyword": RecallSettings.pool / keyword_pool
        settings = {
            f"pool {p}": RecallSettings(
                fusion_alpha=args.alpha,
                pool=int(p.split("/")[0]),
                keyword_pool=int(p.split("/")[-1]),
            )
            for p in args.pools.split(",")
        }
    got: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in settings}
    for _ in range(args.blocks):
        for name, s in settings.items():
            with chitta.open(root, embedder=None, recall_settings=s) as f:
                wall, cpu = timed(f, qv, qt)
            got[name][0].extend(wall)
            got[name][1].extend(cpu)
    rows = percentile_rows(got)
    out = {
        "n": args.n,
        "queries": args.queries * args.blocks,
        "load": os.getloadavg(),
        "rows": rows,
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print_ab(console, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
