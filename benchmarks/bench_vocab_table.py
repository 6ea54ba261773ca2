"""What the expansion lane's word table costs and saves (chitta/field/vocab.py, vocab.emb).

With the real MiniLM (``default_embedder()``) and one LoCoMo conversation
(``/work/shared/data/locomo/locomo-dev.json``, ~420 turns):

1. write throughput with the lane off and on (words embedded at write time):
   ``remember_many`` in batches of ``--batch`` turns, and ``remember`` one turn at a time;
2. open time of the written field (after ``Field.checkpoint()``): expansion off, on with the
   table in the checkpoint, and on with a checkpoint without it (state 4: built at open);
3. the first recall after that open: with the table, and as before this change (the
   table built inside the first recall: open's embedding skipped, the words left pending);
4. the sidecar's size.

    python benchmarks/bench_vocab_table.py [--json] [--conversations 1]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_locomo import DEFAULT_DATA, turns

import chitta
from chitta.field.checkpoint import format as fmt
from chitta.recall.engine import RecallSettings

ON = RecallSettings(fusion_alpha=0.55, expansion_weight=0.2)
OFF = RecallSettings(fusion_alpha=0.55)
QUERY = "What activities does Melanie partake in?"


def load_texts(conversations: int) -> list[str]:
    samples = json.loads(DEFAULT_DATA.read_text())[:conversations]
    return [t["text"] for s in samples for t in turns(s["conversation"])]


def write_rate(
    root: Path, texts: list[str], model: Any, settings: RecallSettings, batch: int
) -> dict[str, float]:
    out: dict[str, float] = {}
    with chitta.open(
        root / "many", durability="buffered", embedder=model, recall_settings=settings
    ) as f:
        t0 = time.perf_counter()
        for lo in range(0, len(texts), batch):
            f.remember_many(texts[lo : lo + batch])
        out["remember_many_per_s"] = len(texts) / (time.perf_counter() - t0)
        vocab = f.core.engine.vocabulary
        out["words"] = float(len(vocab)) if vocab is not None else 0.0
    with chitta.open(
        root / "one", durability="buffered", embedder=model, recall_settings=settings
    ) as f:
        t0 = time.perf_counter()
        for t in texts:
            f.remember(t)
        out["remember_per_s"] = len(texts) / (time.perf_counter() - t0)
        f.checkpoint()
    return out


def strip_table(root: Path) -> None:
    """Rewrite the live checkpoint as a version-4 one: no word table."""
    live = root / "checkpoint" / (root / "checkpoint" / "CURRENT").read_text().strip()
    _version, state = fmt.read_state(live / "state")
    state.pop("vocabulary", None)
    state["sidecars"].pop("vocab.emb", None)
    (live / "vocab.emb").unlink(missing_ok=True)
    payload = msgspec.msgpack.encode(state)
    fmt._write_atomic_file(
        live / "state", [struct.pack("<8sIIQ", b"CHITSTAT", 4, 0, len(payload)), payload]
    )


def open_and_recall(
    root: Path, model: Any, settings: RecallSettings, *, old: bool = False
) -> tuple[float, float]:
    """(open seconds, first recall seconds); ``old``: the words are embedded inside the first
    recall (as before this change) instead of at open."""
    from chitta.field import vocab

    saved = vocab.sync_words
    if old:
        vocab.sync_words = lambda core, **kw: 0  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        f = chitta.open(root, embedder=model, recall_settings=settings)
        opened = time.perf_counter() - t0
    finally:
        vocab.sync_words = saved
    with f:
        t0 = time.perf_counter()
        f.recall(QUERY, k=10, touch=False)
        return opened, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--conversations", type=int, default=1)
    ap.add_argument("--batch", type=int, default=32, help="turns per remember_many call")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from chitta.encode import default_embedder

    console = Console(stderr=args.json)
    model = default_embedder()
    model.embed(["warm up"])
    texts = load_texts(args.conversations)
    res: dict[str, Any] = {
        "turns": len(texts),
        "embedder": model.name,
        "load_before": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        with console.status("writing (expansion off, then on)"):
            res["write_off"] = write_rate(Path(tmp) / "off", texts, model, OFF, args.batch)
            res["write_on"] = write_rate(Path(tmp) / "on", texts, model, ON, args.batch)
        on = Path(tmp) / "on" / "one"
        ckpt = on / "checkpoint" / (on / "checkpoint" / "CURRENT").read_text().strip()
        res["sidecar_bytes"] = (ckpt / "vocab.emb").stat().st_size
        res["words"] = res["write_on"]["words"]
        with console.status("reopening"):
            open_and_recall(on, model, ON)  # page cache warm
            res["open_off"] = open_and_recall(on, model, OFF)
            res["open_table"] = open_and_recall(on, model, ON)
            strip_table(on)
            res["open_old"] = open_and_recall(
                on, model, ON, old=True
            )  # before: built in the first recall
            res["open_no_table"] = open_and_recall(
                on, model, ON
            )  # now: built at open (then saved by a checkpoint)
    res["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    t = Table(
        title=f"expansion word table, {res['turns']} LoCoMo turns, {model.name}, {res['words']:.0f} words"
    )
    t.add_column("measure")
    t.add_column("value", justify="right")
    for key in ("remember_many_per_s", "remember_per_s"):
        off, on_ = res["write_off"][key], res["write_on"][key]
        t.add_row(f"{key}: off / on (ratio)", f"{off:.1f} / {on_:.1f} ({on_ / off:.2f})")
    for key, label in (
        ("open_off", "expansion off"),
        ("open_table", "on, table in the checkpoint"),
        ("open_no_table", "on, no table (built at open)"),
        ("open_old", "on, no table, as before (built in the first recall)"),
    ):
        t.add_row(
            f"open / first recall ms: {label}", f"{res[key][0] * 1e3:.0f} / {res[key][1] * 1e3:.1f}"
        )
    t.add_row("vocab.emb bytes", f"{res['sidecar_bytes']:,}")
    t.add_row("load before / after", f"{res['load_before'][0]:.2f} / {res['load_after'][0]:.2f}")
    console.print(t)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
