"""Interleaved A/B of the columnar put path (CPU time per op, fresh processes).

A = another checkout's Python package (``--base DIR``: a directory holding a
``chitta/`` package with a compiled ``_core`` copied in, e.g. main's code
extracted by ``git archive``), B = this tree. Each round runs one fresh process
per side, alternating, and reports:

* replay of the bench_log replay field (N plain PutPayloads): the native read,
  decoding (``decode_records`` structs; ``decode_put_columns`` where present),
  the memories organ and the recall index taking the run, and a whole
  ``chitta.open(read_only=True)`` (CPU, wall, RSS per memory after it);
* ``remember`` (flush): N calls + ``len(f)`` per call, vs a Python
  ``write(228 B) + flush()`` loop in the same process.

    python benchmarks/ab_put_columns.py --base /tmp/mainpy --n 1000000 --rounds 2 [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import gc, json, os, sys, time
if sys.argv[1] != "-":
    sys.meta_path = [f for f in sys.meta_path if "Scikit" not in type(f).__name__]
    sys.path.insert(0, sys.argv[1])
import psutil
import chitta
from chitta import _core, ops
from chitta.ops import OpType
from chitta.organs.memories import MemoriesOrgan
from chitta.organs.recall_index import RecallIndexOrgan
root, n, what = sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = {}
cpu = time.process_time
if what == "build":
    log = _core.SegmentLog(root, instance_id=7, durability="buffered")
    for i in range(1, n + 1):
        log.append(0, ops.encode(ops.PutPayload(id=(7 << 32) | i, created_ms=1_700_000_000_000 + i,
                   text=f"note {i}: the build on host {i % 97} took {i % 613} seconds")))
    log.close()
elif what == "replay":
    gc.disable()
    log = _core.SegmentLog(root, read_only=True)
    t = cpu(); result = log.read_new(); out["read"] = cpu() - t
    t = cpu(); structs = ops.decode_records(result, 0, 0, len(result)); out["decode_records"] = cpu() - t
    if hasattr(ops, "decode_put_columns"):
        t = cpu(); cols = ops.decode_put_columns(result, 0, len(result)); out["decode_put_columns"] = cpu() - t
    m = MemoriesOrgan()
    t = cpu()
    if hasattr(m, "apply_columns"):
        m.apply_columns(cols)
    else:
        m.apply_run(OpType.PutPayload, structs)
    out["memories"] = cpu() - t
    r = RecallIndexOrgan()
    t = cpu()
    if hasattr(r, "apply_columns") and hasattr(ops, "decode_put_columns"):
        r.apply_columns(cols)
    else:
        r.apply_run(OpType.PutPayload, structs)
    out["recall_index"] = cpu() - t
    del structs, m, r, result
    log.close()
elif what == "open":
    proc = psutil.Process()
    gc.collect(); base = proc.memory_info().rss
    t, w = cpu(), time.perf_counter()
    f = chitta.open(root, read_only=True, embedder=None)
    out["open_cpu"], out["open_wall"] = cpu() - t, time.perf_counter() - w
    gc.collect()
    out["rss_per_memory"] = (proc.memory_info().rss - base) / len(f)
    f.close()
elif what == "remember":
    f = chitta.open(root, embedder=None)
    t = cpu()
    for i in range(n):
        f.remember("remember throughput record number %d with some padding text" % i)
    len(f)
    out["remember"] = cpu() - t
    f.close()
    rec = b"x" * 227 + b"\n"
    with open(os.path.join(root, "loop.bin"), "wb") as fh:
        t = cpu()
        for _ in range(n):
            fh.write(rec); fh.flush()
        out["python_loop"] = cpu() - t
print(json.dumps(out))
"""


def child(base: str, root: str, n: int, what: str) -> dict[str, float]:
    got = subprocess.run([sys.executable, "-c", CHILD, base, root, str(n), what], capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), check=True)
    return json.loads(got.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="dir holding the A side's chitta/ package")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--remember-n", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        field = os.path.join(tmp, "replay")
        print(f"building the {args.n:,}-op replay field ...", file=sys.stderr)
        child("-", field, args.n, "build")
        runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
        for rnd in range(args.rounds):
            for side, base in (("A", args.base), ("B", "-")):
                print(f"round {rnd + 1}/{args.rounds}: {side}", file=sys.stderr)
                row = child(base, field, args.n, "replay")
                row.update(child(base, field, args.n, "open"))
                rem = os.path.join(tmp, f"rem-{side}-{rnd}")
                row.update(child(base, rem, args.remember_n, "remember"))
                runs[side].append(row)
    if args.json:
        print(json.dumps(runs))
        return 0
    keys = sorted({k for rows in runs.values() for r in rows for k in r})
    per = {"remember": args.remember_n, "python_loop": args.remember_n}
    print("| measure (CPU us/op unless noted) | A (--base) | B (this tree) |\n|---|---|---|")
    for k in keys:
        cells = []
        for side in "AB":
            vals = [r[k] for r in runs[side] if k in r]
            if not vals:
                cells.append("-")
            elif k == "rss_per_memory":
                cells.append(" / ".join(f"{v:,.0f} B" for v in vals))
            elif k == "open_wall":
                cells.append(" / ".join(f"{v:.2f} s" for v in vals))
            else:
                cells.append(" / ".join(f"{1e6 * v / per.get(k, args.n):.3f}" for v in vals))
        print(f"| {k} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
