"""Segment log benchmarks: write paths, group commit and replay, side by side
with a plain Python file loop and SQLite (WAL mode), measured in one run.

Smoke (CI, well under a minute):
    pytest benchmarks/bench_log.py --benchmark-disable
Full run (RESULTS.md, area "Segment log"; choices: docs/DECISIONS.md D-001 to D-007):
    CHITTA_BENCH_N=200000 CHITTA_BENCH_SYNC_N=20000 CHITTA_BENCH_REPLAY_N=1000000 \
        pytest benchmarks/bench_log.py --benchmark-min-rounds=3 --benchmark-warmup=off \
        --benchmark-columns=min,median,rounds -s

Sizes (environment):
    CHITTA_BENCH_N          records per non-fsync write loop (default 5,000)
    CHITTA_BENCH_SYNC_N     records per fsync-per-record / group-commit loop
                            (default min(N, 200); one fsync per record is slow by design)
    CHITTA_BENCH_REPLAY_N   ops in the replay field (default N)
    CHITTA_BENCH_THREADS    appender thread counts for group commit (default "1,4,16,64")
    CHITTA_BENCH_DIR        where the fields and databases go (default: the temp dir;
                            must be a real disk, not tmpfs, or fsync means nothing)

Every case times its own loop with ``time.perf_counter`` (best of the rounds),
stores records/s and the parameters in ``extra_info``, and the module prints a
ratio table at the end (``-s`` shows it; it is also written as JSON to
``$CHITTA_BENCH_JSON`` when set). The write cases that are compared run side by
side: one benchmark round runs every case of its group once, in rotating order,
so chitta and its competitors see the same windows of CPU and disk load (on
this shared machine fdatasync latency swings from 0.1 ms to 5 ms within
minutes). Records are ~200-byte PutPayloads for the
write loops; the same bytes go to every competitor.

Replay field: ``CHITTA_BENCH_REPLAY_N`` PutPayloads of short texts (~106-byte payloads),
appended with ``SegmentLog(durability="buffered")`` (one instance, one segment)
and then opened with ``chitta.open(path, read_only=True)``; the same payloads go
into one SQLite table in one transaction. ``test_replay_rss`` opens that field in
a child process and reports resident memory per memory after the open and after
the first recall (which builds the keyword index).

``Field.remember`` cases end with a read (``len(field)``) inside the timing:
remember's fast path queues its puts and the organs take them on the next call,
so that work is counted. ``remember(TEXT)`` with the text alone is the native
plain path (``_core.PutQueue``); ``research/ab_remember.py`` and
``research/ab_group_commit.py`` compare it and the group commit against
another checkout, interleaved.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

import chitta
from chitta import _core, ops
from chitta.organs.memories import MemoriesOrgan

N = int(os.environ.get("CHITTA_BENCH_N", "5000"))
SYNC_N = int(os.environ.get("CHITTA_BENCH_SYNC_N", str(min(N, 200))))
REPLAY_N = int(os.environ.get("CHITTA_BENCH_REPLAY_N", str(N)))
THREADS = [int(t) for t in os.environ.get("CHITTA_BENCH_THREADS", "1,4,16,64").split(",")]
BASE = os.environ.get("CHITTA_BENCH_DIR") or tempfile.gettempdir()

INSTANCE = 7
TEXT = (
    "The user prefers dark mode in every editor, wants terse commit messages and "
    "runs the test suite before each push; remember this for the next session ok."
)
PUT = ops.PutPayload(id=(INSTANCE << 32) | 1, text=TEXT, created_ms=1_700_000_000_000)
PAYLOAD = ops.encode(PUT)  # ~200 bytes
PUT_CODE = int(ops.OpType.PutPayload)
RECORD = b"\0" * 17 + PAYLOAD  # what a segment record costs on disk: header + payload

RESULTS: dict[str, dict[str, Any]] = {}
SYNC_STATS: dict[str, dict[str, Any]] = {}  # group-commit counters of each fsync case's last round


# ---- harness ---------------------------------------------------------------------
def _fresh_dir() -> str:
    return tempfile.mkdtemp(prefix="chitta-logbench-", dir=BASE)


Case = tuple[str, int, Callable[[str], float], dict[str, Any]]


def run_group(benchmark: Any, cases: list[Case]) -> None:
    """Run several cases side by side: every round runs each case once (in a
    fresh directory, the order rotated per round), so all cases share the same
    windows of machine and disk load; each case keeps its best round."""
    best = {key: math.inf for key, _n, _fn, _info in cases}
    rnd = [0]

    def target() -> None:
        k = rnd[0] % len(cases)
        rnd[0] += 1
        for key, _n, fn, _info in cases[k:] + cases[:k]:
            d = _fresh_dir()
            try:
                best[key] = min(best[key], fn(d))
            finally:
                shutil.rmtree(d, ignore_errors=True)

    benchmark.pedantic(target, rounds=_rounds(benchmark), iterations=1)
    for key, n, _fn, info in cases:
        info = dict(info, records=n, seconds=best[key], records_per_s=n / best[key])
        benchmark.extra_info[key] = info
        RESULTS[key] = info


def _rounds(benchmark: Any) -> int:
    if getattr(benchmark, "disabled", False):
        return 1
    return max(1, int(getattr(benchmark, "_min_rounds", 1)))


# ---- write loops: one thread -------------------------------------------------------
def _field_remember(durability: str, n: int) -> Callable[[str], float]:
    def fn(d: str) -> float:
        f = chitta.open(os.path.join(d, "f"), durability=durability, embedder=None)
        remember = f.remember
        t0 = time.perf_counter()
        for _ in range(n):
            remember(TEXT)
        assert (
            len(f) == n
        )  # a read: remember()'s queued puts reach the organs here, inside the timing
        f.close()  # buffered: the write happens here
        return time.perf_counter() - t0

    return fn


def _log_append(durability: str, n: int) -> Callable[[str], float]:
    def fn(d: str) -> float:
        log = _core.SegmentLog(d, instance_id=INSTANCE, durability=durability)
        append = log.append
        t0 = time.perf_counter()
        for _ in range(n):
            append(PUT_CODE, PAYLOAD)
        log.close()
        return time.perf_counter() - t0

    return fn


def _py_file(n: int, fsync: bool) -> Callable[[str], float]:
    def fn(d: str) -> float:
        with open(os.path.join(d, "log.bin"), "ab", buffering=1 << 16) as fh:
            write, flush, fileno = fh.write, fh.flush, fh.fileno()
            t0 = time.perf_counter()
            for _ in range(n):
                write(RECORD)
                flush()
                if fsync:
                    os.fdatasync(fileno)
            return time.perf_counter() - t0

    return fn


def _sqlite_connect(path: str, synchronous: str) -> sqlite3.Connection:
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=600)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(f"PRAGMA synchronous={synchronous}")
    return con


def _sqlite_create(path: str) -> None:
    con = _sqlite_connect(path, "NORMAL")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, op INTEGER, payload BLOB)")
    con.close()


def _sqlite_rows(con: sqlite3.Connection, n: int) -> None:
    ex = con.execute
    for _ in range(n):  # one row per transaction
        ex("BEGIN")
        ex("INSERT INTO t (op, payload) VALUES (?, ?)", (PUT_CODE, PAYLOAD))
        ex("COMMIT")


def _sqlite(synchronous: str, n: int) -> Callable[[str], float]:
    def fn(d: str) -> float:
        path = os.path.join(d, "db.sqlite")
        _sqlite_create(path)
        con = _sqlite_connect(path, synchronous)
        t0 = time.perf_counter()
        _sqlite_rows(con, n)
        con.close()
        return time.perf_counter() - t0

    return fn


def test_write_loops(benchmark: Any) -> None:
    """One thread, no fsync: remember / append (flush, buffered) vs Python write+flush
    and SQLite NORMAL, interleaved round by round."""
    run_group(
        benchmark,
        [
            (
                "remember/flush",
                N,
                _field_remember("flush", N),
                {"what": "Field.remember (no embedding)", "durability": "flush"},
            ),
            (
                "remember/buffered",
                N,
                _field_remember("buffered", N),
                {
                    "what": "Field.remember (no embedding), timed through close()",
                    "durability": "buffered",
                },
            ),
            (
                "append/flush",
                N,
                _log_append("flush", N),
                {
                    "what": "SegmentLog.append (pre-encoded)",
                    "durability": "flush",
                    "payload_bytes": len(PAYLOAD),
                },
            ),
            (
                "append/buffered",
                N,
                _log_append("buffered", N),
                {
                    "what": "SegmentLog.append (pre-encoded), timed through close()",
                    "durability": "buffered",
                    "payload_bytes": len(PAYLOAD),
                },
            ),
            (
                "python/write+flush",
                N,
                _py_file(N, fsync=False),
                {"what": "Python f.write(record); f.flush()", "record_bytes": len(RECORD)},
            ),
            (
                "sqlite/NORMAL",
                N,
                _sqlite("NORMAL", N),
                {"what": "SQLite WAL synchronous=NORMAL, one row per transaction"},
            ),
        ],
    )


# ---- fsync with concurrent appenders (group commit) -----------------------------------
def _threaded(
    threads: int, n: int, make: Callable[[str], tuple[Callable[[int], None], Callable[[], None]]]
) -> Callable[[str], float]:
    """``make(dir)`` -> (work(count) run by each thread, close()). Returns the wall
    time from the common start to the last thread's end, plus close."""

    def fn(d: str) -> float:
        work, close = make(d)
        per = [n // threads + (1 if i < n % threads else 0) for i in range(threads)]
        barrier = threading.Barrier(threads + 1)
        errors: list[BaseException] = []

        def body(count: int) -> None:
            barrier.wait()
            try:
                work(count)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        pool = [threading.Thread(target=body, args=(c,)) for c in per]
        for t in pool:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in pool:
            t.join()
        close()
        elapsed = time.perf_counter() - t0
        if errors:
            raise errors[0]
        return elapsed

    return fn


def _keep_sync_stats(key: str, log: Any, close: Callable[[], None]) -> Callable[[], None]:
    def fn() -> None:
        SYNC_STATS[key] = log.sync_stats()
        close()

    return fn


def _mt_field(key: str) -> Callable[[str], tuple[Callable[[int], None], Callable[[], None]]]:
    def make(d: str) -> tuple[Callable[[int], None], Callable[[], None]]:
        f = chitta.open(os.path.join(d, "f"), durability="fsync", embedder=None)

        def work(count: int) -> None:
            remember = f.remember
            for _ in range(count):
                remember(TEXT)

        def close() -> None:
            len(f)  # a read: the queued puts reach the organs inside the timing
            f.close()

        return work, _keep_sync_stats(key, f.core.log, close)

    return make


def _mt_log(key: str) -> Callable[[str], tuple[Callable[[int], None], Callable[[], None]]]:
    def make(d: str) -> tuple[Callable[[int], None], Callable[[], None]]:
        log = _core.SegmentLog(d, instance_id=INSTANCE, durability="fsync")

        def work(count: int) -> None:
            append = log.append
            for _ in range(count):
                append(PUT_CODE, PAYLOAD)

        return work, _keep_sync_stats(key, log, log.close)

    return make


def _mt_sqlite(d: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    path = os.path.join(d, "db.sqlite")
    _sqlite_create(path)

    def work(count: int) -> None:
        con = _sqlite_connect(path, "FULL")  # one connection per thread
        try:
            _sqlite_rows(con, count)
        finally:
            con.close()

    return work, lambda: None


@pytest.mark.parametrize("threads", THREADS)
def test_fsync(benchmark: Any, threads: int) -> None:
    """durability="fsync" with `threads` appenders (group commit) vs SQLite FULL with
    one connection per thread, and the one-thread Python write+fdatasync loop, interleaved."""
    run_group(
        benchmark,
        [
            (
                f"mt/remember/{threads}",
                SYNC_N,
                _threaded(threads, SYNC_N, _mt_field(f"mt/remember/{threads}")),
                {"what": "Field.remember, durability=fsync", "threads": threads},
            ),
            (
                f"mt/append/{threads}",
                SYNC_N,
                _threaded(threads, SYNC_N, _mt_log(f"mt/append/{threads}")),
                {
                    "what": "SegmentLog.append, durability=fsync",
                    "threads": threads,
                    "payload_bytes": len(PAYLOAD),
                },
            ),
            (
                f"mt/sqlite-FULL/{threads}",
                SYNC_N,
                _threaded(threads, SYNC_N, _mt_sqlite),
                {
                    "what": "SQLite WAL synchronous=FULL, one row per transaction, a connection per thread",
                    "threads": threads,
                },
            ),
            (
                f"mt/python-fdatasync/{threads}",
                SYNC_N,
                _py_file(SYNC_N, fsync=True),
                {
                    "what": "Python write+flush+os.fdatasync per record (one thread; the reference of this window)",
                    "record_bytes": len(RECORD),
                },
            ),
        ],
    )


# ---- replay ------------------------------------------------------------------------
def _replay_text(i: int) -> str:
    return f"note {i}: the build on host {i % 97} took {i % 613} seconds"


@pytest.fixture(scope="module")
def replay_data() -> Any:
    """A field and a SQLite database holding the same REPLAY_N PutPayloads."""
    d = _fresh_dir()
    root = os.path.join(d, "field")
    os.makedirs(root)
    payloads_bytes = 0
    progress = None
    if REPLAY_N >= 100_000:
        from rich.progress import Progress

        progress = Progress(transient=False)
        progress.start()
        task = progress.add_task(f"writing the {REPLAY_N:,}-op replay field", total=REPLAY_N)
    encode = ops.encode
    con = sqlite3.connect(os.path.join(d, "db.sqlite"), isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, op INTEGER, payload BLOB)")
    con.execute("BEGIN")
    t0 = time.perf_counter()
    log = _core.SegmentLog(root, instance_id=INSTANCE, durability="buffered")
    chunk = 10_000
    for start in range(0, REPLAY_N, chunk):
        rows = []
        for i in range(start + 1, min(start + chunk, REPLAY_N) + 1):
            p = encode(
                ops.PutPayload(
                    id=(INSTANCE << 32) | i, text=_replay_text(i), created_ms=1_700_000_000_000 + i
                )
            )
            log.append(PUT_CODE, p)
            rows.append((PUT_CODE, p))
            payloads_bytes += len(p)
        con.executemany("INSERT INTO t (op, payload) VALUES (?, ?)", rows)
        if progress is not None:
            progress.advance(task, len(rows))
    log.close()
    con.execute("COMMIT")
    con.close()
    build_s = time.perf_counter() - t0
    if progress is not None:
        progress.stop()
    yield {
        "root": root,
        "db": os.path.join(d, "db.sqlite"),
        "build_s": build_s,
        "mean_payload": payloads_bytes / max(1, REPLAY_N),
    }
    shutil.rmtree(d, ignore_errors=True)


_PUT_DECODER = msgspec.msgpack.Decoder(ops.PutPayload)


def _replay_cases(data: Any) -> list[tuple[str, str, Callable[[], None]]]:
    root, db = data["root"], data["db"]

    def field_open() -> None:
        f = chitta.open(root, read_only=True, embedder=None)
        assert len(f) == REPLAY_N
        f.close()

    def native_read() -> None:
        log = _core.SegmentLog(root, read_only=True)
        assert len(log.read_new()) == REPLAY_N
        log.close()

    def native_decode() -> None:
        log = _core.SegmentLog(root, read_only=True)
        total = 0
        for op_type, _s, _e, framed in log.read_new().runs():
            total += len(ops.decode_run(op_type, framed))
        assert total == REPLAY_N
        log.close()

    def native_decode_records() -> None:
        log = _core.SegmentLog(root, read_only=True)
        result = log.read_new()
        total = 0
        for op_type, start, end in result.op_runs():
            total += len(ops.decode_records(result, op_type, start, end))
        assert total == REPLAY_N
        log.close()

    def sqlite_fetch() -> None:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT op, payload FROM t ORDER BY id").fetchall()
        assert len(rows) == REPLAY_N
        con.close()

    def sqlite_decode() -> None:
        con = sqlite3.connect(db)
        dec = _PUT_DECODER.decode
        out = [dec(p) for _op, p in con.execute("SELECT op, payload FROM t ORDER BY id").fetchall()]
        assert len(out) == REPLAY_N
        con.close()

    def sqlite_organ() -> None:
        con = sqlite3.connect(db)
        dec = _PUT_DECODER.decode
        organ = MemoriesOrgan()
        put = organ._put
        for _op, p in con.execute("SELECT op, payload FROM t ORDER BY id").fetchall():
            put(dec(p))
        assert len(organ) == REPLAY_N
        con.close()

    return [
        (
            "replay/field-open",
            "chitta.open(read_only=True): read, decode, apply into the organs",
            field_open,
        ),
        (
            "replay/native-read",
            "SegmentLog(read_only=True).read_new() (CRC-checked, merged)",
            native_read,
        ),
        (
            "replay/native-read+decode",
            "read_new() + runs() + ops.decode_run (msgspec; no organs)",
            native_decode,
        ),
        (
            "replay/native-read+decode_records",
            ("read_new() + op_runs() + ops.decode_records (puts built natively; no organs)"),
            native_decode_records,
        ),
        ("replay/sqlite-fetch", "SQLite SELECT op, payload ORDER BY id, fetchall", sqlite_fetch),
        ("replay/sqlite-fetch+decode", "SQLite fetchall + msgspec decode per row", sqlite_decode),
        (
            "replay/sqlite-fetch+decode+organ",
            "SQLite fetchall + msgspec decode + MemoriesOrgan._put per row",
            sqlite_organ,
        ),
    ]


def test_replay(benchmark: Any, replay_data: Any) -> None:
    """Replay of REPLAY_N ops, chitta and SQLite side by side (rotating order per round)."""
    cases = _replay_cases(replay_data)
    best = {key: math.inf for key, _w, _fn in cases}
    rnd = [0]

    def target() -> None:
        k = rnd[0] % len(cases)
        rnd[0] += 1
        for key, _w, fn in cases[k:] + cases[:k]:
            t0 = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - t0)

    benchmark.pedantic(target, rounds=_rounds(benchmark), iterations=1)
    benchmark.extra_info["replay_field_build_s"] = replay_data["build_s"]
    RESULTS["replay/build"] = {
        "seconds": replay_data["build_s"],
        "records": REPLAY_N,
        "mean_payload_bytes": round(replay_data["mean_payload"], 1),
    }
    for key, what, _fn in cases:
        info = {
            "what": what,
            "records": REPLAY_N,
            "seconds": best[key],
            "records_per_s": REPLAY_N / best[key],
            "mean_payload_bytes": round(replay_data["mean_payload"], 1),
        }
        benchmark.extra_info[key] = info
        RESULTS[key] = info


_RSS_CHILD = """
import json, sys, time
def rss(): return int(open("/proc/self/statm").read().split()[1]) * 4096
import tempfile
import chitta
with tempfile.TemporaryDirectory() as d, chitta.open(d + "/warm", embedder=None) as w:  # load the lazy modules
    w.remember("warm up")
    w.recall("warm", k=1)
r0 = rss(); t0 = time.perf_counter()
f = chitta.open(sys.argv[1], read_only=True, embedder=None)
t1 = time.perf_counter(); r1 = rss(); n = len(f)
f.recall("build host", k=10, touch=False)
t2 = time.perf_counter(); r2 = rss()
print(json.dumps({"memories": n, "open_s": t1 - t0, "first_recall_s": t2 - t1,
                  "open_bytes_per_memory": (r1 - r0) / n, "recall_bytes_per_memory": (r2 - r0) / n}))
"""


def test_replay_rss(replay_data: Any) -> None:
    """Resident memory per memory of the replay field opened from the log (no
    vectors), in a fresh child process: after open, and after the first recall."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, replay_data["root"]],
        cwd=BASE,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    RESULTS["replay/rss"] = json.loads(out.stdout.strip().splitlines()[-1])


# ---- summary ------------------------------------------------------------------------
def _rate(key: str) -> float | None:
    r = RESULTS.get(key)
    return None if r is None else float(r["records_per_s"])


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:.2f}M/s" if x >= 1e6 else f"{x / 1e3:.1f}K/s"


def _ratio(a: str, b: str) -> str:
    x, y = _rate(a), _rate(b)
    return "-" if x is None or y is None else f"{x / y:.2f}x"


def summary_lines() -> list[str]:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        (
            f"chitta log benchmarks: N={N:,} SYNC_N={SYNC_N:,} REPLAY_N={REPLAY_N:,} dir={BASE} "
            f"(load average at the end: {load})"
        )
    ]
    lines.append("")
    lines.append("| case (one thread) | records/s | vs Python write+flush | vs SQLite NORMAL |")
    lines.append("|---|---|---|---|")
    for key in [
        "remember/flush",
        "remember/buffered",
        "append/flush",
        "append/buffered",
        "python/write+flush",
        "sqlite/NORMAL",
    ]:
        if key in RESULTS:
            lines.append(
                f"| {key} | {_fmt(_rate(key))} | {_ratio(key, 'python/write+flush')} | "
                f"{_ratio(key, 'sqlite/NORMAL')} |"
            )
    lines.append("")
    lines.append(
        "| fsync, threads | remember | append | SQLite FULL | Python fdatasync (1 thread) "
        "| remember / SQLite | append / SQLite | remember / Python | append / Python |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for t in THREADS:
        a, b, c, p = (
            f"mt/remember/{t}",
            f"mt/append/{t}",
            f"mt/sqlite-FULL/{t}",
            f"mt/python-fdatasync/{t}",
        )
        if any(k in RESULTS for k in (a, b, c)):
            lines.append(
                f"| {t} | {_fmt(_rate(a))} | {_fmt(_rate(b))} | {_fmt(_rate(c))} | {_fmt(_rate(p))} | "
                f"{_ratio(a, c)} | {_ratio(b, c)} | {_ratio(a, p)} | {_ratio(b, p)} |"
            )
    lines.append("")
    lines.append(
        "| replay | ops/s | vs SQLite fetch | vs SQLite fetch+decode | vs SQLite fetch+decode+organ |"
    )
    lines.append("|---|---|---|---|---|")
    for key in [
        "replay/field-open",
        "replay/native-read",
        "replay/native-read+decode",
        "replay/native-read+decode_records",
        "replay/sqlite-fetch",
        "replay/sqlite-fetch+decode",
        "replay/sqlite-fetch+decode+organ",
    ]:
        if key in RESULTS:
            lines.append(
                f"| {key} | {_fmt(_rate(key))} | {_ratio(key, 'replay/sqlite-fetch')} | "
                f"{_ratio(key, 'replay/sqlite-fetch+decode')} | "
                f"{_ratio(key, 'replay/sqlite-fetch+decode+organ')} |"
            )
    lines.append("")
    if SYNC_STATS:
        lines.append(
            "| fsync case | syncs | records/sync | mean fdatasync | max fdatasync | mean leader delay "
            "| records-per-sync histogram (1, 2-3, 4-7, ...) |"
        )
        lines.append("|---|---|---|---|---|---|---|")
        for key, s in SYNC_STATS.items():
            n = max(1, s["syncs"])
            hist = list(s["per_sync"])
            while len(hist) > 1 and hist[-1] == 0:
                hist.pop()
            lines.append(
                f"| {key} | {s['syncs']} | {s['records'] / n:.1f} | {s['sync_ns'] / n / 1e6:.3f} ms | "
                f"{s['max_sync_ns'] / 1e6:.2f} ms | {s['delay_ns'] / n / 1e3:.0f} us | {hist} |"
            )
        lines.append("")
    if "replay/rss" in RESULTS:
        r = RESULTS["replay/rss"]
        lines.append(
            f"replay field opened in a child process: {r['memories']:,} memories, open {r['open_s']:.2f} s, "
            f"{r['open_bytes_per_memory']:.0f} B RSS per memory; after the first recall "
            f"(+{r['first_recall_s']:.2f} s) {r['recall_bytes_per_memory']:.0f} B per memory"
        )
        lines.append("")
    if "replay/build" in RESULTS:
        r = RESULTS["replay/build"]
        lines.append(
            f"replay field: {r['records']:,} PutPayloads, mean payload {r['mean_payload_bytes']} bytes, "
            f"written (encode + SegmentLog buffered append + SQLite executemany) in {r['seconds']:.1f} s"
        )
        lines.append("")
    targets = []
    rf = _rate("remember/flush")
    if rf is not None:
        py, sq = _rate("python/write+flush"), _rate("sqlite/NORMAL")
        targets.append(
            f"remember flush >= 100K/s: {_fmt(rf)} -> {'met' if rf >= 1e5 else 'NOT met'}"
        )
        if py:
            targets.append(
                f"remember flush >= 0.5x Python write+flush: {rf / py:.2f}x -> "
                f"{'met' if rf >= 0.5 * py else 'NOT met'}"
            )
        if sq:
            targets.append(
                f"remember flush >= 4x SQLite NORMAL: {rf / sq:.2f}x -> "
                f"{'met' if rf >= 4 * sq else 'NOT met'}"
            )
    mt = [(t, _rate(f"mt/remember/{t}"), _rate(f"mt/append/{t}")) for t in THREADS]
    best_r = max((r for _t, r, _a in mt if r), default=None)
    best_a = max((a for _t, _r, a in mt if a), default=None)
    if best_r is not None:
        targets.append(
            f"fsync group commit >= 100K/s (best over threads): remember {_fmt(best_r)} -> "
            f"{'met' if best_r >= 1e5 else 'NOT met'}; append {_fmt(best_a)} -> "
            f"{'met' if best_a and best_a >= 1e5 else 'NOT met'}"
        )
    ro = _rate("replay/field-open")
    if ro is not None:
        targets.append(
            f"replay into the organs >= 1M ops/s: {_fmt(ro)} -> {'met' if ro >= 1e6 else 'NOT met'}"
        )
    lines += ["Targets:"] + ["  " + t for t in targets]
    return lines


@pytest.fixture(scope="module", autouse=True)
def _print_summary(request: Any) -> Any:
    yield
    if not RESULTS:
        return
    lines = summary_lines()
    out = os.environ.get("CHITTA_BENCH_JSON")
    if out:
        Path(out).write_text(
            json.dumps(
                {
                    "N": N,
                    "SYNC_N": SYNC_N,
                    "REPLAY_N": REPLAY_N,
                    "results": RESULTS,
                    "sync_stats": SYNC_STATS,
                    "loadavg": os.getloadavg(),
                },
                indent=1,
            )
        )
    write_lines(request, ["", *lines])


def write_lines(request: Any, lines: list[str]) -> None:
    """Print a summary after the run (through pytest's terminal reporter when there is one)."""
    tr = request.config.pluginmanager.getplugin("terminalreporter")
    for line in lines:
        if tr is not None:
            tr.write_line(line)
        else:
            print(line)
