"""Evidence recall on LoCoMo (dev split): R@1/5/10/20 per category.

Method (as in ../shared/data/locomo/README.md): one field per conversation,
each dialogue turn one memory ("Speaker: text", plus the shared image's
caption), dated with its session's date, stored with
``chitta.importers.import_conversation`` (the recommended way to import a
dialogue: each turn's vector embeds it with ``--context-turns`` earlier turns
of its session); the question is the query (embedded once, then passed as
``vector=`` with the text to every configuration); the keyword lane also
indexes each turn with ``--keyword-context-turns`` earlier turns
(``meta["recall_context"]``, chitta.recall.context); R@k =
|gold evidence in top k| / |gold|, averaged over questions. Malformed evidence
ids are split and normalised, ids naming no turn dropped, questions left
without gold skipped (both counts printed). Categories 1-4 form "overall";
category 5 (adversarial) is reported separately. "held-out half" = the
questions with an odd index in their conversation: settings were chosen on
the even half (benchmarks/locomo_ablate.py), so only this row is unbiased.

Configurations: each lane alone (bm25, dense, posting) and the full hybrid.
The data is read at run time and never copied into the repository.

    python benchmarks/eval_locomo.py [--data PATH] [--configs hybrid,bm25,dense,posting]
                                     [--limit-conversations N] [--context-turns N]
                                     [--keyword-context-turns N] [--time-prior X] [--cache] [--json]
                                     [--embedder auto|mpnet|nomic|hashing] [--turn-view auto|on|off] [--dense-weight W]
                                     [--fusion-alpha A|rrf]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import chitta
from chitta.importers import Turn, import_conversation
from chitta.recall.engine import RecallSettings
from chitta.recall.query import dense_query_text

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
KS = (1, 5, 10, 20)
CONFIGS = {
    "bm25": ("bm25",),
    "dense": ("dense",),
    "posting": ("posting",),
    "hybrid": None,  # every lane
    "bm25+dense": ("bm25", "dense"),
}
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def normalise_evidence(raw: list[str], known: set[str]) -> tuple[list[str], int]:
    """Split malformed entries ('D8:6; D9:17', space-joined, 'D:11:26', 'D30:05'); drop unknown ids."""
    out: list[str] = []
    dropped = 0
    for entry in raw:
        for part in re.split(r"[;,\s]+", str(entry)):
            if not part:
                continue
            m = re.fullmatch(r"D:?(\d+):(\d+)", part)
            if not m:
                dropped += 1
                continue
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia in known:
                if dia not in out:
                    out.append(dia)
            else:
                dropped += 1
    return out, dropped


def turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    n = 1
    while f"session_{n}" in conversation:
        date = parse_session_date(conversation[f"session_{n}_date_time"])
        for turn in conversation[f"session_{n}"]:
            said = turn["text"]
            if turn.get("blip_caption"):
                said += f" (shares a photo: {turn['blip_caption']})"
            out.append({"dia_id": turn["dia_id"], "text": f"{turn['speaker']}: {said}", "speaker": turn["speaker"],
                        "said": said, "at": date, "session": f"session_{n}"})
        n += 1
    return out


def build_field(
    root: Path, sample: dict[str, Any], embedder: Any, context_turns: int = 1, keyword_context_turns: int = 2,
    settings: RecallSettings | None = None, turn_view: bool | None = None,
) -> tuple[chitta.Field, dict[int, str]]:
    field = chitta.open(root, durability="buffered", embedder=embedder, recall_settings=settings)
    items = turns(sample["conversation"])
    ids = import_conversation(
        field,
        [Turn(t["speaker"], t["said"], t["session"], t["at"], {"dia_id": t["dia_id"]}) for t in items],
        context_turns=context_turns,
        keyword_context_turns=keyword_context_turns,
        turn_view=turn_view,
    )
    return field, {mid: t["dia_id"] for mid, t in zip(ids, items)}


def evaluate(
    data: list[dict[str, Any]], configs: list[str], embedder: Any, console: Console, context_turns: int = 1,
    keyword_context_turns: int = 2, settings: RecallSettings | None = None, turn_view: bool | None = None,
) -> dict[str, Any]:
    recall = {c: defaultdict(lambda: defaultdict(list)) for c in configs}  # config -> category -> k -> values
    latency: dict[str, list[float]] = defaultdict(list)
    skipped = dropped_ids = 0
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console, transient=True) as progress:
        task = progress.add_task("conversations", total=len(data))
        for i, sample in enumerate(data):
            field, dia_of = build_field(Path(tmp) / f"conv{i}", sample, embedder, context_turns, keyword_context_turns,
                                        settings, turn_view)
            known = set(dia_of.values())
            questions = [qa["question"] for qa in sample["qa"]]
            if settings is not None and settings.dense_query_without_speaker:  # as Field.recall embeds (helper M)
                questions = [dense_query_text(q, {t["speaker"] for t in turns(sample["conversation"])}) for q in questions]
            qvecs = field._encoding.embed_query(questions) if field._encoding.enabled else None
            for qi, qa in enumerate(sample["qa"]):
                gold, dropped = normalise_evidence(qa.get("evidence", []), known)
                dropped_ids += dropped
                if not gold:
                    skipped += 1
                    continue
                for config in configs:
                    t0 = time.perf_counter()
                    vec = None if qvecs is None else qvecs[qi]
                    hits = field.recall(qa["question"], vector=vec, k=max(KS), lanes=CONFIGS[config], touch=False)
                    latency[config].append(time.perf_counter() - t0)
                    got = [dia_of[h.id] for h in hits]
                    for k in KS:
                        found = len(set(got[:k]) & set(gold))
                        recall[config][qa["category"]][k].append(found / len(gold))
                        # the held-out half: odd question index within the conversation (settings were
                        # chosen on the even half with benchmarks/locomo_ablate.py)
                        if qi % 2 == 1:
                            recall[config][f"held{qa['category']}"][k].append(found / len(gold))
            field.close()
            progress.advance(task)
    return {"recall": recall, "latency": latency, "skipped": skipped, "dropped_ids": dropped_ids}


def summarise(result: dict[str, Any], configs: list[str]) -> list[dict[str, Any]]:
    rows = []
    for config in configs:
        per_cat = result["recall"][config]
        for cat in sorted(c for c in per_cat if isinstance(c, int)):
            rows.append({"config": config, "category": f"{cat} {CATEGORY_NAMES[cat]}", "n": len(per_cat[cat][1]),
                         **{f"R@{k}": float(np.mean(per_cat[cat][k])) for k in KS}})
        overall = {k: [v for cat in (1, 2, 3, 4) for v in per_cat.get(cat, {}).get(k, [])] for k in KS}
        rows.append({"config": config, "category": "overall 1-4", "n": len(overall[1]),
                     **{f"R@{k}": float(np.mean(overall[k])) for k in KS}})
        held = {k: [v for cat in (1, 2, 3, 4) for v in per_cat.get(f"held{cat}", {}).get(k, [])] for k in KS}
        rows.append({"config": config, "category": "held-out half 1-4", "n": len(held[1]),
                     **{f"R@{k}": float(np.mean(held[k])) for k in KS}})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--configs", default="hybrid,bm25,dense,posting")
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument("--embedder", default="auto", help="auto (the default model), mpnet (chitta[mpnet]), nomic (chitta[nomic]) or hashing")
    ap.add_argument("--context-turns", type=int, default=1, help="earlier turns embedded with each turn")
    ap.add_argument("--keyword-context-turns", type=int, default=2, help="earlier turns the keyword lane indexes with each turn")
    ap.add_argument("--time-prior", type=float, default=None,
                    help="RecallSettings.time_prior for this run (default: the library's; 0 turns it off)")
    ap.add_argument("--turn-view", choices=("auto", "on", "off"), default="auto",
                    help="import_conversation(turn_view=...): each vector sums the turn-with-context and turn-alone "
                         "views (auto: the embedder's preference)")
    ap.add_argument("--dense-weight", type=float, default=None,
                    help="RecallSettings lane weight of the dense lane for this run (default: the library's)")
    ap.add_argument("--fusion-alpha", default=None,
                    help="RecallSettings.fusion_alpha for this run: a number in [0, 1] (convex score fusion, "
                         "chitta.recall.convex) or 'rrf' (weighted RRF); default: the library's")
    ap.add_argument("--expansion", default=None, help="vocabulary expansion (chitta.recall.expand, helper M): "
                    "W[,M[,TAU]] = expansion_weight, expansion_words, expansion_min_cosine; 0: off")
    ap.add_argument("--cache", action="store_true", help="cache vectors on disk (benchmarks/locomo_cache.py, /tmp)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    if not args.data.exists():
        console.print(f"LoCoMo data not found at {args.data}")
        return 2
    data = json.loads(args.data.read_text())
    if args.limit_conversations:
        data = data[: args.limit_conversations]
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    embedder: Any = "auto"
    if args.embedder == "hashing":
        from chitta.encode import HashingEmbedder

        embedder = HashingEmbedder()
    elif args.embedder == "mpnet":
        from chitta.encode import MpnetEmbedder

        embedder = MpnetEmbedder()
    elif args.embedder == "nomic":
        from chitta.encode import NomicEmbedder

        embedder = NomicEmbedder()
    if args.cache:
        from locomo_cache import CachedEmbedder

        from chitta.encode import default_embedder

        embedder = CachedEmbedder(default_embedder() if args.embedder == "auto" else embedder)
    t0 = time.perf_counter()
    settings = None
    if args.time_prior is not None or args.dense_weight is not None or args.fusion_alpha is not None \
            or args.expansion is not None:
        from chitta.recall.presets import settings_for

        base = settings_for(None if isinstance(embedder, str) else embedder)
        weights = dict(base.lane_weights)
        if args.dense_weight is not None:
            weights["dense"] = args.dense_weight
        alpha = base.fusion_alpha if args.fusion_alpha is None else (
            None if args.fusion_alpha == "rrf" else float(args.fusion_alpha))
        exp = [float(x) for x in args.expansion.split(",")] if args.expansion is not None else []
        settings = RecallSettings(lane_weights=weights, fusion_alpha=alpha,
                                  time_prior=base.time_prior if args.time_prior is None else args.time_prior,
                                  expansion_weight=exp[0] if exp else base.expansion_weight,
                                  expansion_words=int(exp[1]) if len(exp) > 1 else base.expansion_words,
                                  expansion_min_cosine=exp[2] if len(exp) > 2 else base.expansion_min_cosine)
    result = evaluate(data, configs, embedder, console, args.context_turns, args.keyword_context_turns, settings,
                      {"auto": None, "on": True, "off": False}[args.turn_view])
    rows = summarise(result, configs)
    if args.json:
        print(json.dumps({"rows": rows, "skipped": result["skipped"], "dropped_ids": result["dropped_ids"]}))
        return 0
    table = Table(title="LoCoMo dev evidence recall", title_justify="left")
    for col in ("config", "category", "n", *[f"R@{k}" for k in KS], "p50 ms"):
        table.add_column(col)
    for row in rows:  # p50: recall with a pre-embedded query
        lat = result["latency"][row["config"]]
        table.add_row(row["config"], row["category"], str(row["n"]), *[f"{row[f'R@{k}']:.3f}" for k in KS],
                      f"{np.median(lat) * 1000:.2f}" if row["category"].startswith("overall") else "")
    console.print(table)
    console.print(f"questions skipped (no gold after normalising): {result['skipped']}; "
                  f"evidence ids dropped: {result['dropped_ids']}; took {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
