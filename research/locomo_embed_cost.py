"""What each packaged embedder costs: cold load, batch texts/s, one query (LoCoMo texts).

For the LoCoMo pass 5 table (benchmarks/RESULTS.md): every installed embedder
of {MiniLM (default), mpnet, nomic} is loaded fresh (weights already extracted;
the SHA-256 check is part of the load), then embeds the first ``--n`` LoCoMo
turns (each with its previous turn, as the importer embeds them) as one batch
call, then ``--queries`` questions one call each (the query side), after one untimed warm-up call. One BLAS
thread, as the embedders run by default. Numbers on a shared machine are
noisy; the load average is printed with them.

    python research/locomo_embed_cost.py [--n 128] [--queries 30] [--json]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from eval_locomo import DEFAULT_DATA, turns

from chitta.encode import embed_query
from chitta.field.importers import Turn, context_texts


def _candidates() -> list[tuple[str, Any]]:
    from chitta.encode import MpnetEmbedder, NomicEmbedder, OnnxMiniLM, mpnet, nomic, onnx_minilm

    out: list[tuple[str, Any]] = []
    if onnx_minilm.is_available():
        out.append(("minilm", OnnxMiniLM))
    if mpnet.is_available():
        out.append(("mpnet", MpnetEmbedder))
    if nomic.is_available():
        out.append(("nomic", NomicEmbedder))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    data = json.loads(DEFAULT_DATA.read_text())
    items = turns(data[0]["conversation"])
    docs = context_texts([Turn(t["speaker"], t["said"], t["session"], t["at"]) for t in items], 1)[
        : args.n
    ]
    questions = [qa["question"] for s in data for qa in s["qa"]][: args.queries]
    rows = []
    for name, cls in _candidates():
        if args.only and name != args.only:
            continue
        emb = cls()
        t0 = time.perf_counter()
        emb.embed(["warm"]) if not hasattr(emb, "load") else emb.load()
        load_s = time.perf_counter() - t0
        emb.embed(["warm up"])  # first-call setup (sessions, caches) outside the timings
        t0 = time.perf_counter()
        emb.embed(docs)
        batch_s = time.perf_counter() - t0
        lat = []
        for q in questions:
            t0 = time.perf_counter()
            embed_query(emb, [q])
            lat.append(time.perf_counter() - t0)
        rows.append(
            {
                "embedder": name,
                "name": emb.name,
                "dim": emb.dim,
                "cold_load_s": load_s,
                "texts_per_s": len(docs) / batch_s,
                "query_ms_p50": 1000 * float(np.median(lat)),
                "query_ms_min": 1000 * float(np.min(lat)),
                "load_avg": os.getloadavg()[0],
            }
        )
    if args.json:
        print(json.dumps(rows))
        return 0
    for r in rows:
        print(
            f"{r['embedder']:<7} {r['name']:<42} dim {r['dim']:>4}  cold load {r['cold_load_s']:6.2f} s  "
            f"{r['texts_per_s']:7.1f} texts/s  one query p50 {r['query_ms_p50']:7.1f} ms (min "
            f"{r['query_ms_min']:.1f})  load avg {r['load_avg']:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
