"""LoCoMo pass 8: the vocabulary expansion lane (chitta.recall.expand) in the real ``Field.recall``.

Runs ``eval_locomo.evaluate`` (hybrid config, the embedder's adopted settings) once per
expansion setting and prints, per category and half (tune = even question index, held-out =
odd), R@5 / R@10 / R@20 against the paper's DRAGON figures, then paired bootstrap intervals
of R@10 against the first setting (categories 1-4 and multi-hop alone, per half).

    CHITTA_EMBEDDER=default python research/locomo_expansion.py --cache [--embedder nomic]
        [--settings 0 0.2,5,0.3 ...] [--json]

A setting is ``W[,M[,TAU[,S]]]``: expansion_weight, expansion_words, expansion_min_cosine, and S = 1 for
dense_query_without_speaker (the dense query without the named speaker).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from eval_locomo import DEFAULT_DATA, evaluate, normalise_evidence, turns

from chitta.recall.presets import settings_for

# Maharana et al. 2024 (ACL, Table 3), DRAGON over dialog turns, 10 conversations: R@5 / R@10
DRAGON = {
    1: (0.354, 0.466),
    2: (0.704, 0.773),
    3: (0.331, 0.408),
    4: (0.680, 0.777),
    5: (0.439, 0.547),
}
NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 20)


def parse(spec: str, base: Any) -> Any:
    parts = [float(x) for x in spec.split(",")]
    return dataclasses.replace(
        base,
        expansion_weight=parts[0],
        expansion_words=int(parts[1]) if len(parts) > 1 else base.expansion_words,
        expansion_min_cosine=parts[2] if len(parts) > 2 else base.expansion_min_cosine,
        dense_query_without_speaker=len(parts) > 3 and parts[3] == 1,
    )


def per_question(
    result: dict[str, Any], data: list[dict[str, Any]]
) -> dict[int, dict[str, dict[int, list[float]]]]:
    """category -> half -> k -> values, from evaluate's 'all' and 'held' lists (same question order)."""
    rec = result["recall"]["hybrid"]
    out: dict[int, dict[str, dict[int, list[float]]]] = {}
    for cat in (1, 2, 3, 4, 5):
        every = {k: list(rec[cat][k]) for k in KS}
        held_n = len(rec[f"held{cat}"][10])
        # evaluate appends a question to 'all' and, when its index is odd, to 'held': rebuild the split
        halves: dict[str, dict[int, list[float]]] = {
            "tune": {k: [] for k in KS},
            "held": {k: [] for k in KS},
        }
        pos = 0
        for sample in data:
            known = {t["dia_id"] for t in turns(sample["conversation"])}
            for qi, qa in enumerate(sample["qa"]):
                if (
                    qa["category"] != cat
                    or not normalise_evidence(qa.get("evidence", []), known)[0]
                ):
                    continue
                for k in KS:
                    halves["held" if qi % 2 else "tune"][k].append(every[k][pos])
                pos += 1
        assert pos == len(every[10]) and len(halves["held"][10]) == held_n, (cat, pos, held_n)
        out[cat] = halves
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default="auto", help="auto (the default model) or nomic")
    ap.add_argument("--settings", nargs="+", default=["0", "0.2,5,0.3"])
    ap.add_argument("--cache", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    data = json.loads(DEFAULT_DATA.read_text())
    from locomo_cache import CachedEmbedder

    if args.embedder == "nomic":
        from chitta.encode import NomicEmbedder

        inner: Any = NomicEmbedder()
    else:
        from chitta.encode import default_embedder

        inner = default_embedder()
    embedder = CachedEmbedder(inner) if args.cache else inner
    base = settings_for(embedder)
    runs = {}
    for spec in args.settings:
        console.print(f"[dim]{spec} ...[/dim]")
        runs[spec] = per_question(
            evaluate(data, ["hybrid"], embedder, console, settings=parse(spec, base)), data
        )
    rows = []
    for spec, cats in runs.items():
        for cat in (1, 2, 3, 4, 5, "1-4"):
            src = [cats[c] for c in ((1, 2, 3, 4) if cat == "1-4" else (cat,))]
            for half in ("tune", "held", "all"):
                vals = {
                    k: [
                        v
                        for s in src
                        for h in (("tune", "held") if half == "all" else (half,))
                        for v in s[h][k]
                    ]
                    for k in KS
                }
                rows.append(
                    {
                        "setting": spec,
                        "category": cat,
                        "half": half,
                        "n": len(vals[10]),
                        **{f"R@{k}": float(np.mean(vals[k])) for k in KS},
                    }
                )
    paired = []
    first = args.settings[0]
    rng = np.random.default_rng(0)
    for spec in args.settings[1:]:
        for grp in ("1-4", 1, 3):
            for half in ("tune", "held"):
                cats = (1, 2, 3, 4) if grp == "1-4" else (grp,)
                a = np.array([v for c in cats for v in runs[first][c][half][10]])
                b = np.array([v for c in cats for v in runs[spec][c][half][10]])
                d = b - a
                boots = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(2000)]
                paired.append(
                    {
                        "setting": spec,
                        "group": grp,
                        "half": half,
                        "diff": float(d.mean()),
                        "lo": float(np.percentile(boots, 2.5)),
                        "hi": float(np.percentile(boots, 97.5)),
                        "wins": int((d > 0).sum()),
                        "losses": int((d < 0).sum()),
                    }
                )
    if args.json:
        print(json.dumps({"rows": rows, "paired": paired}))
        return 0
    table = Table(
        title=f"LoCoMo dev, hybrid ({embedder.name}): R@5 / R@10 / R@20 (DRAGON R@5 / R@10)"
    )
    for col in ("setting", "category", "half", "n", "R@5", "R@10", "R@20", "DRAGON"):
        table.add_column(col)
    for r in rows:
        cat = r["category"]
        dragon = f"{DRAGON[cat][0]:.3f} / {DRAGON[cat][1]:.3f}" if isinstance(cat, int) else ""
        name = f"{cat} {NAMES[cat]}" if isinstance(cat, int) else str(cat)
        table.add_row(
            r["setting"], name, r["half"], str(r["n"]), *(f"{r[f'R@{k}']:.3f}" for k in KS), dragon
        )
    console.print(table)
    for p in paired:
        console.print(
            f"{p['setting']} vs {first}: {p['group']} {p['half']} R@10 {p['diff']:+.3f} "
            f"[{p['lo']:+.3f}, {p['hi']:+.3f}] {p['wins']}/{p['losses']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
