"""LoCoMo quality lab (issue 17 items 1-2): the plain ``remember(session=, at=)`` path through the
real ``Field.recall``, variants of the recall settings side by side on the same fields, per
category, per conversation and per half, and access reinforcement (``touch``) on and off over the
same question sequence.

    python research/locomo_quality.py [--variants base,NAME,...] [--touch] [--write-path remember]

A variant is a function of the field's settings (``VARIANTS``); every variant recalls from the
same fields (built once per conversation), with ``touch=False``, so variants do not see each
other. ``--touch``: for each conversation a second field is built and every question is asked in
order with ``touch=True`` (as an agent would), R@k read from those same recalls.
Research code, not shipped (research/README.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from eval_locomo import CATEGORY_NAMES, DEFAULT_DATA, build_field, normalise_evidence
from locomo_cache import CachedEmbedder
from locomo_reference import DRAGON_TURNS

from chitta.encode import default_embedder
from chitta.recall.engine import RecallSettings

KS = (5, 10, 25)
# a variant maps the field's engine to the one to recall with (a copy: RecallEngine._copy)
Variant = Callable[[Any], Any]
LATENCY_MS: list[float] = []  # per Field.recall call of the variant being asked
VARIANTS: dict[str, Variant] = {"base": lambda e: e}


def settings(fn: Callable[[RecallSettings], RecallSettings]) -> Variant:
    """A variant that changes only the recall settings."""
    return lambda e: e._copy(fn(e.settings))


def variant(name: str) -> Callable[[Variant], Variant]:
    def put(fn: Variant) -> Variant:
        VARIANTS[name] = fn
        return fn

    return put


def _questions(sample: dict[str, Any], dia_of: dict[int, str]) -> list[dict[str, Any]]:
    known = set(dia_of.values())
    out = []
    for qi, qa in enumerate(sample["qa"]):
        if qa["category"] == 5:
            continue
        gold, _ = normalise_evidence(qa.get("evidence", []), known)
        if gold:
            out.append({"q": qa["question"], "cat": qa["category"], "gold": set(gold), "qi": qi})
    return out


def _ask(
    field: Any,
    qs: list[dict[str, Any]],
    dia_of: dict[int, str],
    touch: bool,
    route: bool,
    ks: tuple[int, ...] = KS,
) -> list[dict[int, float]]:
    out = []
    for q in qs:
        row = {}
        for k in ks:
            t0 = time.perf_counter()
            hits = field.recall(q["q"], k=k, touch=touch, route=route)
            LATENCY_MS.append((time.perf_counter() - t0) * 1000)
            row[k] = len({dia_of[h.id] for h in hits} & q["gold"]) / len(q["gold"])
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="base")
    ap.add_argument("--touch", action="store_true")
    ap.add_argument("--write-path", default="remember")
    ap.add_argument("--no-route", action="store_true")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--touch-top", default=None, help="touch only: N (top N hits) or fF (score >= F x top)"
    )
    args = ap.parse_args(argv)
    sys.modules.setdefault("locomo_quality", sys.modules[__name__])
    import locomo_variants_q  # noqa: F401  (registers the variants)
    import locomo_variants_r  # noqa: F401
    import locomo_variants_s  # noqa: F401

    data = json.loads(DEFAULT_DATA.read_text())[: args.limit]
    if args.touch_top:
        import chitta.field.recall as fr

        plain = fr._touch
        rule = args.touch_top

        def picked(core: Any, hits: list[Any]) -> None:
            if rule.startswith("f"):
                top = hits[0].score if hits else 0.0
                hits = [h for h in hits if h.score >= float(rule[1:]) * top]
            else:
                hits = hits[: int(rule)]
            plain(core, hits)

        fr._touch = picked
    emb = CachedEmbedder(default_embedder())
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    route = not args.no_route
    # result[name][conv] = list of (cat, {k: r}) per question
    result: dict[str, dict[int, list[tuple[int, dict[int, float]]]]] = defaultdict(dict)
    latency: dict[str, list[float]] = defaultdict(list)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for ci, sample in enumerate(data):
            field, dia_of = build_field(
                Path(tmp) / f"c{ci}", sample, emb, write_path=args.write_path
            )
            qs = _questions(sample, dia_of)
            base = field.core.engine
            for name in names:
                field.core.engine = VARIANTS[name](base)
                LATENCY_MS.clear()
                rows = _ask(field, qs, dia_of, touch=False, route=route)
                latency[name].extend(LATENCY_MS)
                result[name][ci] = [(q["cat"], r) for q, r in zip(qs, rows)]
                result[name + "@tune"][ci] = [
                    (q["cat"], r) for q, r in zip(qs, rows) if q["qi"] % 2 == 0
                ]
                result[name + "@held"][ci] = [
                    (q["cat"], r) for q, r in zip(qs, rows) if q["qi"] % 2 == 1
                ]
            field.core.engine = base
            field.close()
            if args.touch:
                for name in names:
                    f2, d2 = build_field(
                        Path(tmp) / f"t{ci}{name}", sample, emb, write_path=args.write_path
                    )
                    f2.core.engine = VARIANTS[name](f2.core.engine)
                    rows = _ask(f2, qs, d2, touch=True, route=route, ks=(10,))
                    result[f"{name}+touch"][ci] = [(q["cat"], r) for q, r in zip(qs, rows)]
                    f2.close()
            print(f"conversation {ci} done at {time.time() - t0:.0f} s", file=sys.stderr)
    report(result)
    for name in names:
        ms = np.array(latency[name])
        print(f"{name}: recall p50 {np.median(ms):.2f} ms, p90 {np.percentile(ms, 90):.2f} ms")
    if args.json:
        args.json.write_text(
            json.dumps({n: {str(c): v for c, v in d.items()} for n, d in result.items()})
        )
    return 0


def _mean(rows: list[tuple[int, dict[int, float]]], k: int, cats: set[int]) -> float:
    vals = [r[k] for c, r in rows if c in cats and k in r]
    return float(np.mean(vals)) if vals else float("nan")


def report(result: dict[str, dict[int, list[tuple[int, dict[int, float]]]]]) -> None:
    names = list(result)
    base = names[0]
    print(
        f"{'variant':<28} {'R@10 1-4':>8} "
        + " ".join(f"{CATEGORY_NAMES[c][:6]:>6}@{k:<2}" for c in (1, 2, 3, 4) for k in KS)
        + "  per-conv d@10"
    )
    for name in names:
        convs = result[name]
        every = [r for c in sorted(convs) for r in convs[c]]
        line = f"{name:<28} {_mean(every, 10, {1, 2, 3, 4}):>8.3f} "
        line += " ".join(f"{_mean(every, k, {c}):>9.3f}" for c in (1, 2, 3, 4) for k in KS)
        if name != base and base in result:
            deltas = [
                _mean(convs[c], 10, {1, 2, 3, 4}) - _mean(result[base][c], 10, {1, 2, 3, 4})
                for c in sorted(convs)
            ]
            line += "  " + " ".join(f"{d:+.3f}" for d in deltas)
        print(line)
    below = []
    for name in names:
        every = [r for c in sorted(result[name]) for r in result[name][c]]
        for c in (1, 2, 3, 4):
            for k, paper in DRAGON_TURNS.items():
                if k in KS and _mean(every, k, {c}) <= paper[c]:
                    below.append(f"{name}:{CATEGORY_NAMES[c]}@{k}")
    print("below DRAGON:", ", ".join(below) or "none")


if __name__ == "__main__":
    sys.exit(main())
