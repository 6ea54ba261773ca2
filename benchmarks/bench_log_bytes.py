"""Log bytes per memory: the field's segments at N memories with sparse codes
packed (op 68, what writers write now) and, side by side on the same data in the
same run, as op 12 (float32 activations, the writer before D-074).

The field is the scale bench's (``bench_scale.py``: 12-word Zipf texts, 384-d
clustered caller vectors, ``remember_many`` in groups of 2,048, no embedder),
with ``wait_embedded`` before the close so that every code is logged. The op 12
row swaps ``chitta.encode.field_encoding.code_ops_of`` for the old writer (same
winners, float32 bytes); everything else is the code under test. Per row:

* segment bytes per memory, and a census: bytes per memory by op type (records
  and Batch-inner payloads, record heads counted with their records);
* write: ``remember_many`` + ``wait_embedded`` seconds (memories/s);
* code ops: seconds to make the field's code ops from its winners (the packing
  itself, without the projection that finds the winners), and code append: to
  encode those ops and append them to a fresh log (both scaled to N from 10,000);
* replay: open from the log alone (``load_checkpoint=False``) in a fresh process,
  wall and CPU seconds, best of ``--opens``.

    python benchmarks/bench_log_bytes.py --n 10000 100000 [--opens 3] [--json]
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen

import chitta
from chitta import _core, ops
from chitta.encode import field_encoding
from chitta.encode.sparse_encode import winners
from chitta.ops.code_pack import code_ops_of

DIM = 384
BATCH = 2048
VOCAB = [f"w{i}" for i in range(5000)]
RECORD_HEAD = 21  # FORMAT.md, segment 2.0


def _texts(n: int, rng: np.random.Generator) -> list[str]:
    words = rng.zipf(1.3, size=(n, 12)) % len(VOCAB)
    return [" ".join(VOCAB[w] for w in row) for row in words]


def legacy_code_ops(
    ids: Any, features: np.ndarray, activations: np.ndarray, version: int
) -> list[ops.UpdateSparseCode]:
    """The writer before D-074: op 12, the encoder's float32 activations."""
    blob = np.ascontiguousarray(activations, "<f4").tobytes()
    width = 4 * features.shape[1]
    return [
        ops.UpdateSparseCode(
            id=int(ids[j]),
            features=tuple(row),
            activations=blob[j * width : (j + 1) * width],
            encoder_version=version,
        )
        for j, row in enumerate(features.astype(np.uint32).tolist())
    ]


WRITERS: dict[str, Callable[..., Any]] = {"op68": code_ops_of, "op12": legacy_code_ops}


