"""Where chitta's RSS goes while ingesting caller vectors (issue 17, storage targets).

The same ingest as ``bench_peers.py`` (``remember_many`` of ``{text, embedding}`` in batches
of 1,000, ``embedder=None``), in this process, with RSS sampled every 5 ms in two phases:
the ingest itself (what ``bench_peers.py``'s peak column measures, right after the last
batch) and until the background sparse codes are logged (``wait_embedded``), then the first
posting query's move of the pending codes into the posting index. Reports the peak of each
phase, CPU seconds, and the shapes of the vector stores (the memories organ's copied rows and
its references into the log, D-088; the dense lane's unit rows).

    python benchmarks/bench_ingest_rss.py [N]    # default 100000
"""

from __future__ import annotations

import gc
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_peers import BATCH, data


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def main() -> None:
    import chitta

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    texts, vecs = data(n)
    base = _rss_mb()
    peak = {"ingest": 0.0, "codes": 0.0, "posting": 0.0}
    phase = ["ingest"]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[phase[0]] = max(peak[phase[0]], _rss_mb())
            time.sleep(0.005)

    threading.Thread(target=sample, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        c0, t0 = time.process_time(), time.perf_counter()
        f = chitta.open(Path(tmp) / "field", embedder=None)
        for lo in range(0, n, BATCH):
            f.remember_many(
                [
                    {"text": t, "embedding": v}
                    for t, v in zip(texts[lo : lo + BATCH], vecs[lo : lo + BATCH])
                ]
            )
        ingest_s, ingest_cpu = time.perf_counter() - t0, time.process_time() - c0
        after_ingest = _rss_mb()
        phase[0] = "codes"
        f.core.index.keyword_flush()
        f.wait_embedded()
        ready_s, ready_cpu = time.perf_counter() - t0, time.process_time() - c0
        ready_rss = _rss_mb()
        phase[0] = "posting"  # the first posting query moves the pending codes into the index
        t1 = time.perf_counter()
        f.core.index._flush_codes()
        posting_s = time.perf_counter() - t1
        done.set()
        shapes = {}
        for obj in gc.get_objects():
            name = type(obj).__name__
            if name == "MemoryColumns":
                shapes["memories raw matrix"] = (obj.vecs.shape, obj.nvec)
                shapes["memories references into the log"] = ((len(obj.base),), len(obj.base))
            elif name == "RecallIndexOrgan":
                shapes["dense unit matrix"] = (obj._vecs.shape, len(obj._row_ids))
        f.close()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"n={n} base RSS {base:.0f} MB (inputs included)")
    print(
        f"ingest: {ingest_s:.1f} s wall, {ingest_cpu:.1f} s CPU; RSS after {after_ingest:.0f} MB,"
        f" peak {peak['ingest']:.0f} MB (growth {peak['ingest'] - base:.0f})"
    )
    print(
        f"until codes logged: {ready_s:.1f} s wall, {ready_cpu:.1f} s CPU;"
        f" peak {peak['codes']:.0f} MB (growth {peak['codes'] - base:.0f})"
    )
    print(
        f"first posting query (pending codes into the index): {posting_s:.2f} s; RSS before"
        f" {ready_rss:.0f} MB, peak {peak['posting']:.0f} MB; ru_maxrss {maxrss:.0f}"
    )
    for what, (shape, used) in shapes.items():
        print(f"{what}: allocated {shape}, rows used {used}")


if __name__ == "__main__":
    main()
