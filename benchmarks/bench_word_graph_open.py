"""Open time of a field whose expansion word table is above the exact limit, with and
without the word graph saved in its checkpoint (``vocab.hnsw``, docs/FORMAT.md section 8).

For each size: a field whose texts hold ``words`` distinct made-up words (8 per memory) is
written with an embedder that gives every text a fixed random unit 384-d row (the cost
measured is the graph's, not a model's), checkpointed, then opened

- with the saved graph (the default now; median of ``--opens`` opens),
- without it (the checkpoint's graph record and file removed: what every open did before
  this change, and what an open of an earlier state-5 checkpoint does: the graph is built),

and the first expanding recall after each open is timed. Sidecar sizes are reported.

    python benchmarks/bench_word_graph_open.py [--sizes 10000,20000,40000] [--opens 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt
from chitta.recall.engine import RecallSettings

SETTINGS = RecallSettings(fusion_alpha=0.55, expansion_weight=0.2)
DIM = 384
PER_TEXT = 8
QUERY = "what did they talk about at the lake"


class RandomRows:
    """An embedder of fixed random unit rows: one per distinct text (seeded by its CRC)."""

    name = "random-rows-384@bench"
    dim = DIM
    family = "bench"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), DIM), np.float32)
        for i, t in enumerate(texts):
            out[i] = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIM)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def made_up_words(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    cons, vows = list("bcdfghjklmnprstvz"), list("aeiou")
    seen: set[str] = set()
    while len(seen) < n:
        c = rng.choice(cons, (n, 4))
        v = rng.choice(vows, (n, 4))
        for row_c, row_v in zip(c, v):
            seen.add("".join(a + b for a, b in zip(row_c, row_v)))
            if len(seen) == n:
                break
    return sorted(seen)


def write_field(path: Path, words: int) -> dict[str, float]:
    vocab = made_up_words(words)
    texts = [" ".join(vocab[i : i + PER_TEXT]) for i in range(0, len(vocab), PER_TEXT)]
    t0 = time.perf_counter()
    with chitta.open(
        path, durability="buffered", embedder=RandomRows(), recall_settings=SETTINGS
    ) as f:
        for lo in range(0, len(texts), 500):
            f.remember_many(texts[lo : lo + 500])
        wrote = time.perf_counter() - t0
        t0 = time.perf_counter()
        f.checkpoint()
        n = len(f.core.engine.vocabulary)
    return {"table_words": float(n), "write_s": wrote, "checkpoint_s": time.perf_counter() - t0}


def live(path: Path) -> Path:
    return path / "checkpoint" / (path / "checkpoint" / "CURRENT").read_text().strip()


def drop_graph(path: Path) -> None:
    ckpt = live(path)
    _version, state = fmt.read_state(ckpt / "state")
    state["vocabulary"].pop("graph_rows", None)
    state["sidecars"].pop("vocab.hnsw", None)
    fmt.write_state(ckpt / "state", state)
    (ckpt / "vocab.hnsw").unlink(missing_ok=True)


def open_and_recall(path: Path) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        t0 = time.perf_counter()
        f = chitta.open(path, embedder=RandomRows(), recall_settings=SETTINGS)
        opened = time.perf_counter() - t0
    with f:
        t0 = time.perf_counter()
        f.recall(QUERY, k=10, touch=False)
        return opened, time.perf_counter() - t0


def run(sizes: list[int], opens: int, progress: Progress) -> list[dict[str, Any]]:
    rows = []
    task = progress.add_task("sizes", total=len(sizes))
    for words in sizes:
        with tempfile.TemporaryDirectory(prefix="wgraph-") as tmp:
            path = Path(tmp) / "f"
            progress.update(task, description=f"{words:,} words: writing")
            row: dict[str, Any] = {"words": words, **write_field(path, words)}
            ckpt = live(path)
            row["vocab_emb_bytes"] = (ckpt / "vocab.emb").stat().st_size
            row["vocab_hnsw_bytes"] = (ckpt / "vocab.hnsw").stat().st_size
            progress.update(task, description=f"{words:,} words: opens with the graph")
            with_graph = [open_and_recall(path) for _ in range(opens)]
            row["open_s_saved_graph"] = statistics.median(o for o, _ in with_graph)
            row["first_recall_ms_saved_graph"] = 1e3 * statistics.median(r for _, r in with_graph)
            drop_graph(path)
            progress.update(task, description=f"{words:,} words: open building the graph")
            opened, first = open_and_recall(
                path
            )  # this open's field has no checkpoint graph to reuse
            row["open_s_built_graph"] = opened
            row["first_recall_ms_built_graph"] = 1e3 * first
        rows.append(row)
        progress.advance(task)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--sizes", default="10000,20000,40000", help="table words per field, comma separated"
    )
    ap.add_argument("--opens", type=int, default=3, help="opens with the saved graph (median)")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with Progress(console=Console(file=sys.stderr), transient=True) as progress:
        rows = run(sizes, args.opens, progress)
    if args.json:
        print(json.dumps({"dim": DIM, "rows": rows}))
        return 0
    table = Table(title=f"open of a field with a large word table (random unit {DIM}-d rows)")
    for col in (
        "table words",
        "open s, saved graph",
        "open s, graph built",
        "first recall ms, saved / built",
        "vocab.emb MB",
        "vocab.hnsw MB",
        "checkpoint s",
    ):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            f"{int(r['table_words']):,}",
            f"{r['open_s_saved_graph']:.2f}",
            f"{r['open_s_built_graph']:.2f}",
            f"{r['first_recall_ms_saved_graph']:.1f} / {r['first_recall_ms_built_graph']:.1f}",
            f"{r['vocab_emb_bytes'] / 1e6:.1f}",
            f"{r['vocab_hnsw_bytes'] / 1e6:.1f}",
            f"{r['checkpoint_s']:.2f}",
        )
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
