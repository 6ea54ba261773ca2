"""Evidence recall on LoCoMo (dev split): R@1/5/10/20/25/50 per category, against the paper's DRAGON.

Method (as in ../shared/data/locomo/README.md): one field per conversation,
each dialogue turn one memory ("Speaker: text", plus the shared image's
caption), dated with its session's date, stored with
``chitta.field.importers.import_conversation`` (the recommended way to import a
dialogue: each turn's vector embeds it with ``--context-turns`` earlier turns
of its session); the question is the query (embedded once, then passed as
``vector=`` with the text to every configuration); the keyword lane also
indexes each turn with ``--keyword-context-turns`` earlier turns
(``meta["recall_context"]``, chitta.recall.context); R@k =
|gold evidence in top k| / |gold|, averaged over questions. Malformed evidence
ids are split and normalised, ids naming no turn dropped, questions left
without gold skipped (both counts printed). Categories 1-4 form "overall";
category 5 (adversarial) is reported separately, and "overall 1-5" (the
paper's overall) includes it. "held-out" = the questions with an odd index in
their conversation: settings were chosen on the even half ("tune",
research/locomo_ablate.py), so only the held-out figures are unbiased; the
halves are reported per category too. A last table compares the hybrid, per
category and k, with the paper's DRAGON figures (benchmarks/locomo_reference.py).

Configurations: each lane alone (bm25, dense, posting) and the full hybrid.
The data is read at run time and never copied into the repository.

    python benchmarks/eval_locomo.py [--data PATH] [--configs hybrid,bm25,dense,posting]
                                     [--limit-conversations N] [--context-turns N]
                                     [--keyword-context-turns N] [--time-prior X] [--cache] [--json]
                                     [--embedder auto|mpnet|nomic|hashing] [--turn-view auto|on|off] [--dense-weight W]
                                     [--fusion-alpha A|rrf] [--pool N] [--expansion W[,M[,TAU]]]
                                     [--dense-query-without-speaker] [--graph-mentions]
                                     [--graph-weight W]
"""

from __future__ import annotations

import argparse
import dataclasses
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
from locomo_reference import DRAGON_TURNS
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

import chitta
from chitta.field.importers import Turn, import_conversation
from chitta.recall.engine import RecallSettings
from chitta.recall.query import dense_query_text

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
)
KS = (1, 5, 10, 20, 25, 50)
CONFIGS = {
    "bm25": ("bm25",),
    "dense": ("dense",),
    "posting": ("posting",),
    "hybrid": None,  # every lane
    "bm25+dense": ("bm25", "dense"),
    "hybrid-no-graph": ("bm25", "dense", "neighbour"),  # the hybrid's weights, graph lane off
    "routed": None,  # every lane, through the query router (Field.recall(route=True))
}
ROUTED = {"routed"}  # the other configs run with route=False: the ablation
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}


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
            out.append(
                {
                    "dia_id": turn["dia_id"],
                    "text": f"{turn['speaker']}: {said}",
                    "speaker": turn["speaker"],
                    "said": said,
                    "at": date,
                    "session": f"session_{n}",
                }
            )
        n += 1
    return out


def build_field(
    root: Path,
    sample: dict[str, Any],
    embedder: Any,
    context_turns: int = 1,
    keyword_context_turns: int = 2,
    settings: RecallSettings | None = None,
    turn_view: bool | None = None,
    write_path: str = "remember",
) -> tuple[chitta.Field, dict[int, str]]:
    field = chitta.open(root, durability="buffered", embedder=embedder, recall_settings=settings)
    items = turns(sample["conversation"])
    if write_path in ("remember", "remember+speaker"):  # as an agent writes: one call a turn
        meta = write_path == "remember+speaker"  # who said it, as the importer records it
        ids = [
            field.remember(
                t["text"],
                session=t["session"],
                at=t["at"],
                meta={"speaker": t["speaker"]} if meta else None,
            )
            for t in items
        ]
        field.wait_embedded()
        return field, {mid: t["dia_id"] for mid, t in zip(ids, items)}
    ids = import_conversation(
        field,
        [
            Turn(t["speaker"], t["said"], t["session"], t["at"], {"dia_id": t["dia_id"]})
            for t in items
        ],
        context_turns=context_turns,
        keyword_context_turns=keyword_context_turns,
        turn_view=turn_view,
    )
    return field, {mid: t["dia_id"] for mid, t in zip(ids, items)}


