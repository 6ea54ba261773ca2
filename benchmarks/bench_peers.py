"""Ingest with caller vectors, side by side: chitta, Chroma, sqlite-vec (+FTS5), LanceDB (+FTS).

Every store gets the same texts (tests/helpers/real_text_sentences.txt, numbered) and the
same seeded unit 384-d float32 vectors, in batches of 1,000, in one run. Each (store,
size, round) runs in a fresh subprocess, so its peak RSS is its own; rounds alternate
the store order. Per store and size: records/s of the ingest (median of the rounds),
the ratio to chitta, the time until the store is fully indexed (``ready``: chitta's
keyword index flushed and background sparse codes logged, LanceDB's FTS index built;
Chroma and sqlite index as they insert), peak RSS right after the last batch (``ingest
pk``) and until ready (``peak MB``, ru_maxrss once ready: chitta's background coder and
LanceDB's FTS build count) with its growth over the process before the first write
(inputs already built), disk bytes per memory.

Durability as each store ships it for a local app: chitta ``durability="flush"``
(survives a process crash), sqlite WAL with ``synchronous=NORMAL`` (the same), Chroma
and LanceDB defaults.

Run: ``python benchmarks/bench_peers.py`` (10K; ``CHITTA_BENCH_PEERS_LARGE=1`` adds
100K; ``CHITTA_BENCH_ROUNDS`` default 3, ``CHITTA_BENCH_ROUNDS_LARGE`` for 100K; ``CHITTA_BENCH_PEERS_STORES=chitta,sqlite``
to pick). Smoke (CI): ``pytest benchmarks/bench_peers.py`` (1K, one round, the stores
installed; the `bench` extra has them).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

SENTENCES = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "real_text_sentences.txt"
BATCH = 1000
DIM = 384
STORES = ("chitta", "chroma", "sqlite", "lance")


def data(n: int) -> tuple[list[str], np.ndarray]:
    base = [s.strip() for s in SENTENCES.read_text().splitlines() if s.strip()]
    texts = [f"{base[i % len(base)]} ({i})" for i in range(n)]
    rng = np.random.default_rng(17)
    vecs = np.empty((n, DIM), np.float32)
    for lo in range(0, n, 10_000):  # in blocks: no float64 copy of the whole set
        block = rng.standard_normal((min(10_000, n - lo), DIM), dtype=np.float32)
        vecs[lo : lo + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return texts, vecs


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ingest_chitta(root: Path, texts: list[str], vecs: np.ndarray) -> dict[str, float]:
    import chitta

    f = chitta.open(root / "field", embedder=None)
    t0 = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        f.remember_many(
            [
                {"text": t, "embedding": v}
                for t, v in zip(texts[lo : lo + BATCH], vecs[lo : lo + BATCH])
            ]
        )
    ingest = time.perf_counter() - t0
    ingest_peak = _peak_mb()
    f.core.index.keyword_flush()
    f.wait_embedded()  # the background sparse codes (chitta/field/deferred_codes.py)
    ready = time.perf_counter() - t0
    peak = _peak_mb()  # until ready: the coder phase counts (D-067)
    f.close()
    return {"ingest_s": ingest, "ready_s": ready, "peak_mb": peak, "ingest_peak_mb": ingest_peak}


def ingest_chroma(root: Path, texts: list[str], vecs: np.ndarray) -> dict[str, float]:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(root / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    col = client.create_collection(
        "memories", embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
    t0 = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        hi = lo + BATCH
        col.add(
            ids=[str(i) for i in range(lo, min(hi, len(texts)))],
            embeddings=vecs[lo:hi],
            documents=texts[lo:hi],
        )
    ingest = time.perf_counter() - t0
    peak = _peak_mb()
    return {"ingest_s": ingest, "ready_s": ingest, "peak_mb": peak, "ingest_peak_mb": peak}


def ingest_sqlite(root: Path, texts: list[str], vecs: np.ndarray) -> dict[str, float]:
    import sqlite_vec

    try:  # the system sqlite3 module may be built without extension loading
        import pysqlite3.dbapi2 as sqlite3  # type: ignore[import-not-found]
    except ImportError:
        import sqlite3

    db = sqlite3.connect(root / "db.sqlite")
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    db.enable_load_extension(False)
    db.execute("pragma journal_mode=wal")
    db.execute("pragma synchronous=normal")
    db.execute(f"create virtual table vec using vec0(embedding float[{DIM}])")
    db.execute("create virtual table fts using fts5(text)")
    t0 = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        hi = min(lo + BATCH, len(texts))
        with db:
            db.executemany(
                "insert into vec(rowid, embedding) values (?, ?)",
                [(i + 1, vecs[i].tobytes()) for i in range(lo, hi)],
            )
            db.executemany(
                "insert into fts(rowid, text) values (?, ?)",
                [(i + 1, texts[i]) for i in range(lo, hi)],
            )
    ingest = time.perf_counter() - t0
    peak = _peak_mb()
    db.close()
    return {"ingest_s": ingest, "ready_s": ingest, "peak_mb": peak, "ingest_peak_mb": peak}


def ingest_lance(root: Path, texts: list[str], vecs: np.ndarray) -> dict[str, float]:
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(root / "lance"))
    table = None
    t0 = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        hi = min(lo + BATCH, len(texts))
        flat = pa.array(vecs[lo:hi].reshape(-1), pa.float32())
        batch = pa.table(
            {
                "id": pa.array(np.arange(lo, hi, dtype=np.int64)),
                "text": pa.array(texts[lo:hi]),
                "vector": pa.FixedSizeListArray.from_arrays(flat, DIM),
            }
        )
        if table is None:
            table = db.create_table("m", data=batch)
        else:
            table.add(batch)
    ingest = time.perf_counter() - t0
    ingest_peak = _peak_mb()
    assert table is not None
    from lancedb.index import FTS

    table.create_index("text", config=FTS())
    ready = time.perf_counter() - t0
    peak = _peak_mb()  # until ready: the FTS build counts
    return {"ingest_s": ingest, "ready_s": ready, "peak_mb": peak, "ingest_peak_mb": ingest_peak}


INGEST = {
    "chitta": ingest_chitta,
    "chroma": ingest_chroma,
    "sqlite": ingest_sqlite,
    "lance": ingest_lance,
}


def child(store: str, n: int) -> dict[str, float]:
    """One round in this (fresh) process: what the parent reads as JSON."""
    texts, vecs = data(n)
    root = Path(tempfile.mkdtemp(prefix=f"peers-{store}-"))
    try:
        base = _rss_mb()
        out = INGEST[store](root, texts, vecs)
        out["base_mb"] = base
        out["disk_bytes"] = _disk(root)
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def installed(store: str) -> bool:
    mod = {"chitta": "chitta", "chroma": "chromadb", "sqlite": "sqlite_vec", "lance": "lancedb"}
    try:
        __import__(mod[store])
    except ImportError:
        return False
    return True


def run_child(store: str, n: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", store, str(n)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),  # not the checkout: its chitta/ would shadow the installed one
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure(sizes: list[int], rounds: int, stores: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for n in sizes:
        runs: dict[str, list[dict[str, float]]] = {s: [] for s in stores}
        for r in range(rounds):
            order = stores if r % 2 == 0 else stores[::-1]
            for store in order:
                runs[store].append(run_child(store, n))
        table = {}
        for store in stores:
            rs = runs[store]
            table[store] = {
                "records_s": statistics.median(n / x["ingest_s"] for x in rs),
                "ready_s": statistics.median(x["ready_s"] for x in rs),
                "peak_mb": statistics.median(x["peak_mb"] for x in rs),
                "ingest_peak_mb": statistics.median(x["ingest_peak_mb"] for x in rs),
                "growth_mb": statistics.median(x["peak_mb"] - x["base_mb"] for x in rs),
                "bytes_per_memory": statistics.median(x["disk_bytes"] / n for x in rs),
                "rounds_records_s": [round(n / x["ingest_s"]) for x in rs],
            }
        if "chitta" in table:
            mine = table["chitta"]["records_s"]
            for store in stores:
                table[store]["chitta_over_it"] = mine / table[store]["records_s"]
        results[str(n)] = table
    return results


def report(results: dict[str, Any]) -> str:
    lines = []
    for n, table in results.items():
        lines.append(f"n = {int(n):,} (batches of {BATCH}, 384-d caller vectors)")
        lines.append(
            f"{'store':8} {'records/s':>10} {'chitta/it':>9} {'ready s':>8} "
            f"{'ingest pk':>9} {'peak MB':>8} {'growth MB':>9} {'B/memory':>9}  rounds"
        )
        for store, row in table.items():
            lines.append(
                f"{store:8} {row['records_s']:10,.0f} {row.get('chitta_over_it', 0):9.2f} "
                f"{row['ready_s']:8.2f} {row['ingest_peak_mb']:9.0f} {row['peak_mb']:8.0f} "
                f"{row['growth_mb']:9.0f} "
                f"{row['bytes_per_memory']:9,.0f}  {row['rounds_records_s']}"
            )
    return "\n".join(lines)


def main() -> None:
    sizes = [10_000] + ([100_000] if os.environ.get("CHITTA_BENCH_PEERS_LARGE") else [])
    rounds = int(os.environ.get("CHITTA_BENCH_ROUNDS", "3"))
    wanted = os.environ.get("CHITTA_BENCH_PEERS_STORES", ",".join(STORES)).split(",")
    stores = [s for s in wanted if s in INGEST and installed(s)]
    missing = sorted(set(wanted) - set(stores))
    if missing:
        print(f"not installed (pip install '.[bench]'): {', '.join(missing)}", file=sys.stderr)
    load = os.getloadavg()
    print(f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {os.cpu_count()} cpus", file=sys.stderr)
    large_rounds = int(os.environ.get("CHITTA_BENCH_ROUNDS_LARGE", str(rounds)))
    for n in sizes:  # each size's table as soon as it is measured
        results = measure([n], rounds if n <= 10_000 else large_rounds, stores)
        print(report(results), flush=True)
        print(json.dumps(results), flush=True)


def test_peers_smoke() -> None:
    """Every installed store ingests 1K in a subprocess and reports sane numbers."""
    stores = [s for s in STORES if installed(s)]
    results = measure([1000], 1, stores)["1000"]
    for store in stores:
        row = results[store]
        assert row["records_s"] > 0 and row["bytes_per_memory"] > 0, (store, row)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]))))
    else:
        main()
