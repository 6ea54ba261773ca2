"""Interleaved A/B of ``Field.remember`` (flush durability, no embedder): CPU
time and wall per call, each against a Python ``write(228 B) + flush()`` loop
run in the same process right before it.

A = another checkout's package (``--base DIR``: a directory holding a
``chitta/`` package with its own compiled ``_core``, e.g. main's code from
``git archive`` plus the ``_core*.so`` built from it), B = this tree. Each
round runs one fresh process per side, alternating which goes first; each
process times ``n`` calls + ``len(field)`` (the queued puts reach the organs
inside the timing) ``--reps`` times and keeps its best. With ``--parts`` the B
side also reports the layers of a call (the native put alone, put + organs).

    python research/ab_remember.py --base /tmp/mainpy --n 200000 --rounds 3 [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, sys, tempfile, time, shutil
if sys.argv[1] != "-":
    sys.meta_path = [f for f in sys.meta_path if "Scikit" not in type(f).__name__]
    sys.path.insert(0, sys.argv[1])
import chitta
n, reps, parts = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
TEXT = ("The user prefers dark mode in every editor, wants terse commit messages and "
        "runs the test suite before each push; remember this for the next session ok.")
RECORD = b"\0" * 228
d = tempfile.mkdtemp(prefix="chitta-ab-remember-", dir=os.environ.get("CHITTA_BENCH_DIR"))
cpu, wall = time.process_time, time.perf_counter
k = [0]
time.sleep(0.5)  # let OpenBLAS's worker threads (woken by an import) stop spinning: process_time counts them

def timed(body):
    c, w = cpu(), wall()
    body()
    return cpu() - c, wall() - w

def py_loop():
    with open(os.path.join(d, "log.bin"), "ab", buffering=1 << 16) as fh:
        write, flush = fh.write, fh.flush
        def body():
            for _ in range(n):
                write(RECORD)
                flush()
        return timed(body)

def field():
    k[0] += 1
    return chitta.open(os.path.join(d, f"f{k[0]}"), embedder=None)

def remember():
    f = field()
    r = f.remember
    def body():
        for _ in range(n):
            r(TEXT)
        assert len(f) == n
    out = timed(body)
    f.close()
    return out

def put_only():
    f = field()
    f.core.pending_puts.set_drain(None, 1 << 62)
    put = f.core.fast_put
    def body():
        for _ in range(n):
            put(TEXT)
    out = timed(body)
    f.core.pending_puts.take()
    f.close()
    return out

def put_apply():
    f = field()
    put = f.core.fast_put
    def body():
        for _ in range(n):
            put(TEXT)
        assert len(f) == n
    out = timed(body)
    f.close()
    return out

cases = [("python", py_loop), ("remember", remember)]
if parts:
    cases += [("put_only", put_only), ("put_apply", put_apply)]
best = {}
for _ in range(reps):
    for name, fn in cases:
        c, w = fn()
        b = best.setdefault(name, [c, w])
        b[0], b[1] = min(b[0], c), min(b[1], w)
shutil.rmtree(d, ignore_errors=True)
print(json.dumps({name: {"cpu_us": c / n * 1e6, "wall_us": w / n * 1e6} for name, (c, w) in best.items()}))
"""


def run_side(base: str, n: int, reps: int, parts: bool) -> dict[str, dict[str, float]]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, base, str(n), str(reps), "1" if parts else "0"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", required=True, help="directory holding the A side's chitta/ package")
    ap.add_argument("--n", type=int, default=200_000, help="remember calls per timing")
    ap.add_argument("--reps", type=int, default=3, help="timings per process (best kept)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--parts", action="store_true", help="also time the layers of a call on the B side"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows: list[dict[str, object]] = []
    for r in range(args.rounds):
        order = [("A", args.base), ("B", "-")] if r % 2 == 0 else [("B", "-"), ("A", args.base)]
        for side, where in order:
            res = run_side(where, args.n, args.reps, args.parts and side == "B")
            rows.append({"round": r, "side": side, **{k: v for k, v in res.items()}})
            if not args.json:
                py, rem = res["python"], res["remember"]
                extra = "".join(
                    f"  {k} {res[k]['cpu_us']:.3f}" for k in ("put_only", "put_apply") if k in res
                )
                print(
                    f"round {r} {side}: remember {rem['cpu_us']:.3f} us CPU / {rem['wall_us']:.3f} us wall; "
                    f"Python loop {py['cpu_us']:.3f} / {py['wall_us']:.3f}; ratio (CPU) "
                    f"{py['cpu_us'] / rem['cpu_us']:.3f}x, (wall) {py['wall_us'] / rem['wall_us']:.3f}x{extra}",
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