def evaluate(
    data: list[dict[str, Any]],
    configs: list[str],
    embedder: Any,
    console: Console,
    context_turns: int = 1,
    keyword_context_turns: int = 2,
    settings: RecallSettings | None = None,
    turn_view: bool | None = None,
    write_path: str = "remember",
    touch_ab: bool = False,
) -> dict[str, Any]:
    recall = {
        c: defaultdict(lambda: defaultdict(list)) for c in configs
    }  # config -> category -> k -> values
    latency: dict[str, list[float]] = defaultdict(list)
    skipped = dropped_ids = 0
    with (
        tempfile.TemporaryDirectory() as tmp,
        Progress(console=console, transient=True) as progress,
    ):
        task = progress.add_task("conversations", total=len(data))
        for i, sample in enumerate(data):
            field, dia_of = build_field(
                Path(tmp) / f"conv{i}",
                sample,
                embedder,
                context_turns,
                keyword_context_turns,
                settings,
                turn_view,
                write_path,
            )
            known = set(dia_of.values())
            questions = [qa["question"] for qa in sample["qa"]]
            if (
                field.core.engine.settings.dense_query_without_speaker
            ):  # as Field.recall embeds (helper M)
                questions = [
                    dense_query_text(q, {t["speaker"] for t in turns(sample["conversation"])})
                    for q in questions
                ]
            qvecs = (
                field.core.encoding.embed_query(questions) if field.core.encoding.enabled else None
            )
            for qi, qa in enumerate(sample["qa"]):
                gold, dropped = normalise_evidence(qa.get("evidence", []), known)
                dropped_ids += dropped
                if not gold:
                    skipped += 1
                    continue
                vec = None if qvecs is None else qvecs[qi]
                # the halves: settings were chosen on the even question indices of each
                # conversation (research/locomo_ablate.py); the odd ones are held out
                half = "held" if qi % 2 == 1 else "tune"
                for config in configs:
                    for k in (
                        KS
                    ):  # one recall per k, as a caller asking for k would get (pools grow with k)
                        t0 = time.perf_counter()
                        hits = field.recall(
                            qa["question"],
                            vector=vec,
                            k=k,
                            lanes=CONFIGS[config],
                            touch=False,
                            route=config in ROUTED,
                        )
                        if k == 10:
                            latency[config].append(time.perf_counter() - t0)
                        found = len({dia_of[h.id] for h in hits} & set(gold)) / len(gold)
                        recall[config][qa["category"]][k].append(found)
                        recall[config][f"{half}{qa['category']}"][k].append(found)
            field.close()
            if touch_ab:  # the same questions, in order, k=10, each recall reinforcing its hits
                for config in configs:
                    touched, dia2 = build_field(
                        Path(tmp) / f"conv{i}-{config}-touch",
                        sample,
                        embedder,
                        context_turns,
                        keyword_context_turns,
                        settings,
                        turn_view,
                        write_path,
                    )
                    for qi, qa in enumerate(sample["qa"]):
                        gold, _ = normalise_evidence(qa.get("evidence", []), known)
                        if not gold:
                            continue
                        kwargs = {"k": 10, "lanes": CONFIGS[config], "route": config in ROUTED}
                        hits = touched.recall(qa["question"], touch=True, **kwargs)
                        found = len({dia2[h.id] for h in hits} & set(gold)) / len(gold)
                        recall[config][f"touch{qa['category']}"][10].append(found)
                    touched.close()
            progress.advance(task)
    return {"recall": recall, "latency": latency, "skipped": skipped, "dropped_ids": dropped_ids}


