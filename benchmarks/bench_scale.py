"""Scale run: one field of N synthetic memories with vectors (no model).

Writes N memories (12 words over a 5,000-word Zipf vocabulary, 384-d clustered
vectors passed as ``embedding=``, so sparse codes and encoder learning run as
for any write) with ``remember_many``, then measures, each in a fresh process
so that memory is the field's alone:

* bytes on disk: segments, checkpoint;
* open time from the log only, and from a checkpoint (+ replay after it);
* checkpoint time (``chitta.field.checkpoint.run.write_checkpoint``);
* resident memory per memory, with and without the vectors (float32 copies);
* recall latency p50/p99 per lane set and end to end (query vector = a stored
  vector plus noise, query text = 4 words of a stored memory; the first query,
  which builds the lazy indexes, reported on its own);
* remember throughput during the build.

Targets (issue): open from checkpoint <= 2 s, log only <= 10 s, memory per
memory excluding vectors <= 1 KiB, end-to-end recall p50 < 5 ms.

    python benchmarks/bench_scale.py --n 1000000 [--queries 200] [--json]
    python benchmarks/bench_scale.py --n 1000000 --keep /data/scale1m   # build once, keep the field
    python benchmarks/bench_scale.py --reuse /data/scale1m [--skip-log] [--profile open.prof]

``--keep DIR`` writes the field to ``DIR/field`` (and its build numbers to
``DIR/build.json``) and leaves it there; ``--reuse DIR`` measures that field
again without rebuilding it (a new checkpoint is written with the code under
test, every measurement still in a fresh process). ``--profile FILE`` writes a
cProfile of one open from the checkpoint.
    pytest benchmarks/bench_scale.py --benchmark-disable        # smoke (N = 3,000)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen

import chitta

DIM = 384
BATCH = 2048
LANE_SETS = {"bm25": ["bm25"], "dense": ["dense"], "posting": ["posting"], "hybrid": None}
VOCAB = [f"w{i}" for i in range(5000)]


def _texts(lo: int, hi: int, rng: np.random.Generator) -> list[str]:
    words = rng.zipf(1.3, size=(hi - lo, 12)) % len(VOCAB)
    return [" ".join(VOCAB[w] for w in row) for row in words]


def build(root: Path, n: int, console: Console) -> dict[str, float]:
    """Write the field; returns remember throughput."""
    rng = np.random.default_rng(3)
    vecs = datagen.clustered_vectors(n, DIM, n_clusters=max(10, n // 100), seed=1)
    cols = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    t0 = time.perf_counter()
    with (
        chitta.open(root, durability="buffered", embedder=None) as field,
        Progress(*cols, console=console, transient=True) as progress,
    ):
        task = progress.add_task(f"remember_many {n:,} memories", total=n)
        for lo in range(0, n, BATCH):
            hi = min(n, lo + BATCH)
            field.remember_many(
                [{"text": t, "embedding": v} for t, v in zip(_texts(lo, hi, rng), vecs[lo:hi])]
            )
            progress.advance(task, hi - lo)
        field.flush()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "per_s": n / seconds}


# ---- measured in a child process -------------------------------------------------------------
CHILD = r"""
import gc, json, sys, time
import numpy as np, psutil
import chitta
from chitta.field.checkpoint.run import write_checkpoint
root, what, nq = sys.argv[1], sys.argv[2], int(sys.argv[3])
proc = psutil.Process()
gc.collect()
base = proc.memory_info().rss
out = {}
if what == "checkpoint":
    t0 = time.perf_counter(); info = write_checkpoint(root); out["seconds"] = time.perf_counter() - t0
    out["bytes"] = info.bytes
    print(json.dumps(out)); sys.exit(0)
t0, c0 = time.perf_counter(), time.process_time()
f = chitta.open(root, read_only=True, embedder=None, load_checkpoint=(what == "open-checkpoint"))
out["open_s"] = time.perf_counter() - t0
out["open_cpu_s"] = time.process_time() - c0  # steadier than wall time on a loaded machine
out["checkpoint"] = f.checkpoint_loaded
gc.collect()
rss = proc.memory_info().rss - base
n = len(f)
vec = f.core.index._vecs.nbytes
if hasattr(f.core.memories, "nbytes"):  # the columnar organ
    vec += f.core.memories.nbytes()["vectors"]