def build(root: Path, n: int, writer: str) -> float:
    field_encoding.code_ops_of = WRITERS[writer]  # type: ignore[assignment]
    try:
        rng = np.random.default_rng(3)
        vecs = datagen.clustered_vectors(n, DIM, n_clusters=max(10, n // 100), seed=1)
        texts = _texts(n, rng)
        t0 = time.perf_counter()
        with chitta.open(root, durability="buffered", embedder=None) as f:
            for lo in range(0, n, BATCH):
                hi = min(n, lo + BATCH)
                f.remember_many(
                    [{"text": t, "embedding": v} for t, v in zip(texts[lo:hi], vecs[lo:hi])]
                )
            f.wait_embedded()
            f.flush()
        return time.perf_counter() - t0
    finally:
        field_encoding.code_ops_of = code_ops_of


def census(root: Path) -> dict[str, int]:
    log = _core.SegmentLog(str(root), instance_id=0, read_only=True)
    try:
        result = log.read_new(commit=False)
    finally:
        log.close()
    out: dict[str, int] = {}

    def add(code: int, nbytes: int) -> None:
        try:
            name = ops.OpType(code).name
        except ValueError:
            name = str(code)
        out[name] = out.get(name, 0) + nbytes

    types = result.op_types
    for i in range(len(result)):
        code = int(types[i])
        if code == int(ops.OpType.Batch):
            inner = _core._unpack_batch(result, i)
            inner_types = inner.op_types
            inner_total = 0
            for j in range(len(inner)):
                size = len(inner.payload(j))
                inner_total += size
                add(int(inner_types[j]), size)
            add(code, len(result.payload(i)) + RECORD_HEAD - inner_total)  # Batch framing
        else:
            add(code, len(result.payload(i)) + RECORD_HEAD)
    return out


def code_op_seconds(root: Path, n: int, writer: str) -> tuple[float, float]:
    """(seconds to make n code ops from winners, the field's encoder at the end of the
    build; seconds to encode and append them to a fresh buffered log), best of 3."""
    with chitta.open(root, read_only=True, embedder=None) as f:
        enc = f.core.encoder_organ.encoder
        x = datagen.clustered_vectors(min(n, 10_000), DIM, n_clusters=100, seed=9)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        feats, acts = winners(x.astype(np.float32), enc.atoms, enc.thresholds, enc.active)
    ids = list(range(1, len(x) + 1))
    best = append = float("inf")
    for round_ in range(3):
        t0 = time.perf_counter()
        made = WRITERS[writer](ids, feats, acts, 1)
        best = min(best, time.perf_counter() - t0)
        log_dir = root.parent / f"append-{writer}-{round_}"
        log = _core.SegmentLog(str(log_dir), instance_id=1, durability="buffered")
        t0 = time.perf_counter()
        for op in made:
            log.append(int(op.op_type), ops.encode(op))
        log.flush()
        append = min(append, time.perf_counter() - t0)
        log.close()
        shutil.rmtree(log_dir)
    return best * n / len(x), append * n / len(x)


CHILD = r"""
import json, sys, time
import chitta
t0, c0 = time.perf_counter(), time.process_time()
f = chitta.open(sys.argv[1], read_only=True, embedder=None, load_checkpoint=False)
print(json.dumps({"open_s": time.perf_counter() - t0, "open_cpu_s": time.process_time() - c0, "n": len(f)}))
"""


def replay(root: Path, opens: int) -> dict[str, float]:
    best: dict[str, float] = {}
    for _ in range(opens):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True, check=True
        )
        r = json.loads(out.stdout)
        for k in ("open_s", "open_cpu_s"):
            best[k] = min(best.get(k, float("inf")), r[k])
    return best


def measure(n: int, writer: str, opens: int, tmp: Path) -> dict[str, Any]:
    root = tmp / f"{writer}-{n}"
    seconds = build(root, n, writer)
    seg = sum(p.stat().st_size for p in (root / "segments").glob("*.seg"))
    row: dict[str, Any] = {
        "n": n,
        "writer": writer,
        "segments_bytes": seg,
        "bytes_per_memory": seg / n,
        "census_per_memory": {k: v / n for k, v in sorted(census(root).items())},
        "write_s": seconds,
        "write_per_s": n / seconds,
        **dict(zip(("code_ops_s", "append_s"), code_op_seconds(root, n, writer))),
        **replay(root, opens),
    }
    shutil.rmtree(root)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000])
    ap.add_argument("--opens", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("CHITTA_BENCH_DIR")) as d:
        for n in args.n:
            for writer in ("op12", "op68"):
                row = measure(n, writer, args.opens, Path(d))
                rows.append(row)
                print(json.dumps(row) if args.json else _line(row), flush=True)
    print(f"load: {os.getloadavg()}")
    for n in args.n:
        old, new = (
            next(r for r in rows if r["n"] == n and r["writer"] == w) for w in ("op12", "op68")
        )
        print(
            f"N={n:,}: log {old['bytes_per_memory']:,.0f} -> {new['bytes_per_memory']:,.0f} B/memory "
            f"({new['bytes_per_memory'] / old['bytes_per_memory']:.3f}x); write "
            f"{new['write_s'] / old['write_s']:.3f}x time; code ops "
            f"{new['code_ops_s'] / old['code_ops_s']:.3f}x; code append "
            f"{new['append_s'] / old['append_s']:.3f}x; replay open "
            f"{new['open_s'] / old['open_s']:.3f}x wall, {new['open_cpu_s'] / old['open_cpu_s']:.3f}x CPU"
        )


def _line(r: dict[str, Any]) -> str:
    census_ = ", ".join(f"{k} {v:,.0f}" for k, v in r["census_per_memory"].items() if v >= 1)
    return (
        f"N={r['n']:,} {r['writer']}: {r['bytes_per_memory']:,.0f} B/memory [{census_}]; "
        f"write {r['write_s']:.1f} s ({r['write_per_s']:,.0f}/s); code ops {r['code_ops_s']:.2f} s; "
        f"code append {r['append_s']:.2f} s; "
        f"open from log {r['open_s']:.2f} s wall, {r['open_cpu_s']:.2f} s CPU"
    )


if __name__ == "__main__":
    main()
