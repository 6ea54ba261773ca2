"""End-to-end ``Field.recall`` latency (query embedding excluded) and
``Field.remember`` throughput, with competitors in the same run.

Recall: a field of N memories (synthetic texts over a 5,000-word vocabulary,
384-d ``datagen.clustered_vectors``), queried with a perturbed stored vector
plus a 4-word text (``recall(text, vector=..., k=10, touch=False)``), so the
time is the query's sparse code + index + fusion + scoring path alone. p50/p99
per lane set: bm25, dense, posting, and the full hybrid (weighted RRF: the fields
have no model), then the hybrid with the convex score fusion the default MiniLM
model asks for (its keyword lane goes to 100 candidates), wall clock and the
calling thread's CPU time. Competitors measured on the same data and queries,
one thread each: SQLite FTS5 (``MATCH`` of the 4 words
OR-ed, ``ORDER BY rank``, 50 rows) for the bm25 lane; faiss ``IndexFlatIP``
(exact) and hnswlib (M=16, ef=64) top-50 search for the dense lane. They only
search; chitta's lanes also fuse, score and build the hits (a floor for the
dense lane, a rival engine for the keyword lane). Published numbers
for whole search calls (not run here, they include embedding and network
hops): mem0 search p50 148 ms, Zep 87 ms.

Remember: memories/s of ``remember_many`` (groups of 256) with caller vectors
(no embedder; also with numpy's BLAS held to one thread, to show what its
thread pool costs on a busy machine), without vectors, with the hashing
embedder, and with the ONNX MiniLM model (when installed; on a smaller N).

    python benchmarks/bench_recall.py [--sizes 10000,100000] [--queries 300] [--field-dir DIR] [--stages] [--json]
    CHITTA_BENCH_RECALL_N=2000 pytest benchmarks/bench_recall.py --benchmark-disable   # smoke

``--stages`` adds where a hybrid recall's thread CPU goes (lanes, the bm25 and
dense organ calls, the tail after the lanes, the k memories, the field's own
checks), from timers wrapped around those calls. ``--concurrent-lanes on|off`` sets
``RecallSettings.concurrent_lanes`` (the dense graph search on the search thread
while BM25 runs); the tables' CPU is the calling thread's, the JSON adds the
process's (``proc_cpu_p50_ms``, the search thread's share included).

``--field-dir`` keeps the built fields and reuses them on the next run (the
same fields for a before/after comparison of two checkouts). A built field is
checkpointed and reopened from it before it is queried (at 10K and 100K the
dense lane is then the HNSW graph that checkpoint built, from 4,096 vectors on;
a field kept from an older checkout has a graph only at 100K until it is
checkpointed again; see RESULTS.md).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen

import chitta

try:  # absent in checkouts older than the one-thread BLAS change
    from chitta.recall.blas import one_thread
except ImportError:  # pragma: no cover
    one_thread = contextlib.nullcontext  # type: ignore[assignment]

LANE_SETS = {"bm25": ("bm25",), "dense": ("dense",), "posting": ("posting",), "hybrid": None}
CONVEX = "hybrid, convex (the default model's fusion)"
DEFAULT_INSTALL = "hybrid, convex + expansion (the default model's settings)"
VOCAB = [f"w{i}" for i in range(5000)]
POOL = 50  # what each lane asks of its index at k=10 (RecallSettings.pool)


def random_words(words: list[str]) -> np.ndarray:
    """Deterministic random unit vectors for ``words`` (384-d, seeded by each word's SHA-1)."""
    out = np.empty((len(words), 384), np.float32)
    for i, w in enumerate(words):
        seed = int.from_bytes(hashlib.sha1(w.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        out[i] = v / np.linalg.norm(v)
    return out


def synthetic_vocabulary(cls: Any = None) -> Any:
    """The expansion lane's word table for the synthetic fields: their 5,000 words (``w123``, which the
    field's own word rule would not admit) with :func:`random_words` vectors. What a recall then pays is
    the word search and the second keyword scoring, not a model. ``cls``: a ``Vocabulary`` subclass."""
    from chitta.recall.expand import Vocabulary

    vocab = (cls or Vocabulary)(random_words, "synthetic", 384)
    vocab.add_words(VOCAB)
    vocab.refresh()
    return vocab


@contextlib.contextmanager
def default_model_settings(field: chitta.Field) -> Any:
    """Within: ``field`` recalls with the settings the default model asks for (convex fusion and the
    expansion lane, chitta.recall.presets) over :func:`synthetic_vocabulary`, every query expanding
    (``expansion_min_cosine`` -1: random word vectors lie near no query)."""
    from chitta.encode import OnnxMiniLM
    from chitta.recall.presets import settings_for

    settings, vocabulary = field.core.engine.settings, field.core.engine.vocabulary
    field.core.engine.settings = dataclasses.replace(
        settings_for(OnnxMiniLM(), settings), expansion_min_cosine=-1.0
    )
    field.core.engine.vocabulary = synthetic_vocabulary()
    try:
        yield
    finally:
        field.core.engine.settings, field.core.engine.vocabulary = settings, vocabulary


def texts(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    words = rng.zipf(1.3, size=(n, 12)) % len(VOCAB)
    return [" ".join(VOCAB[w] for w in row) for row in words]


def corpus(n: int) -> tuple[np.ndarray, list[str]]:
    return datagen.clustered_vectors(n, 384, n_clusters=max(10, n // 100), seed=1), texts(n)


def build(
    root: Path, n: int, progress: Progress | None = None
) -> tuple[chitta.Field, np.ndarray, list[str]]:
    """The field of ``n`` memories at ``root`` (reopened when a finished one is there)."""
    vecs, docs = corpus(n)
    if (root / "BUILT").exists():
        return chitta.open(root, embedder=None), vecs, docs
    field = chitta.open(root, durability="buffered", embedder=None)
    task = progress.add_task(f"writing {n:,}", total=n) if progress else None
    with (
        one_thread()
    ):  # the encoder's learning steps are BLAS-heavy; the build is not what is timed
        for lo in range(0, n, 2048):
            field.remember_many(
                [
                    {"text": t, "embedding": v}
                    for t, v in zip(docs[lo : lo + 2048], vecs[lo : lo + 2048])
                ]
            )
            if progress and task is not None:
                progress.advance(task, min(2048, n - lo))
    field.flush()
    # A checkpoint, as a daemon's maintenance would write: the field then opens from it, and with
    # dense_index "auto" a field of >= 50K vectors gets its HNSW graph there (chitta/organs/dense_ann.py).
    field.checkpoint()
    field.close()
    (root / "BUILT").write_text(str(n))
    return chitta.open(root, embedder=None), vecs, docs


def queries(vecs: np.ndarray, docs: list[str], nq: int) -> tuple[np.ndarray, list[str]]:
    qv = datagen.queries_near(vecs, nq, seed=7)
    rng = np.random.default_rng(11)
    return qv, [" ".join(docs[int(i)].split()[:4]) for i in rng.integers(0, len(docs), nq)]


def percentiles(fn: Callable[[int], object], nq: int) -> dict[str, float]:
    """Wall-clock p50/p99 of ``fn(i)`` over the queries, and the p50 of the
    calling thread's CPU time (what an idle machine would show, about)."""
    fn(0)  # builds lazy indexes
    wall, cpu, proc = [], [], []
    for i in range(nq):
        p0, c0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
        fn(i)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        proc.append(time.process_time() - p0)  # with the search thread's share (concurrent lanes)
    ms = np.array(wall) * 1000
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p99_ms": float(np.percentile(ms, 99)),
        "cpu_p50_ms": float(np.percentile(np.array(cpu) * 1000, 50)),
        "proc_cpu_p50_ms": float(np.percentile(np.array(proc) * 1000, 50)),
    }


def recall_latency(
    field: chitta.Field, vecs: np.ndarray, docs: list[str], nq: int, stages: bool = False
) -> dict[str, dict[str, float]]:
    qv, qt = queries(vecs, docs, nq)
    out = {}
    for name, lanes in LANE_SETS.items():
        out[name] = percentiles(
            lambda i, lanes=lanes: field.recall(
                qt[i], vector=qv[i], k=10, lanes=lanes, touch=False
            ),
            nq,
        )
    # The fields have no model, so the rows above fuse by weighted RRF. The default install's model asks
    # for convex score fusion (chitta.recall.presets), whose keyword lane goes deeper, and for the
    # vocabulary expansion lane: time those as well (the lane with synthetic word vectors, every query
    # expanding: see synthetic_vocabulary).
    settings = field.core.engine.settings
    if hasattr(settings, "fusion_alpha"):
        from chitta.encode import OnnxMiniLM

        field.core.engine.settings = dataclasses.replace(
            settings, fusion_alpha=OnnxMiniLM.recall_fusion_alpha
        )
        out[CONVEX] = percentiles(
            lambda i: field.recall(qt[i], vector=qv[i], k=10, touch=False), nq
        )
        field.core.engine.settings = settings
        if hasattr(settings, "expansion_weight"):
            with default_model_settings(field):
                out[DEFAULT_INSTALL] = percentiles(
                    lambda i: field.recall(qt[i], vector=qv[i], k=10, touch=False), nq
                )
    if stages:
        out["hybrid stages"] = stage_times(field, qv, qt, nq)
    return out


# Stage timers: the calling thread's CPU time inside these calls of a hybrid recall, per query. Wrapped where
# the checkout has them (instance attributes over the methods), so two checkouts can be compared.
STAGES = (
    ("engine", "_engine", "recall"),
    ("lanes", "_engine", "lanes"),
    ("bm25 lane (organ call)", "_index", "keyword"),
    ("dense lane (organ call)", "_index", "dense"),
    ("dense lane (start on the search thread)", "_index", "dense_start"),
    ("the k memories", "_memories", "memories"),
)


def stage_times(field: chitta.Field, qv: np.ndarray, qt: list[str], nq: int) -> dict[str, float]:
    """Where a hybrid recall's thread CPU time goes: medians over the queries, ms. ``tail`` is the
    engine's time after its lanes (fusion, the candidates' state, cosines, scores, top k, the hits),
    ``field`` the recall's time outside the engine (argument checks, query vector, filters)."""
    spent: dict[str, int] = {}
    wrapped = []
    core = getattr(field, "core", None)  # this layout: the organs hang off field.core
    for label, owner_name, attr in STAGES:
        if core is not None:
            owner = getattr(core, owner_name.lstrip("_"), None)
        else:  # an older checkout: the Field's own private attributes
            owner = getattr(field, owner_name, None)
        if owner is None or not hasattr(owner, attr):
            continue

        method = getattr(owner, attr)

        def timed(*a: Any, _fn: Any = method, _label: str = label, **kw: Any) -> Any:
            t0 = time.thread_time_ns()
            try:
                return _fn(*a, **kw)
            finally:
                spent[_label] = spent.get(_label, 0) + time.thread_time_ns() - t0

        setattr(owner, attr, timed)
        wrapped.append((owner, attr))
    rows: dict[str, list[int]] = {}
    try:
        field.recall(qt[0], vector=qv[0], k=10, touch=False)
        for i in range(nq):
            spent.clear()
            t0 = time.thread_time_ns()
            field.recall(qt[i], vector=qv[i], k=10, touch=False)
            spent["total"] = time.thread_time_ns() - t0
            spent["tail"] = spent.get("engine", 0) - spent.get("lanes", 0)
            spent["field"] = spent["total"] - spent.get("engine", 0)
            for label, v in spent.items():
                rows.setdefault(label, []).append(v)
    finally:
        for owner, attr in wrapped:
            delattr(owner, attr)
    return {label: float(np.median(v)) / 1e6 for label, v in rows.items()}


def competitors(vecs: np.ndarray, docs: list[str], nq: int) -> dict[str, dict[str, float]]:
    """Search-only competitors on the same data and queries, one thread each."""
    qv, qt = queries(vecs, docs, nq)
    out: dict[str, dict[str, float]] = {}
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(docs, 1))
    fts = [" OR ".join(q.split()) for q in qt]
    sql = f"SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT {POOL}"
    out["sqlite fts5 (bm25)"] = percentiles(lambda i: db.execute(sql, (fts[i],)).fetchall(), nq)
    with contextlib.suppress(ImportError):
        import faiss

        faiss.omp_set_num_threads(1)
        flat = faiss.IndexFlatIP(vecs.shape[1])
        flat.add(vecs)
        out["faiss flat (dense)"] = percentiles(lambda i: flat.search(qv[i : i + 1], POOL), nq)
    with contextlib.suppress(ImportError):
        import hnswlib

        index = hnswlib.Index(space="ip", dim=vecs.shape[1])
        index.init_index(max_elements=len(vecs), M=16, ef_construction=100, random_seed=1)
        index.set_num_threads(1)
        index.add_items(vecs, np.arange(len(vecs)))
        index.set_ef(64)
        out["hnswlib M16 ef64 (dense)"] = percentiles(lambda i: index.knn_query(qv[i], k=POOL), nq)
    return out


def remember_rate(
    root: Path, n: int, embedder: Any, vectors: bool, blas_one_thread: bool = False
) -> float:
    docs = texts(n, seed=5)
    vecs = datagen.clustered_vectors(n, 384, seed=2) if vectors else None
    ctx = one_thread() if blas_one_thread else contextlib.nullcontext()
    with chitta.open(root, durability="buffered", embedder=embedder) as field, ctx:
        t0 = time.perf_counter()
        for lo in range(0, n, 256):
            items: list[dict[str, Any]] = [{"text": t} for t in docs[lo : lo + 256]]
            if vecs is not None:
                for item, v in zip(items, vecs[lo : lo + 256]):
                    item["embedding"] = v
            field.remember_many(items)
        return n / (time.perf_counter() - t0)


def run(
    sizes: list[int],
    nq: int,
    write_n: int,
    field_dir: Path | None,
    console: Console,
    rivals: bool = True,
    stages: bool = False,
    concurrent_lanes: bool | None = None,
) -> dict[str, Any]:
    from chitta.encode import HashingEmbedder, default_embedder

    result: dict[str, Any] = {
        "load_before": os.getloadavg(),
        "recall": {},
        "floors": {},
        "remember": {},
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        Progress(console=console, transient=True) as progress,
    ):
        fields = field_dir or Path(tmp)
        for n in sizes:
            field, vecs, docs = build(fields / f"r{n}", n, progress)
            if concurrent_lanes is not None and hasattr(
                field.core.engine.settings, "concurrent_lanes"
            ):
                field.core.engine.settings = dataclasses.replace(
                    field.core.engine.settings, concurrent_lanes=concurrent_lanes
                )
            result["recall"][n] = recall_latency(field, vecs, docs, nq)
            if stages:
                qv, qt = queries(vecs, docs, nq)
                result.setdefault("stages", {})[n] = stage_times(field, qv, qt, nq)
            field.close()
            if rivals:
                result["floors"][n] = competitors(vecs, docs, nq)
        if write_n:
            result["remember"]["caller vectors"] = remember_rate(
                Path(tmp) / "w1", write_n, None, True
            )
            result["remember"]["caller vectors, BLAS on one thread"] = remember_rate(
                Path(tmp) / "w1b", write_n, None, True, blas_one_thread=True
            )
            result["remember"]["no vectors"] = remember_rate(Path(tmp) / "w0", write_n, None, False)
            result["remember"]["hashing embedder"] = remember_rate(
                Path(tmp) / "w2", write_n, HashingEmbedder(), False
            )
            onnx = default_embedder()
            if onnx.name != HashingEmbedder().name:
                result["remember"]["onnx MiniLM"] = remember_rate(
                    Path(tmp) / "w3", max(256, write_n // 20), onnx, False
                )
    result["load_after"] = os.getloadavg()
    return result


def print_tables(result: dict[str, Any], console: Console) -> None:
    load = "/".join(f"{x:.1f}" for x in result["load_before"])
    table = Table(
        title=f"Field.recall latency (query embedding excluded), k=10; load {load} (1/5/15 min)",
        title_justify="left",
    )
    for col in (
        "N",
        "lanes",
        "p50 ms",
        "p99 ms",
        "CPU p50 ms",
        "vs mem0 148 ms p50",
        "vs Zep 87 ms p50",
    ):
        table.add_column(col)
    for n, lanes in result["recall"].items():
        for name, t in lanes.items():
            table.add_row(
                f"{int(n):,}",
                name,
                f"{t['p50_ms']:.3f}",
                f"{t['p99_ms']:.3f}",
                f"{t['cpu_p50_ms']:.3f}",
                f"{148 / t['p50_ms']:.0f}x",
                f"{87 / t['p50_ms']:.0f}x",
            )
    console.print(table)
    floors = Table(
        title="Search alone, same data and queries, top-50, one thread", title_justify="left"
    )
    for col in ("N", "library", "p50 ms", "p99 ms", "CPU p50 ms", "chitta lane / it (p50)"):
        floors.add_column(col)
    for n, libs in result["floors"].items():
        for name, t in libs.items():
            lane = "bm25" if "bm25" in name else "dense"
            mine = result["recall"][n][lane]["p50_ms"]
            floors.add_row(
                f"{int(n):,}",
                name,
                f"{t['p50_ms']:.3f}",
                f"{t['p99_ms']:.3f}",
                f"{t['cpu_p50_ms']:.3f}",
                f"{mine / t['p50_ms']:.2f}x ({lane})",
            )
    console.print(floors)
    if result.get("stages"):
        st = Table(
            title="Where a hybrid recall goes (thread CPU, median per query, ms)",
            title_justify="left",
        )
        st.add_column("N")
        labels = list(next(iter(result["stages"].values())))
        for label in labels:
            st.add_column(label)
        for n, med in result["stages"].items():
            st.add_row(f"{int(n):,}", *(f"{med.get(label, 0.0):.3f}" for label in labels))
        console.print(st)
    if result["remember"]:
        wt = Table(title="Field.remember_many throughput (groups of 256)", title_justify="left")
        wt.add_column("path")
        wt.add_column("memories/s")
        for name, rate in result["remember"].items():
            wt.add_row(name, f"{rate:,.0f}")
        console.print(wt)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", default=os.environ.get("CHITTA_BENCH_RECALL_N", "10000,100000"))
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument(
        "--write-n", type=int, default=10000, help="memories per throughput run (0: skip)"
    )
    ap.add_argument(
        "--field-dir", type=Path, default=None, help="keep and reuse the built fields here"
    )
    ap.add_argument(
        "--no-competitors", action="store_true", help="skip SQLite FTS5, faiss and hnswlib"
    )
    ap.add_argument(
        "--stages", action="store_true", help="also time the stages of a hybrid recall (thread CPU)"
    )
    ap.add_argument(
        "--concurrent-lanes",
        choices=("on", "off"),
        default=None,
        help="RecallSettings.concurrent_lanes (default: the field's setting; ignored where absent)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    result = run(
        sizes,
        args.queries,
        args.write_n,
        args.field_dir,
        console,
        rivals=not args.no_competitors,
        stages=args.stages,
        concurrent_lanes=None if args.concurrent_lanes is None else args.concurrent_lanes == "on",
    )
    if args.json:
        print(json.dumps(result))
    else:
        print_tables(result, console)
    return 0


def test_recall_bench_smoke(tmp_path: Path) -> None:
    n = int(os.environ.get("CHITTA_BENCH_RECALL_N", "2000").split(",")[0])
    field, vecs, docs = build(tmp_path / "f", n)
    lat = recall_latency(field, vecs, docs, 20)
    qv, qt = queries(vecs, docs, 20)
    st = stage_times(field, qv, qt, 20)
    assert set(lat) == {*LANE_SETS, CONVEX, DEFAULT_INSTALL}
    with default_model_settings(field):  # the default-settings row ran the expansion lane
        assert any(
            "expansion" in h.lanes for h in field.recall(qt[0], vector=qv[0], k=10, touch=False)
        )
    field.close()
    assert {"total", "lanes", "tail", "field", "the k memories"} <= set(st)
    assert "sqlite fts5 (bm25)" in competitors(vecs, docs, 5)


if __name__ == "__main__":
    sys.exit(main())
