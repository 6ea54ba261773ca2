"""A simulated agent loop: does feedback on what was used raise precision@5?

A field holds ``TOPICS`` topics; each has 5 useful memories from the source ``docs``
and 5 distractors from the source ``chatter`` that share the topic's words (both padded
with 0-6 random filler words, so BM25 alone ranks them in a mixed order). Each round asks one topic's query (seeded RNG),
takes the top 5 and gives feedback on each hit (useful = a ``docs`` memory of that
topic, the query passed so the scorer learns too). Precision@5 of the learned field
over the last ``WINDOW`` rounds is compared with the same queries on a copy that
never got feedback (the static scorer). Then the field is reopened: replay must give
the same model_version, deltas and source weights (nothing re-learns).

    python benchmarks/sim_agent_loop.py [--rounds 500] [--topics 40] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import chitta

WORDS = [
    "cache",
    "deploy",
    "vpn",
    "token",
    "index",
    "shard",
    "replica",
    "lease",
    "quorum",
    "backoff",
    "retry",
    "socket",
    "buffer",
    "schema",
    "migration",
    "rollback",
    "canary",
    "probe",
    "kernel",
    "driver",
    "sandbox",
    "cgroup",
    "mount",
    "inode",
    "journal",
]


FILLER = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def build(root: Path, topics: int, rng: random.Random) -> tuple[chitta.Field, dict[int, set[int]]]:
    f = chitta.open(root, embedder=None, clock=lambda: 1_700_000_000.0)
    useful: dict[int, set[int]] = {}
    for t in range(topics):
        a, b, c = rng.sample(WORDS, 3)
        key = f"t{t}"
        useful[t] = set()
        for i in range(5):
            pad = " ".join(rng.sample(FILLER, rng.randrange(0, 7)))
            text = f"{key} {a} {b} {c}: the fix was step {i} {pad}"
            useful[t].add(f.remember(text, source_tool="docs"))
            pad = " ".join(rng.sample(FILLER, rng.randrange(0, 7)))
            f.remember(f"{key} {a} {b} {c} maybe {i}? {pad}", source_tool="chatter")
    return f, useful


def query(t: int, f: chitta.Field, useful: dict[int, set[int]]) -> str:
    m = f.get(next(iter(sorted(useful[t]))))
    return m.text.split(":")[0]


def run(rounds: int, topics: int, seed: int, window: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        learned, useful = build(Path(tmp) / "learned", topics, random.Random(seed))
        static, useful_s = build(Path(tmp) / "static", topics, random.Random(seed))
        rng = random.Random(seed + 1)
        p_learned, p_static = [], []
        t0 = time.perf_counter()
        with learned, static:
            for r in range(rounds):
                t = rng.randrange(topics)
                q = query(t, learned, useful)
                hits = learned.recall(q, k=5, touch=False)
                good = sum(h.id in useful[t] for h in hits)
                for h in hits:
                    learned.call("feedback", memory_id=h.id, useful=h.id in useful[t], query=q)
                base = static.recall(q, k=5, touch=False)
                if r >= rounds - window:
                    p_learned.append(good / 5)
                    p_static.append(sum(h.id in useful_s[t] for h in base) / 5)
            model = learned.call("scorer_model")
            weights = learned.call("source_weights")
            path = learned.path
        elapsed = time.perf_counter() - t0
        with chitta.open(path, embedder=None, read_only=True) as again:
            replay_same = again.call("scorer_model") == model and (
                again.call("source_weights") == weights
            )
    inside = all(f["min_delta"] <= f["delta"] <= f["max_delta"] for f in model["factors"].values())
    return {
        "p5_static": sum(p_static) / len(p_static),
        "p5_learned": sum(p_learned) / len(p_learned),
        "model_version": model["model_version"],
        "deltas_inside_clamps": inside,
        "replay_same": replay_same,
        "seconds": elapsed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--topics", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--window", type=int, default=100)
    a = ap.parse_args()
    out = run(a.rounds, a.topics, a.seed, min(a.window, a.rounds))
    for k, v in out.items():
        print(f"{k:22} {v:.3f}" if isinstance(v, float) else f"{k:22} {v}")
    print(f"gain (points)          {100 * (out['p5_learned'] - out['p5_static']):+.1f}")


if __name__ == "__main__":
    main()
