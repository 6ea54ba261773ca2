"""LoCoMo ablation lab: the recall pipeline's pieces, recombined cheaply.

Builds each lane's ranked list once per (conversation, question, variant) from
chitta's own components (``chitta.organs.index.bm25.BM25``, exact cosine over the
cached MiniLM vectors, the posting lane of a real field) and re-fuses them
with weighted RRF the way ``chitta.recall.engine`` does, so one setting costs
milliseconds instead of a field rebuild. The numbers it prints are for
choosing settings; the reported ones come from ``eval_locomo.py`` (the real
``Field.recall``).

Questions are split in two halves by their index within the conversation
(even: "tune", odd: "held-out"); a setting is chosen on "tune" and reported
on "held-out" (and on all).

    CHITTA_EMBEDDER=default python research/locomo_ablate.py [--round N] [--embedder minilm|mpnet|nomic] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys

from locomo_lab import CachedEmbedder, inner_embedder, line, load, score


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--only", default="")
    ap.add_argument(
        "--round",
        default="all",
        help="all (rounds 1-7), 8-12 (locomo_variants2.py), 13-15 (locomo_variants3.py)",
    )
    ap.add_argument(
        "--embedder", default="minilm", help="minilm (the default model), mpnet or nomic"
    )
    ap.add_argument(
        "--ctx", type=int, default=1, help="rounds 11-12: earlier turns in the dense vectors"
    )
    args = ap.parse_args(argv)
    emb = CachedEmbedder(inner_embedder(args.embedder))
    convs = load(emb, limit=args.limit)
    from locomo_variants import bm25_extra, round2, round3, round4, round6, round7, variants
    from locomo_variants2 import round8, round9, round10, round11, round12

    if args.round in ("31", "32", "33", "34", "35", "36", "37", "38", "39", "40"):
        import locomo_variants6 as v6

        rounds = list(getattr(v6, f"round{args.round}")(emb, args.ctx))
        if args.round in ("34", "35"):  # paired differences against the first ranker
            for name, ranker in rounds[1:]:
                d = v6.paired(convs, rounds[0][1], ranker)
                print(
                    name,
                    " ".join(
                        f"{h} {m:+.3f} [{lo:+.3f}, {hi:+.3f}] {w}/{l}"
                        for h, (m, lo, hi, w, l) in d.items()
                    ),
                )
            return 0
        if args.round == "37":  # paired intervals, categories 1-4 and 1, per half
            for name, ranker in rounds[1:]:
                print(f"{name:<44}", v6.paired_cats(convs, rounds[0][1], ranker), flush=True)
            return 0
        if args.round in ("36", "38", "39", "40"):  # categories 1 and 3 per half
            for name, ranker in rounds:
                if not args.only or args.only in name:
                    print(v6.detail(name, score(convs, ranker)), flush=True)
            return 0
    elif args.round in ("23", "24", "25", "26", "27", "28", "29", "30"):
        import locomo_variants5 as v5

        rounds = list(getattr(v5, f"round{args.round}")(emb, args.ctx))
        if args.round in ("27", "30"):  # paired differences against the first ranker
            for name, ranker in rounds[1:]:
                d = v5.paired(convs, rounds[0][1], ranker)
                print(
                    name,
                    " ".join(
                        f"{h} {m:+.3f} [{lo:+.3f}, {hi:+.3f}] {w}/{l}"
                        for h, (m, lo, hi, w, l) in d.items()
                    ),
                )
            return 0
    elif args.round in ("18", "19", "20", "21", "22"):
        import locomo_variants4 as v4

        rounds = list(getattr(v4, f"round{args.round}")(emb, args.ctx))
    elif args.round in ("13", "14", "15", "16", "17"):
        import locomo_variants3 as v3

        rounds = list(getattr(v3, f"round{args.round}")(emb, args.ctx))
    else:
        rounds = (
            [
                *variants(emb),
                *bm25_extra(emb),
                *round2(emb),
                *round3(emb),
                *round4(emb),
                *round6(emb),
                *round7(emb),
            ]
            if args.round == "all"
            else [*round8(emb)]
            if args.round == "8"
            else [*round9(emb)]
            if args.round == "9"
            else [*round10(emb)]
            if args.round == "10"
            else [*round11(emb, args.ctx)]
            if args.round == "11"
            else [*round12(emb, args.ctx)]
        )
    for name, ranker in rounds:
        if args.only and args.only not in name:
            continue
        print(line(name, score(convs, ranker)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