def _row(config: str, label: str, per_k: dict[int, list[float]]) -> dict[str, Any]:
    return {
        "config": config,
        "category": label,
        "n": len(per_k.get(1, [])),
        **{f"R@{k}": float(np.mean(per_k[k])) if per_k.get(k) else float("nan") for k in KS},
    }


def _pooled(per_cat: dict[Any, Any], keys: list[Any]) -> dict[int, list[float]]:
    return {k: [v for key in keys for v in per_cat.get(key, {}).get(k, [])] for k in KS}


def summarise(result: dict[str, Any], configs: list[str]) -> list[dict[str, Any]]:
    """Rows per config: each category, overall 1-4, the held-out half 1-4, overall 1-5 (all questions)."""
    rows = []
    for config in configs:
        per_cat = result["recall"][config]
        for cat in sorted(c for c in per_cat if isinstance(c, int)):
            rows.append(_row(config, f"{cat} {CATEGORY_NAMES[cat]}", per_cat[cat]))
        rows.append(_row(config, "overall 1-4", _pooled(per_cat, [1, 2, 3, 4])))
        rows.append(
            _row(
                config, "held-out half 1-4", _pooled(per_cat, ["held1", "held2", "held3", "held4"])
            )
        )
        rows.append(_row(config, "overall 1-5", _pooled(per_cat, [1, 2, 3, 4, 5])))
        if "touch1" in per_cat:  # --touch: R@10 only, the same questions with touch=True
            touched = _pooled(per_cat, ["touch1", "touch2", "touch3", "touch4"])
            rows.append({**_row(config, "1-4 touch=True", touched), "n": len(touched[10])})
    return rows


def halves(result: dict[str, Any], configs: list[str]) -> list[dict[str, Any]]:
    """Rows per config and category (and 1-4 pooled): the tune half and the held-out half."""
    rows = []
    for config in configs:
        per_cat = result["recall"][config]
        cats = sorted(c for c in per_cat if isinstance(c, int))
        for label, keys in [
            *[(f"{c} {CATEGORY_NAMES[c]}", [c]) for c in cats],
            ("1-4", [1, 2, 3, 4]),
        ]:
            for half in ("tune", "held"):
                row = _row(config, label, _pooled(per_cat, [f"{half}{c}" for c in keys]))
                rows.append({**row, "half": "held-out" if half == "held" else half})
    return rows


