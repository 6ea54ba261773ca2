"""BM25 lane at scale: pruned vs exhaustive search, bm25s, and the index's
build / save / load times (the checkpoint sidecar ``bm25.idx``).

Data as ``bench_recall.py`` / ``bench_scale.py``: N texts of 12 words drawn
``zipf(1.3) % 5000`` (seed 3), queries = the first 4 words of random stored
texts (seed 11); the field's keyword index settings (k1 1.2, b 0.75, light
stemming, stopwords). One thread. Per-query wall time; p50/p99 over the
queries, each query timed once per pass and the best of ``--passes`` passes
kept per query (the machine is shared; the best pass is the least disturbed).
``auto`` is the default (exhaustive below 65,536 postings, else pruned).
Every pruned result is checked equal to the exhaustive one (ids and scores,
bit for bit). bm25s (``method="lucene"``, numpy backend, fed chitta's tokens:
its tokenizing is not timed, chitta's is) is the competitor.

    python benchmarks/bench_bm25_lane.py [--sizes 100000,1000000] [--queries 300] [--k 10,50] [--json]
    pytest benchmarks/bench_bm25_lane.py --benchmark-disable      # smoke (N = 3,000)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from chitta.organs.index.bm25 import BM25, tokenize

VOCAB = [f"w{i}" for i in range(5000)]


def texts(n: int, seed: int = 3) -> list[str]:
    words = np.random.default_rng(seed).zipf(1.3, size=(n, 12)) % len(VOCAB)
    return [" ".join(VOCAB[w] for w in row) for row in words]


def queries(docs: list[str], nq: int) -> list[str]:
    rng = np.random.default_rng(11)
    return [" ".join(docs[int(i)].split()[:4]) for i in rng.integers(0, len(docs), nq)]


def _lat(fn: Any, qs: list[str], passes: int) -> dict[str, float]:
    best = np.full(len(qs), np.inf)
    for _ in range(passes):
        for i, q in enumerate(qs):
            t = time.perf_counter()
            fn(q)
            best[i] = min(best[i], time.perf_counter() - t)
    ms = best * 1e3
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p99_ms": float(np.percentile(ms, 99)),
        "mean_ms": float(ms.mean()),
    }


def run_size(
    n: int, nq: int, ks: list[int], passes: int, rivals: bool, console: Console
) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    with console.status(f"N={n:,}: generating texts"):
        docs = texts(n)
        qs = queries(docs, nq)
    ids = np.arange(1, n + 1, dtype=np.uint64)
    with console.status(f"N={n:,}: building the index from texts"):
        t = time.perf_counter()
        ix = BM25(stem=True)
        ix.add(ids, docs)
        out["build_s"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp, console.status(f"N={n:,}: save / load"):
        path = Path(tmp) / "bm25.idx"
        t = time.perf_counter()
        ix.save(path)
        out["save_s"] = time.perf_counter() - t
        out["file_mb"] = path.stat().st_size / 1e6
        loads = []
        for _ in range(3):
            t = time.perf_counter()
            loaded = BM25.load(path)
            loads.append(time.perf_counter() - t)
        out["load_s"] = min(loads)
        t = time.perf_counter()
        loaded.remove(ids[:1])  # the first removal builds the forward index
        out["first_remove_after_load_s"] = time.perf_counter() - t
        del loaded
    for k in ks:
        with console.status(f"N={n:,}: checking pruned == exhaustive, k={k}"):
            for q in qs:
                a, b = ix.search(q, k, method="pruned"), ix.search(q, k, method="exhaustive")
                assert np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes(), q
        with console.status(f"N={n:,}: timing, k={k}"):
            out[f"exhaustive_k{k}"] = _lat(
                lambda q, k=k: ix.search(q, k, method="exhaustive"), qs, passes
            )
            out[f"pruned_k{k}"] = _lat(lambda q, k=k: ix.search(q, k, method="pruned"), qs, passes)
            out[f"auto_k{k}"] = _lat(lambda q, k=k: ix.search(q, k), qs, passes)
    if rivals:
        try:
            import bm25s
        except ImportError:
            bm25s = None
        if bm25s is not None:
            with console.status(f"N={n:,}: bm25s index (tokens from chitta's tokenizer)"):
                toks = [tokenize(d, stem=True) for d in docs]
                t = time.perf_counter()
                ref = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
                ref.index(toks, show_progress=False)
                out["bm25s_build_s"] = time.perf_counter() - t
                del toks
                qt = [[w for w in tokenize(q, stem=True) if w in ref.vocab_dict] for q in qs]
            for k in ks:
                with console.status(f"N={n:,}: timing bm25s, k={k}"):
                    out[f"bm25s_k{k}"] = _lat(
                        lambda q, k=k: ref.retrieve([q], k=k, show_progress=False, n_threads=1),
                        [q for q in qt if q],
                        passes,
                    )  # type: ignore[arg-type,misc]
            del ref
    return out


def run(
    sizes: list[int], nq: int, ks: list[int], passes: int, rivals: bool, console: Console
) -> dict[str, Any]:
    meta = {
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "load_before": os.getloadavg(),
        "queries": nq,
        "passes": passes,
        "k": ks,
    }
    results = [run_size(n, nq, ks, passes, rivals, console) for n in sizes]
    meta["load_after"] = os.getloadavg()
    return {"meta": meta, "results": results}


def _table(report: dict[str, Any], console: Console) -> None:
    meta = report["meta"]
    for r in report["results"]:
        t = Table(
            title=f"BM25 lane, N={r['n']:,}, {meta['queries']} queries of 4 Zipf words; load "
            f"{meta['load_before'][0]:.1f} -> {meta['load_after'][0]:.1f}",
            title_justify="left",
        )
        for col in ("k", "what", "p50 ms", "p99 ms", "mean ms"):
            t.add_column(col, justify="right")
        for k in meta["k"]:
            for what in ("exhaustive", "pruned", "auto", "bm25s"):
                s = r.get(f"{what}_k{k}")
                if s:
                    t.add_row(
                        str(k),
                        what,
                        f"{s['p50_ms']:.3f}",
                        f"{s['p99_ms']:.3f}",
                        f"{s['mean_ms']:.3f}",
                    )
        console.print(t)
        console.print(
            f"  build from texts {r['build_s']:.2f} s, save {r['save_s']:.2f} s ({r['file_mb']:.1f} MB), "
            f"load {r['load_s']:.3f} s, first remove after load {r['first_remove_after_load_s']:.3f} s"
            + (f", bm25s build {r['bm25s_build_s']:.2f} s" if "bm25s_build_s" in r else "")
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--k", default="10,50")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--no-competitors", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    console = Console(stderr=args.json)
    report = run(
        [int(s) for s in args.sizes.split(",")],
        args.queries,
        [int(k) for k in args.k.split(",")],
        args.passes,
        not args.no_competitors,
        console,
    )
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        _table(report, console)


def test_smoke() -> None:
    report = run([3000], 20, [10], 1, True, Console(quiet=True))
    r = report["results"][0]
    assert r["pruned_k10"]["p50_ms"] > 0 and r["load_s"] > 0


if __name__ == "__main__":
    main()
