"""fsync group commit with concurrent appenders in several processes, side by
side with the same number of appender threads in one process.

Several agents writing one field is chitta's normal case: each process is its
own instance with its own segment and its own group commit, and the processes
need no lock between them. In one process every appender thread takes the GIL
once per record, which bounds ``durability="fsync"`` there (RESULTS, "Segment
log"); this file measures what the same appenders reach when they are spread
over processes.

Each round runs, in rotating order:
    procs/remember/PxT   P child processes x T threads, ``Field.remember`` on one
                         shared field (each process a fresh instance)
    procs/append/PxT     the same with ``SegmentLog.append`` of bench_log's payload
    threads/remember/N   one process with N = P*T threads (bench_log's mt case)
A child imports and opens first, then waits for the parent's start byte; the
time runs from that byte to the last child's exit (its close included) and the
count is every record acknowledged.

Smoke (CI): ``pytest benchmarks/bench_log_processes.py --benchmark-disable``.
Full run: ``CHITTA_BENCH_SYNC_N=60000 pytest benchmarks/bench_log_processes.py
--benchmark-min-rounds=3 --benchmark-warmup=off -s`` (``CHITTA_BENCH_PROCS``,
default ``2x32,4x16``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import pytest
from bench_log import (
    RESULTS,
    SYNC_N,
    THREADS,
    _fmt,
    _mt_field,
    _rate,
    _threaded,
    run_group,
    write_lines,
)

SHAPES = [
    tuple(int(x) for x in s.split("x"))
    for s in os.environ.get("CHITTA_BENCH_PROCS", "2x32,4x16").split(",")
]

CHILD = r"""
import json, os, sys, threading, time
import chitta
from chitta import _core, ops
root, kind, threads, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
TEXT = ("The user prefers dark mode in every editor, wants terse commit messages and "
        "runs the test suite before each push; remember this for the next session ok.")
if kind == "remember":
    f = chitta.open(root, durability="fsync", embedder=None)
    def work(count):
        remember = f.remember
        for _ in range(count):
            remember(TEXT)
    def close():
        len(f)
        f.close()
else:
    payload = ops.encode(ops.PutPayload(id=(7 << 32) | 1, text=TEXT, created_ms=1_700_000_000_000))
    code = int(ops.OpType.PutPayload)
    log = _core.SegmentLog(root, instance_id=int(sys.argv[5]), durability="fsync")
    def work(count):
        append = log.append
        for _ in range(count):
            append(code, payload)
    close = log.close
per = [n // threads + (1 if i < n % threads else 0) for i in range(threads)]
pool = [threading.Thread(target=work, args=(c,)) for c in per]
sys.stdout.write("ready\n")
sys.stdout.flush()
sys.stdin.read(1)
t0 = time.perf_counter()
for t in pool:
    t.start()
for t in pool:
    t.join()
close()
print(json.dumps({"seconds": time.perf_counter() - t0, "records": n}))
"""


def _processes(kind: str, procs: int, threads: int, n: int) -> Callable[[str], float]:
    def fn(d: str) -> float:
        root = os.path.join(d, "f")
        if kind == "remember":  # create the field once, so the children only open it
            import chitta

            chitta.open(root, embedder=None).close()
        counts = [n // procs + (1 if i < n % procs else 0) for i in range(procs)]
        children = [
            subprocess.Popen(
                [sys.executable, "-c", CHILD, root, kind, str(threads), str(c), str(100 + i)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=tempfile.gettempdir(),
            )
            for i, c in enumerate(counts)
        ]
        try:
            for c in children:
                assert c.stdout is not None and c.stdout.readline().strip() == "ready"
            t0 = time.perf_counter()
            for c in children:
                assert c.stdin is not None
                c.stdin.write("g")
                c.stdin.close()
            reports = [json.loads(c.stdout.read()) for c in children if c.stdout is not None]
            for c in children:
                assert c.wait(timeout=600) == 0
            elapsed = time.perf_counter() - t0
        finally:
            for c in children:
                if c.poll() is None:
                    c.kill()
                    c.wait()
                for pipe in (c.stdin, c.stdout):
                    if pipe is not None and not pipe.closed:
                        pipe.close()
        assert sum(r["records"] for r in reports) == n
        return elapsed

    return fn


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{p}x{t}" for p, t in SHAPES])
def test_fsync_processes(benchmark: Any, shape: tuple[int, int]) -> None:
    procs, threads = shape
    total = procs * threads
    run_group(
        benchmark,
        [
            (
                f"procs/remember/{procs}x{threads}",
                SYNC_N,
                _processes("remember", procs, threads, SYNC_N),
                {
                    "what": "Field.remember, durability=fsync, one shared field",
                    "processes": procs,
                    "threads": threads,
                },
            ),
            (
                f"procs/append/{procs}x{threads}",
                SYNC_N,
                _processes("append", procs, threads, SYNC_N),
                {
                    "what": "SegmentLog.append, durability=fsync, one instance per process",
                    "processes": procs,
                    "threads": threads,
                },
            ),
            (
                f"threads/remember/{total}",
                SYNC_N,
                _threaded(total, SYNC_N, _mt_field(f"threads/remember/{total}")),
                {"what": "Field.remember, durability=fsync, one process", "threads": total},
            ),
        ],
    )


@pytest.fixture(scope="module", autouse=True)
def _print_summary(request: Any) -> Any:
    yield
    rows = []
    for procs, threads in SHAPES:
        total = procs * threads
        a, b, c = (
            f"procs/remember/{procs}x{threads}",
            f"procs/append/{procs}x{threads}",
            f"threads/remember/{total}",
        )
        if a in RESULTS:
            ra, rc = _rate(a), _rate(c)
            ratio = f"{ra / rc:.2f}x" if ra and rc else "-"
            rows.append(
                f"| {procs} x {threads} | {_fmt(ra)} | {_fmt(_rate(b))} | {_fmt(rc)} | {ratio} |"
            )
    if not rows:
        return
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"fsync across processes: SYNC_N={SYNC_N:,}, load average {load} (bench_log THREADS={THREADS})",
        "",
        (
            "| processes x threads | remember, all processes | append, all processes "
            "| remember, one process with as many threads | processes / one process |"
        ),
        "|---|---|---|---|---|",
        *rows,
    ]
    write_lines(request, lines)
