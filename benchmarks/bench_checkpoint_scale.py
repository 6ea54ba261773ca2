"""Checkpoint and cold start of a large field (issue 17): one checkpoint's time and
bytes, then chitta.open + first recall, each step in a fresh process.

Uses a field kept by ``bench_scale.py --keep DIR`` (N memories, 384-d vectors, no
model). Every checkpoint starts from no checkpoint (``checkpoint/`` is derived: it is
removed first), so it replays the whole log, as the first checkpoint after an ingest
does. Measured:

* ``checkpoint``: ``write_checkpoint`` wall and CPU seconds, split into the view's
  replay, the dense graph inserts, the rest; bytes per file and per memory;
* with ``--ab``, the same checkpoint with the graph built whole in it (the code before
  ``AUTO_BUILD_SECONDS``), side by side;
* ``cold``: ``chitta.open`` + the first recall (text + vector), embedder=None and
  (``--model``) the default model; ``recall`` p50/p99 after; with ``--ab`` also after the
  whole-graph checkpoint (``cold_whole_graph``: the first dense recall reads the graph);
* ``--vectors emb``: the checkpoint copies every vector into ``vectors.emb`` (state 9 and
  before); the default ``ref`` stores references into the log (``vectors.ref``, state 10);
* ``--graph-format 1``: the graph file stores every vector (HNSW 1.0, the code before
  checkpoint state 9); the default 2 stores links and refers to the unit rows;
* ``--model`` (a field whose recorded embedder is the default model): the checkpoint is
  written by ``Field.checkpoint()`` of a default-model handle (so it saves the expansion
  lane's word table, as an agent's handle does); the model's query embedding p50 and
  recall end to end (query embedding included) p50.

    python benchmarks/bench_scale.py --n 100000 --keep /tmp/s100k    # once
    python benchmarks/bench_checkpoint_scale.py --reuse /tmp/s100k [--ab] [--model] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

CHECKPOINT = r"""
import json, sys, time
import chitta.organs.recall_index_dense as rid
import chitta.organs.dense_ann as da
from chitta.field import Field
from chitta.field.checkpoint import snapshot
from chitta.field.checkpoint.run import write_checkpoint
root, whole = sys.argv[1], sys.argv[2] == "whole"
if sys.argv[4] == "1":  # the graph file with every vector in it (HNSW 1.0, state 8 and before)
    save = da.DenseANN.save
    da.DenseANN.save = lambda self, path, rows=None: save(self, path)
if whole:  # the graph built whole in the checkpoint, as before AUTO_BUILD_SECONDS
    rid.AUTO_BUILD_SECONDS = None
import chitta.organs.memories_checkpoint as mc
if sys.argv[5] == "emb":  # a copy of every vector in vectors.emb (state 9 and before)
    mc.vector_refs.locate = lambda *a, **k: None
refs_s = [0.0]
locate = mc.vector_refs.locate
def timed_locate(*a, **k):
    t = time.perf_counter(); out = locate(*a, **k); refs_s[0] += time.perf_counter() - t
    return out
mc.vector_refs.locate = timed_locate
inserts = [0.0, 0]
add = da.DenseANN.catch_up
def timed(self, *a, **k):
    t = time.perf_counter(); before = self.pending
    add(self, *a, **k)
    inserts[0] += time.perf_counter() - t; inserts[1] += before - self.pending
da.DenseANN.catch_up = timed
init = Field.__init__
view_s = [0.0]
def timed_init(self, *a, **k):
    t = time.perf_counter(); init(self, *a, **k); view_s[0] += time.perf_counter() - t
Field.__init__ = timed_init
if sys.argv[3] == "handle":  # Field.checkpoint() of a default-model handle: saves its word table
    import chitta
    with chitta.open(root, embedder="default") as f:
        t0, c0 = time.perf_counter(), time.process_time()
        info = f.checkpoint()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
else:
    t0, c0 = time.perf_counter(), time.process_time()
    info = write_checkpoint(root)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"seconds": wall, "cpu_s": cpu, "view_s": view_s[0], "graph_s": inserts[0],
                  "graph_added": inserts[1], "refs_s": refs_s[0], "bytes": info.bytes, "memories": info.memories}))
"""

COLD = r"""
import json, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
import chitta
import numpy as np
import chitta.field.checkpoint.mapped_vectors as mv
gather_s = [0.0]
def timed(name):  # the passes over the vectors mapped in place: CRC check, unit rows
    fn = getattr(mv.MappedVectors, name)
    def run(*a, **k):
        t = time.perf_counter(); out = fn(*a, **k); gather_s[0] += time.perf_counter() - t
        return out
    setattr(mv.MappedVectors, name, run)