else:  # the organ before columns (A/B runs against older code)
    vec += f.core.memories._sidecar_vecs.nbytes
    for rec in f.core.memories._records.values():
        emb = getattr(rec, "embedding", None)
        vec += len(emb) if emb is not None else 0
out.update(memories=n, rss_bytes=rss, vector_bytes=int(vec))
if nq:
    rng = np.random.default_rng(7)
    ids = f.ids()
    picks = [ids[int(i)] for i in rng.integers(0, n, nq)]
    qs = []
    for mid in picks:
        v = f.core.index.vector(mid) + rng.normal(0, 0.2 / np.sqrt(f.core.index.dim), f.core.index.dim).astype(np.float32)
        qs.append((" ".join(f.get(mid).text.split()[:4]), (v / np.linalg.norm(v)).astype(np.float32)))
    lat = {}
    for name, lanes in json.loads(sys.argv[4]).items():
        t0 = time.perf_counter(); f.recall(qs[0][0], vector=qs[0][1], k=10, lanes=lanes, touch=False)
        first = (time.perf_counter() - t0) * 1000
        ms = []
        for text, v in qs:
            t0 = time.perf_counter(); f.recall(text, vector=v, k=10, lanes=lanes, touch=False)
            ms.append((time.perf_counter() - t0) * 1000)
        lat[name] = {"first_ms": first, "p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99))}
    out["recall"] = lat
print(json.dumps(out))
"""


def child(root: Path, what: str, nq: int = 0) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), what, str(nq), json.dumps(LANE_SETS)],
        capture_output=True,
        text=True,
        check=False,
        cwd=root.parent,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child {what} failed:\n{proc.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run(
    n: int,
    nq: int,
    console: Console,
    tmp_dir: Path | None = None,
    *,
    keep: Path | None = None,
    reuse: Path | None = None,
    skip_log: bool = False,
) -> dict[str, Any]:
    """Build (or reuse) the field and measure it. ``keep``/``reuse``: a directory
    whose ``field/`` survives the run."""
    base = reuse or keep
    tmp = Path(tempfile.mkdtemp(prefix="chitta-scale-", dir=tmp_dir)) if base is None else base
    root = tmp / "field"
    try:
        result: dict[str, Any] = {"n": n, "queries": nq, "load": os.getloadavg()[0]}
        if reuse is not None:
            built = json.loads((reuse / "build.json").read_text())
            result["n"], result["remember"] = built["n"], built["remember"]
        else:
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(root, ignore_errors=True)
            result["remember"] = build(root, n, console)
            if keep is not None:
                (keep / "build.json").write_text(
                    json.dumps({"n": n, "remember": result["remember"]})
                )
        result["segments_bytes"] = _du(root / "segments")
        if not skip_log:
            with console.status("open from the log only"):
                result["open_log"] = child(root, "open-log")
        with console.status("checkpoint"):
            result["checkpoint"] = child(root, "checkpoint")
        result["checkpoint_bytes"] = _du(root / "checkpoint")
        with console.status("open from the checkpoint + recall"):
            result["open_checkpoint"] = child(root, "open-checkpoint", nq)
        result["load_after"] = os.getloadavg()[0]
        return result
    finally:
        if base is None:
            shutil.rmtree(tmp, ignore_errors=True)


def profile_open(root: Path, out: Path) -> None:
    """cProfile of one open from the checkpoint, in a fresh process, to ``out``."""
    code = (
        "import cProfile, sys, chitta\n"
        "cProfile.run('chitta.open(sys.argv[1], read_only=True, embedder=None).close()', sys.argv[2])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(root), str(out)], check=True, cwd=root.parent)


def report(r: dict[str, Any], console: Console) -> None:
    n = r["n"]
    t = Table(title=f"chitta at {n:,} memories (384-d vectors, no model)", title_justify="left")
    for col in ("measure", "value", "target", "met"):
        t.add_column(col)

    def row(name: str, value: str, target: str = "", met: bool | None = None) -> None:
        t.add_row(name, value, target, "" if met is None else ("yes" if met else "NO"))

    ol, oc = r.get("open_log"), r["open_checkpoint"]
    row(
        "remember_many (caller vectors, codes, learning)",
        f"{r['remember']['per_s']:,.0f} memories/s",
    )
    row(
        "segments on disk",
        f"{r['segments_bytes'] / 2**20:,.0f} MiB ({r['segments_bytes'] / n:,.0f} B/memory)",
    )
    row(
        "checkpoint on disk",
        f"{r['checkpoint_bytes'] / 2**20:,.0f} MiB ({r['checkpoint_bytes'] / n:,.0f} B/memory)",
    )
    if ol is not None:
        row("open, log only", f"{ol['open_s']:.2f} s", "<= 10 s", ol["open_s"] <= 10)
    row("checkpoint", f"{r['checkpoint']['seconds']:.2f} s")
    row(
        "open from checkpoint",
        f"{oc['open_s']:.2f} s (CPU {oc.get('open_cpu_s', 0):.2f} s)",
        "<= 2 s",
        oc["open_s"] <= 2,
    )
    for name, o in (("log only", ol), ("from checkpoint", oc)):
        if o is None:
            continue
        per = o["rss_bytes"] / n
        without = (o["rss_bytes"] - o["vector_bytes"]) / n
        row(
            f"resident per memory ({name})",
            f"{per:,.0f} B, {without:,.0f} B without vectors",
            "<= 1 KiB w/o vectors",
            without <= 1024,
        )
    for lane, lat in oc.get("recall", {}).items():
        target, met = ("p50 < 5 ms", lat["p50_ms"] < 5) if lane == "hybrid" else ("", None)
        row(
            f"recall {lane} (k=10)",
            f"p50 {lat['p50_ms']:.2f} ms, p99 {lat['p99_ms']:.2f} ms, "
            f"first {lat['first_ms']:.0f} ms",
            target,
            met,
        )
    console.print(t)
    console.print(f"load average {r['load']:.1f} before, {r['load_after']:.1f} after")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--dir", type=Path, default=None, help="where the temporary field goes (default: $TMPDIR)"
    )
    ap.add_argument(
        "--keep", type=Path, default=None, help="build the field into DIR/field and keep it"
    )
    ap.add_argument(
        "--reuse", type=Path, default=None, help="measure the field kept in DIR by --keep"
    )
    ap.add_argument(
        "--skip-log", action="store_true", help="do not measure the open from the log only"
    )
    ap.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="write a cProfile of one open from the checkpoint",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.keep and args.reuse:
        ap.error("--keep and --reuse exclude each other")
    if args.profile and not (args.keep or args.reuse):
        ap.error("--profile needs --keep or --reuse (a field that outlives the run)")
    console = Console(stderr=args.json)
    result = run(
        args.n,
        args.queries,
        console,
        args.dir,
        keep=args.keep,
        reuse=args.reuse,
        skip_log=args.skip_log,
    )
    if args.profile is not None:
        with console.status("profiling one open from the checkpoint"):
            profile_open((args.reuse or args.keep or Path(".")) / "field", args.profile.absolute())
    if args.json:
        print(json.dumps(result))
    else:
        report(result, console)
    return 0


def test_scale_smoke() -> None:
    n = int(os.environ.get("CHITTA_BENCH_SCALE_N", "3000"))
    r = run(n, 10, Console(stderr=True))
    assert r["open_checkpoint"]["checkpoint"] is not None and r["open_log"]["checkpoint"] is None
    assert r["open_log"]["memories"] == r["open_checkpoint"]["memories"] == n
    assert set(r["open_checkpoint"]["recall"]) == set(LANE_SETS)


if __name__ == "__main__":
    sys.exit(main())