def against_dragon(result: dict[str, Any], config: str = "hybrid") -> list[dict[str, Any]]:
    """The config's R@k per category (all questions and the held-out half) beside DRAGON's, for the paper's k."""
    per_cat = result["recall"].get(config)
    if per_cat is None:
        return []
    rows = []
    for cat in (1, 2, 3, 4, 5, "overall"):
        keys = [1, 2, 3, 4, 5] if cat == "overall" else [cat]
        every = _pooled(per_cat, keys)
        held = _pooled(per_cat, [f"held{c}" for c in keys])
        if not every[1]:
            continue
        for k, paper in sorted(DRAGON_TURNS.items()):
            ours, ours_held = (
                float(np.mean(every[k])),
                float(np.mean(held[k])) if held[k] else float("nan"),
            )
            rows.append(
                {
                    "category": "overall 1-5"
                    if cat == "overall"
                    else f"{cat} {CATEGORY_NAMES[cat]}",
                    "k": k,
                    "dragon": paper[cat],
                    "all": ours,
                    "held_out": ours_held,
                    "margin": ours - paper[cat],
                    "above": ours > paper[cat],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--configs", default="hybrid,bm25,dense,posting")
    ap.add_argument(
        "--reranker",
        choices=("scorer", "seed004"),
        default="scorer",
        help="RecallSettings.reranker: chitta's scorer, or seed 004's composite over 3x keyword "
        "candidates (chitta/recall/seed_rerank.py)",
    )
    ap.add_argument("--limit-conversations", type=int, default=None)
    ap.add_argument(
        "--embedder",
        default="auto",
        help="auto (the default model), mpnet (chitta[mpnet]), nomic (chitta[nomic]) or hashing",
    )
    ap.add_argument(
        "--context-turns", type=int, default=1, help="earlier turns embedded with each turn"
    )
    ap.add_argument(
        "--keyword-context-turns",
        type=int,
        default=2,
        help="earlier turns the keyword lane indexes with each turn",
    )
    ap.add_argument(
        "--time-prior",
        type=float,
        default=None,
        help="RecallSettings.time_prior for this run (default: the library's; 0 turns it off)",
    )
    ap.add_argument(
        "--turn-view",
        choices=("auto", "on", "off"),
        default="auto",
        help="import_conversation(turn_view=...): each vector sums the turn-with-context and turn-alone "
        "views (auto: the embedder's preference)",
    )
    ap.add_argument(
        "--dense-weight",
        type=float,
        default=None,
        help="RecallSettings lane weight of the dense lane for this run (default: the library's)",
    )
    ap.add_argument(
        "--fusion-alpha",
        default=None,
        help="RecallSettings.fusion_alpha for this run: a number in [0, 1] (convex score fusion, "
        "chitta.recall.convex) or 'rrf' (weighted RRF); default: the library's",
    )
    ap.add_argument(
        "--pool",
        type=int,
        default=None,
        help="RecallSettings.pool for this run: candidates asked of each lane, max(pool, 5 k)",
    )
    ap.add_argument(
        "--expansion",
        default=None,
        help="vocabulary expansion (chitta.recall.expand, helper M): "
        "W[,M[,TAU]] = expansion_weight, expansion_words, expansion_min_cosine; 0: off",
    )
    ap.add_argument(
        "--dense-query-without-speaker",
        action="store_true",
        help="RecallSettings.dense_query_without_speaker for this run (chitta.recall.query.without_speaker)",
    )
    ap.add_argument(
        "--cache",
        action="store_true",
        help="cache vectors on disk (benchmarks/locomo_cache.py, /tmp)",
    )
    ap.add_argument(
        "--write-path",
        default="remember,importer",
        help="remember (one Field.remember(text, session=, at=) per turn, as an agent writes: "
        "the default, first), remember+speaker (also meta={'speaker': ...}) and/or importer "
        "(import_conversation); each config is reported as CONFIG/PATH",
    )
    ap.add_argument(
        "--graph-mentions",
        action="store_true",
        help="the graph lane links memories to the capitalised names in them (co-occurrence)",
    )
    ap.add_argument("--graph-weight", type=float, default=None, help="the graph lane's RRF weight")
    ap.add_argument(
        "--touch",
        action="store_true",
        help="also ask every question in order with touch=True (recall(k=10)) on a field of "
        "its own per config: '1-4 touch=True' beside the touch=False rows (issue 17 item 2)",
    )
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
    if (
        any(
            v is not None
            for v in (
                args.time_prior,
                args.dense_weight,
                args.fusion_alpha,
                args.pool,
                args.expansion,
            )
        )
        or args.dense_query_without_speaker
        or args.graph_mentions
        or args.graph_weight is not None
        or args.reranker != "scorer"
    ):
        from chitta.recall.presets import settings_for

        base = settings_for(None if isinstance(embedder, str) else embedder)
        weights = dict(base.lane_weights)
        if args.dense_weight is not None:
            weights["dense"] = args.dense_weight
        if args.graph_weight is not None:
            weights["graph"] = args.graph_weight
        alpha = (
            base.fusion_alpha
            if args.fusion_alpha is None
            else (None if args.fusion_alpha == "rrf" else float(args.fusion_alpha))
        )
        exp = [float(x) for x in args.expansion.split(",")] if args.expansion is not None else []
        settings = dataclasses.replace(
            base,
            lane_weights=weights,
            fusion_alpha=alpha,
            time_prior=base.time_prior if args.time_prior is None else args.time_prior,
            pool=base.pool if args.pool is None else args.pool,
            expansion_weight=exp[0] if exp else base.expansion_weight,
            expansion_words=int(exp[1]) if len(exp) > 1 else base.expansion_words,
            expansion_min_cosine=exp[2] if len(exp) > 2 else base.expansion_min_cosine,
            dense_query_without_speaker=args.dense_query_without_speaker
            or base.dense_query_without_speaker,
            graph_mentions=args.graph_mentions,
            reranker=args.reranker,
        )
    paths = [p.strip() for p in args.write_path.split(",") if p.strip()]
    if not paths or set(paths) - {"remember", "remember+speaker", "importer"}:
        console.print("--write-path takes remember, remember+speaker and/or importer")
        return 2
    result: dict[str, Any] = {"recall": {}, "latency": {}, "skipped": 0, "dropped_ids": 0}
    for path in paths:
        one = evaluate(
            data,
            configs,
            embedder,
            console,
            args.context_turns,
            args.keyword_context_turns,
            settings,
            {"auto": None, "on": True, "off": False}[args.turn_view],
            path,
            args.touch,
        )
        for c in configs:
            result["recall"][f"{c}/{path}"] = one["recall"][c]
            result["latency"][f"{c}/{path}"] = one["latency"][c]
        result["skipped"], result["dropped_ids"] = one["skipped"], one["dropped_ids"]
    names = [f"{c}/{p}" for p in paths for c in configs]
    rows = summarise(result, names)
    half_rows = halves(result, names)
    dragon = against_dragon(result, f"hybrid/{paths[0]}") if "hybrid" in configs else []
    if args.json:
        print(
            json.dumps(
                {
                    "rows": rows,
                    "halves": half_rows,
                    "against_dragon": dragon,
                    "skipped": result["skipped"],
                    "dropped_ids": result["dropped_ids"],
                }
            )
        )
        return 0
    table = Table(title="LoCoMo dev evidence recall (all questions)", title_justify="left")
    for col in ("config", "category", "n", *[f"R@{k}" for k in KS], "p50 ms"):
        table.add_column(col)
    for row in rows:  # p50: recall(k=10) with a pre-embedded query
        lat = result["latency"][row["config"]]
        table.add_row(
            row["config"],
            row["category"],
            str(row["n"]),
            *[f"{row[f'R@{k}']:.3f}" for k in KS],
            f"{np.median(lat) * 1000:.2f}" if row["category"] == "overall 1-4" else "",
        )
    console.print(table)
    table = Table(
        title="The halves: tune (settings chosen here) and held-out", title_justify="left"
    )
    for col in ("config", "category", "half", "n", *[f"R@{k}" for k in KS]):
        table.add_column(col)
    for row in half_rows:
        table.add_row(
            row["config"],
            row["category"],
            row["half"],
            str(row["n"]),
            *[f"{row[f'R@{k}']:.3f}" for k in KS],
        )
    console.print(table)
    if dragon:
        table = Table(
            title="hybrid against the paper's DRAGON (ACL 2024 Table 3, dialogue turns, 10 conversations)",
            title_justify="left",
        )
        for col in ("category", "k", "DRAGON", "chitta all", "chitta held-out", "margin"):
            table.add_column(col)
        for row in dragon:
            mark = "[green]" if row["above"] else "[red]"
            table.add_row(
                row["category"],
                str(row["k"]),
                f"{row['dragon']:.3f}",
                f"{row['all']:.3f}",
                f"{row['held_out']:.3f}",
                f"{mark}{row['margin']:+.3f}",
            )
        console.print(table)
        below = [f"{r['category']} @{r['k']}" for r in dragon if not r["above"]]
        console.print(
            "every category above DRAGON at every k"
            if not below
            else f"below DRAGON: {', '.join(below)}"
        )
    console.print(
        f"questions skipped (no gold after normalising): {result['skipped']}; "
        f"evidence ids dropped: {result['dropped_ids']}; took {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