timed("crc"); timed("unit_into")
t1 = time.perf_counter()
root, which = sys.argv[1], sys.argv[2]
from chitta.encode import HashingEmbedder
embedder = {"none": None, "hashing": HashingEmbedder(), "model": "default"}[which]
f = chitta.open(root, read_only=True, embedder=embedder)
t2 = time.perf_counter()
def rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 2**20
rss_open = rss_mb()
rng = np.random.default_rng(7)
v = rng.normal(size=384).astype(np.float32)
first = f.recall("w1 w20 w300", vector=v if which == "none" else None, k=10, touch=False)
t3 = time.perf_counter(); c3 = time.process_time()
import resource
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
rss_first = rss_mb()
ms = []
for i in range(50):
    q = " ".join(f"w{int(w)}" for w in rng.integers(0, 5000, 4))
    v = rng.normal(size=384).astype(np.float32)
    s = time.perf_counter()
    f.recall(q, vector=v if which == "none" else None, k=10, touch=False)
    ms.append((time.perf_counter() - s) * 1000)
out = {"import_s": t1 - t0, "open_s": t2 - t1, "vectors_from_log_s": gather_s[0], "first_recall_s": t3 - t2,
       "to_first_answer_s": t3 - t1, "cpu_to_first_answer_s": c3 - c0,
       "hits": len(first), "checkpoint": f.checkpoint_loaded,
       "rss_mb_after_open": rss_open, "rss_mb_after_first_recall": rss_first,
       "peak_rss_mb_to_first_answer": peak_mb,
       "recall_p50_ms": float(np.percentile(ms, 50)), "recall_p99_ms": float(np.percentile(ms, 99))}
if which == "model":
    emb = f.core.encoding.embedder
    qs = [f"what did w{i} say about w{i + 7} last week" for i in range(60)]
    e = []
    for q in qs:
        s = time.perf_counter(); emb.embed([q]); e.append((time.perf_counter() - s) * 1000)
    out["query_embed_p50_ms"] = float(np.percentile(e[10:], 50))
    out["recall_with_model_p50_ms"] = out["recall_p50_ms"]
print(json.dumps(out))
"""


def _child(code: str, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",  # outside the checkout: the source tree would shadow the installed package
        # as an installed package runs: its modules' bytecode cached (an environment that
        # sets PYTHONDONTWRITEBYTECODE would compile ~190 modules on every cold start)
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-4000:])
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def checkpoint(
    root: Path, whole: bool, handle: bool = False, graph_format: int = 2, vectors: str = "ref"
) -> dict[str, Any]:
    shutil.rmtree(root / "checkpoint", ignore_errors=True)
    how = "handle" if handle else "view"
    out = _child(
        CHECKPOINT, str(root), "whole" if whole else "bounded", how, str(graph_format), vectors
    )
    live = (root / "checkpoint" / "CURRENT").read_text().strip()
    files = {p.name: p.stat().st_size for p in (root / "checkpoint" / live).iterdir()}
    out["files"] = {k: v for k, v in sorted(files.items(), key=lambda kv: -kv[1]) if v > 4096}
    out["log_bytes"] = sum(p.stat().st_size for p in (root / "segments").rglob("*") if p.is_file())
    n = out["memories"]
    out["per_memory"] = {"log": out["log_bytes"] / n, "checkpoint": out["bytes"] / n}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reuse", type=Path, required=True, help="a DIR kept by bench_scale --keep")
    ap.add_argument("--ab", action="store_true", help="also the graph built whole (before)")
    ap.add_argument("--model", action="store_true", help="also cold start with the default model")
    ap.add_argument("--skip-checkpoint", action="store_true", help="reuse the live checkpoint")
    ap.add_argument(
        "--graph-format",
        type=int,
        choices=(1, 2),
        default=2,
        help="1: the graph stores its vectors",
    )
    ap.add_argument(
        "--vectors",
        choices=("ref", "emb"),
        default="ref",
        help="emb: a copy of every vector in vectors.emb (state 9); ref: references into the log",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    root = args.reuse.absolute() / "field"
    result: dict[str, Any] = {
        "load_before": os.getloadavg()[0],
        "graph_format": args.graph_format,
        "vectors": args.vectors,
    }
    if args.ab:
        result["checkpoint_whole_graph"] = checkpoint(
            root, whole=True, graph_format=args.graph_format, vectors=args.vectors
        )
        print(json.dumps(result["checkpoint_whole_graph"]), file=sys.stderr)
        result["cold_whole_graph"] = _child(COLD, str(root), "none")
        print(json.dumps({"cold_whole_graph": result["cold_whole_graph"]}), file=sys.stderr)
    if not args.skip_checkpoint:
        result["checkpoint"] = checkpoint(
            root,
            whole=False,
            handle=args.model,
            graph_format=args.graph_format,
            vectors=args.vectors,
        )
        print(json.dumps(result["checkpoint"]), file=sys.stderr)
    for which in ("none",) + (("model",) if args.model else ()):
        result[f"cold_{which}"] = _child(COLD, str(root), which)
        print(json.dumps({f"cold_{which}": result[f"cold_{which}"]}), file=sys.stderr)
    result["load_after"] = os.getloadavg()[0]
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
