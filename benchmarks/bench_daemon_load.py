"""Load on one ``chitta serve``: N client processes, each remember + recall in a loop
for a few seconds, hashing embedder (issue 16, finding 13). Prints ops/s and p50/p99
latency (ms) side by side for recall that touches (every call a write: the daemon's
writer lock serializes them, as every call was before issue 16) and recall with
``touch=False`` (a read: served beside the writer and beside other reads).

    python benchmarks/bench_daemon_load.py [--clients 8] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "ninja",
    "cache",
    "build",
    "linker",
    "test",
    "flaky",
    "deploy",
    "rollback",
    "schema",
    "index",
    "query",
    "latency",
]


def client(sock: str, seconds: float, touch: bool, seed: int, out: mp.Queue) -> None:  # type: ignore[type-arg]
    import random

    import chitta

    rng = random.Random(seed)
    lat: list[float] = []
    with chitta.connect(sock, timeout=60) as r:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            text = " ".join(rng.choice(WORDS) for _ in range(8))
            t0 = time.perf_counter()
            r.remember(text)
            t1 = time.perf_counter()
            r.recall(" ".join(rng.choice(WORDS) for _ in range(3)), k=5, touch=touch)
            t2 = time.perf_counter()
            lat += [t1 - t0, t2 - t1]
    out.put(lat)


def run(clients: int, seconds: float, touch: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir(mode=0o700)
        sock = run_dir / "d.sock"
        env = dict(os.environ, CHITTA_EMBEDDER="hashing")
        daemon = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("chitta")),
                "--path",
                f"{tmp}/field",
                "serve",
                "--socket",
                str(sock),
                "--json",
                "--maintain-every",
                "0",
            ],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert daemon.stdout is not None
        json.loads(daemon.stdout.readline())
        try:
            out: mp.Queue = mp.Queue()  # type: ignore[type-arg]
            procs = [
                mp.Process(target=client, args=(str(sock), seconds, touch, i, out))
                for i in range(clients)
            ]
            t0 = time.perf_counter()
            for p in procs:
                p.start()
            lat = sorted(x for _ in procs for x in out.get())
            for p in procs:
                p.join()
            wall = time.perf_counter() - t0
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(60)
    return {
        "ops_s": len(lat) / wall,
        "p50_ms": lat[len(lat) // 2] * 1e3,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1e3,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    a = ap.parse_args()
    print(f"{a.clients} client processes x {a.seconds:g} s, remember + recall, hashing embedder")
    print(f"{'recall':<22}{'ops/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
    for name, touch in (("touch=True (writes)", True), ("touch=False (reads)", False)):
        r = run(a.clients, a.seconds, touch)
        print(f"{name:<22}{r['ops_s']:>10.0f}{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}")


if __name__ == "__main__":
    main()
