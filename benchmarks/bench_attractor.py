"""attractor_settle (chitta/recall/attractor.py) vs the plain posting lookup on noisy codes.

    python benchmarks/bench_attractor.py [N] [QUERIES]

A field (HashingEmbedder: real sparse codes of real text, no model) holds N short
notes on N/10 topics. Each query is a stored note's code with a share of its
features swapped for random ones (the noisy or partial cue); both methods are
asked for the top 10 and scored by R@1 / R@10 of that note. A second pass first
couples notes by recall (touch=True recalls of each topic: CoRetrieved edges),
so the directed transitions have something to follow. Side by side, same queries.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import chitta
from chitta.encode.hashing import HashingEmbedder

WORDS = ["apple", "river", "engine", "violin", "garden", "planet", "copper", "winter", "signal", "harbor", "lantern", "meadow", "forest", "rocket", "silver", "thunder", "canyon", "marble", "falcon", "ember"]  # fmt: skip


def main(n: int = 2000, nq: int = 300) -> None:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        f = chitta.open(Path(tmp) / "f", embedder=HashingEmbedder())
        ids = []
        for i in range(n):
            topic = WORDS[i % len(WORDS)]
            extra = " ".join(rng.choice(WORDS, 3))
            ids.append(f.remember(f"note {i} on {topic} {topic}s and {extra}"))
        f.wait_embedded()
        index = f.core.index
        top = f.core.encoder_organ.encoder.n_features
        picks = rng.integers(0, n, nq)
        for coupled in (False, True):
            if coupled:
                for w in WORDS:
                    for _ in range(3):
                        f.recall(f"{w} note", k=5)
            for swap in (0.85, 0.9, 0.95):
                r = {"posting": [0, 0], "attractor": [0, 0]}
                t_post, t_att = 0.0, 0.0
                for p in picks.tolist():
                    code = list(index.code_features(ids[p]))
                    keep = int(len(code) * (1 - swap))
                    noisy = [int(x) for x in rng.permutation(code)[:keep]]
                    noisy += [int(x) for x in rng.integers(0, top, len(code) - keep)]
                    noisy = sorted(set(noisy))
                    t0 = time.perf_counter()
                    plain = index.posting(np.array(noisy, np.uint32), 10, None).tolist()
                    t_post += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    settled = f.call("attractor_settle", code=noisy, steps=3, k=10)["ids"]
                    t_att += time.perf_counter() - t0
                    for name, got in (("posting", plain), ("attractor", settled)):
                        r[name][0] += got[:1] == [ids[p]]
                        r[name][1] += ids[p] in got
                print(
                    f"coupled={coupled!s:<5} swapped {swap:.2f}: "
                    f"posting R@1 {r['posting'][0] / nq:.3f} R@10 {r['posting'][1] / nq:.3f} "
                    f"({t_post / nq * 1e3:.3f} ms) | attractor R@1 {r['attractor'][0] / nq:.3f} "
                    f"R@10 {r['attractor'][1] / nq:.3f} ({t_att / nq * 1e3:.3f} ms)"
                )
        f.close()


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:3]))
