"""The curated layer at 10K facts (issue 21 targets: recall of a catalog path p50 <= 1 ms,
export <= 2 s), side by side with the seed's original store: SQLite FTS5 with bm25()
(relevance = -bm25(), one row per filing, filtered to the path), in the same process.

    python benchmarks/bench_curated.py [N_FACTS]

Reports p50 / p90 of recall of one path (20 topics, so N/20 facts under it, a 2-3 word
query, the default 8 KiB budget) for chitta (Field.call and the stage function alone)
and for FTS5; export of the whole tree, and the floor of writing the same bytes.
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import chitta
from chitta.curated import read_path
from chitta.curated.export import render_fact_file

WORDS = [
    "cache",
    "ccache",
    "runner",
    "disk",
    "linker",
    "timeout",
    "flaky",
    "port",
    "socket",
    "build",
    "compiler",
    "flag",
    "target",
    "release",
    "branch",
    "commit",
    "review",
    "docker",
    "image",
    "layer",
    "network",
    "proxy",
    "dns",
    "retry",
    "queue",
    "worker",
    "memory",
    "leak",
    "profile",
    "trace",
    "index",
    "schema",
    "migration",
    "lock",
    "deadlock",
    "thread",
    "pool",
]
TOPICS = [f"d{d}/t{t}" for d in range(4) for t in range(5)]


def _setup(f: chitta.Field, n: int, rng: random.Random) -> list[tuple[str, str, str]]:
    f.call("vocabulary_limits", max_facts_per_topic=max(500, n // len(TOPICS) + 1))
    for d in range(4):
        f.call("vocabulary_declare", path=f"d{d}", descriptor=f"domain {d}")
        for t in range(5):
            f.call("vocabulary_declare", path=f"d{d}/t{t}", descriptor=f"topic {t} of {d}")
    rows = []
    for i in range(n):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) + f" fact{i}"
        path = TOPICS[i % len(TOPICS)]
        scope = rng.choice(("repository", "project", "global"))
        got = f.call("memory_remember", body=body, paths=[path], scope=scope)
        rows.append((got["fact"], path, body))
    return rows


def _fts(rows: list[tuple[str, str, str]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE fact USING fts5(id UNINDEXED, path UNINDEXED, body)")
    db.executemany("INSERT INTO fact VALUES (?, ?, ?)", rows)
    return db


def _fts_recall(db: sqlite3.Connection, path: str, query: str, budget: int) -> list[str]:
    match = " OR ".join(query.split())
    got = db.execute(
        "SELECT id, body, -bm25(fact) AS r FROM fact WHERE fact MATCH ? AND path = ? "
        "ORDER BY r DESC, id",
        (match, path),
    ).fetchall()
    out, used = [], 0
    for fid, body, _r in got:
        size = len(body.encode()) + 60
        if used + size <= budget:
            out.append(fid)
            used += size
    return out


def _times(fn: object, queries: list[tuple[str, str]]) -> list[float]:
    out = []
    for path, q in queries:
        t0 = time.perf_counter()
        fn(path, q)  # type: ignore[operator]
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _p(ts: list[float], q: float) -> float:
    return statistics.quantiles(ts, n=100)[int(q) - 1]


def main(n: int) -> None:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as d, chitta.open(d + "/f", embedder=None) as f:
        t0 = time.perf_counter()
        rows = _setup(f, n, rng)
        setup_s = time.perf_counter() - t0
        db = _fts(rows)
        organ = f.organ("curated")
        queries = [
            (rng.choice(TOPICS), " ".join(rng.sample(WORDS, rng.randint(2, 3)))) for _ in range(400)
        ]
        cases = {
            "chitta Field.call('memory_recall')": lambda p, q: f.call(
                "memory_recall", paths=[p], query=q
            ),
            "chitta read_path.recall (the stage alone)": lambda p, q: read_path.recall(
                organ, read_path.chosen(organ, [p]), q, 8192
            ),
            "SQLite FTS5 bm25() (seed's store)": lambda p, q: _fts_recall(db, p, q, 8192),
        }
        res: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(3):  # interleaved rounds
            for name, fn in cases.items():
                res[name] += _times(fn, queries)
        print(
            f"{n} facts, {len(TOPICS)} topics ({n // len(TOPICS)} facts per path); setup {setup_s:.1f} s"
        )
        base = statistics.median(res["SQLite FTS5 bm25() (seed's store)"])
        for name, ts in res.items():
            p50 = statistics.median(ts)
            print(
                f"  recall {name:45s} p50 {p50:7.3f} ms  p90 {_p(ts, 90):7.3f} ms  x{p50 / base:5.2f} of FTS5"
            )
        for round_ in range(2):
            out = Path(d) / f"tree{round_}"
            t0 = time.perf_counter()
            got = f.call("memory_export", directory=str(out))
            export_s = time.perf_counter() - t0
            files = [render_fact_file(x) for x in organ.facts.values() if x.live]
            floor = Path(d) / f"floor{round_}"
            floor.mkdir()
            t0 = time.perf_counter()
            for i, data in enumerate(files):
                (floor / f"{i}.md").write_bytes(data)
            floor_s = time.perf_counter() - t0
            print(
                f"  export of {got['facts']} facts: {export_s:.3f} s (writing the fact files alone: "
                f"{floor_s:.3f} s, x{export_s / floor_s:.2f})"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
