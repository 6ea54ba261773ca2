"""Interleaved A/B of the fsync group commit: ``SegmentLog.append`` and
``Field.remember`` with T appender threads, ``durability="fsync"``.

A = another checkout's package (``--base DIR``, a ``chitta/`` package with its
own compiled ``_core``), B = this tree. Each round runs one fresh process per
side (alternating which goes first); a process runs every (case, threads) once
and reports records/s, records per fdatasync, the mean fdatasync and the mean
leader delay (``sync_stats()``), plus a one-thread Python ``write + flush +
os.fdatasync`` loop as the disk-latency reference of that moment.

    python research/ab_group_commit.py --base /tmp/mainpy --threads 16,64 --n 16000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, shutil, sys, tempfile, threading, time
if sys.argv[1] != "-":
    sys.meta_path = [f for f in sys.meta_path if "Scikit" not in type(f).__name__]
    sys.path.insert(0, sys.argv[1])
import chitta
from chitta import _core, ops
threads_list = [int(t) for t in sys.argv[2].split(",")]
n = int(sys.argv[3])
TEXT = ("The user prefers dark mode in every editor, wants terse commit messages and "
        "runs the test suite before each push; remember this for the next session ok.")
PAYLOAD = ops.encode(ops.PutPayload(id=(7 << 32) | 1, text=TEXT, created_ms=1_700_000_000_000))
base = os.environ.get("CHITTA_BENCH_DIR") or tempfile.gettempdir()

def run(threads, make):
    d = tempfile.mkdtemp(prefix="chitta-ab-gc-", dir=base)
    try:
        work, log, close = make(d)
        per = [n // threads + (1 if i < n % threads else 0) for i in range(threads)]
        barrier = threading.Barrier(threads + 1)
        pool = [threading.Thread(target=lambda c=c: (barrier.wait(), work(c))) for c in per]
        for t in pool:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in pool:
            t.join()
        close_s = close()
        s = time.perf_counter() - t0
        st = log.sync_stats()
        syncs = max(1, st["syncs"])
        return {"per_s": n / s, "records_per_sync": st["records"] / syncs,
                "fdatasync_ms": st["sync_ns"] / syncs / 1e6, "delay_us": st["delay_ns"] / syncs / 1e3}
    finally:
        shutil.rmtree(d, ignore_errors=True)

def mk_append(d):
    log = _core.SegmentLog(d, instance_id=7, durability="fsync")
    def work(c):
        a = log.append
        for _ in range(c):
            a(0, PAYLOAD)
    return work, log, log.close

def mk_remember(d):
    f = chitta.open(os.path.join(d, "f"), durability="fsync", embedder=None)
    def work(c):
        r = f.remember
        for _ in range(c):
            r(TEXT)
    def close():
        len(f)
        f.close()
    return work, f.core.log, close

def py_fdatasync(k=2000):
    d = tempfile.mkdtemp(prefix="chitta-ab-gc-", dir=base)
    try:
        with open(os.path.join(d, "x"), "ab") as fh:
            rec = b"\0" * 228
            t0 = time.perf_counter()
            for _ in range(k):
                fh.write(rec); fh.flush(); os.fdatasync(fh.fileno())
            return k / (time.perf_counter() - t0)
    finally:
        shutil.rmtree(d, ignore_errors=True)

out = {"python_fdatasync_per_s": py_fdatasync()}
for threads in threads_list:
    out[f"append/{threads}"] = run(threads, mk_append)
    out[f"remember/{threads}"] = run(threads, mk_remember)
out["python_fdatasync_per_s_after"] = py_fdatasync()
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", required=True, help="directory holding the A side's chitta/ package")
    ap.add_argument("--threads", default="16,64")
    ap.add_argument("--n", type=int, default=16_000, help="records per case (all threads together)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for r in range(args.rounds):
        order = [("A", args.base), ("B", "-")] if r % 2 == 0 else [("B", "-"), ("A", args.base)]
        for side, where in order:
            res = json.loads(
                subprocess.run(
                    [sys.executable, "-c", CHILD, where, args.threads, str(args.n)],
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=tempfile.gettempdir(),
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            rows.append({"round": r, "side": side, **res})
            if args.json:
                continue
            ref = (res["python_fdatasync_per_s"] + res["python_fdatasync_per_s_after"]) / 2
            print(
                f"round {r} {side}: Python fdatasync loop {ref / 1e3:.1f}K/s ({1e3 / ref:.3f} ms each)"
            )
            for key, v in res.items():
                if isinstance(v, dict):
                    print(
                        f"   {key:14s} {v['per_s'] / 1e3:7.1f}K/s  {v['records_per_sync']:5.1f}/sync  "
                        f"fdatasync {v['fdatasync_ms']:.3f} ms  delay {v['delay_us']:.0f} us",
                        flush=True,
                    )
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
