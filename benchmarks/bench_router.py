"""What the query router adds to a recall: parse + route alone, and recall routed vs not.

1. ``parse(q, ref) + route(ir)`` p50 / p99 over the router's golden set (165 hand-written
   questions, tests/helpers/router_golden.py) and over LoCoMo-style questions;
2. ``Field.recall(q, vector=v, k=10, touch=False)`` on a field of N memories (synthetic texts,
   hashing vectors), ``route=False`` and ``route=True`` for each query in turn (which goes first alternates): the p50 of the
   paired differences is what routing adds to a recall end to end (parse, route and the
   dispatch it picks: date-aware ranking for when-questions), also per dispatch.

    python benchmarks/bench_router.py [--n 10000] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))

import chitta
from chitta.encode import HashingEmbedder
from chitta.recall.router import parse, route

LOCOMO_STYLE = [
    "When did Caroline go to the LGBTQ support group?",
    "What did Caroline research?",
    "What is Melanie's favorite book?",
    "How long ago was Caroline's 18th birthday?",
    "What activities does Melanie partake in?",
    "When did Melanie go camping in June?",
    "What did Maria participate in last weekend before April 10, 2023?",
    "What does John think about trying new classes at the yoga studio?",
    "Where did Caroline move from?",
    "What movie did Joanna watch on 1 May, 2022?",
]
WORDS = ["deploy", "schema", "postgres", "caroline", "melanie", "support", "group", "camping", "race", "paint", "book", "music", "yoga", "studio", "charity", "auth", "service", "pipeline", "budget", "review"]  # fmt: skip


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs) * 1e6, q))


def parse_route(questions: list[str], rounds: int) -> dict[str, float]:
    ref = 1_718_452_800_000
    times: list[float] = []
    for _ in range(rounds):
        for q in questions:
            t0 = time.perf_counter()
            route(parse(q, ref))
            times.append(time.perf_counter() - t0)
    return {"p50_us": _pct(times, 50), "p99_us": _pct(times, 99), "n": len(times)}


def recall_ab(n: int, rounds: int) -> dict[str, float]:
    rng = random.Random(3)
    emb = HashingEmbedder(64)
    with tempfile.TemporaryDirectory() as tmp:
        f = chitta.open(Path(tmp) / "f", embedder=emb, durability="buffered")
        items = []
        for i in range(n):
            text = " ".join(rng.choice(WORDS) for _ in range(8))
            if i % 7 == 0:
                text += " yesterday"
            items.append({"text": text, "at": 1_680_000_000 + 3600 * i})
        f.remember_many(items)
        f.wait_embedded()
        qs = LOCOMO_STYLE
        vecs = [emb.embed([q])[0] for q in qs]
        diffs: dict[str, list[float]] = {}
        off: list[float] = []
        on: list[float] = []
        for r in range(rounds):
            for q, v in zip(qs, vecs):
                kind = str(f.explain_route(q).dispatch)
                took = {}
                for route_on in (False, True) if r % 2 == 0 else (True, False):  # either first
                    t0 = time.perf_counter()
                    f.recall(q, vector=v, k=10, touch=False, route=route_on)
                    took[route_on] = time.perf_counter() - t0
                off.append(took[False])
                on.append(took[True])
                diffs.setdefault(kind, []).append(took[True] - took[False])
        f.close()
    out = {
        "n": n,
        "off_p50_us": _pct(off, 50),
        "on_p50_us": _pct(on, 50),
        "added_p50_us_paired": _pct([b - a for a, b in zip(off, on)], 50),
    }
    out.update({f"added_p50_us_{k.lower()}": _pct(d, 50) for k, d in sorted(diffs.items())})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from router_golden import G

    out = {
        "parse_route_golden": parse_route([q for q, _, _ in G], args.rounds * 4),
        "parse_route_locomo_style": parse_route(LOCOMO_STYLE, args.rounds * 40),
        "recall": recall_ab(args.n, args.rounds),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for name, row in out.items():
            print(name, {k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
