"""What the vocabulary expansion lane (chitta.recall.expand) costs a hybrid recall, and its vocabulary.

1. Recall: ``bench_recall.py``'s synthetic 100K field (12-word zipf texts over 5,000 words,
   384-d clustered vectors, checkpointed with its HNSW graph), ``recall(text, vector=..., k=10,
   touch=False)`` with convex fusion (alpha 0.55) alone and with the expansion lane (weight 0.2,
   5 words, ``expansion_min_cosine`` -1 so that every query expands: the worst case), in alternating
   blocks. The synthetic field has no model, so its vocabulary (the 5,000 words; their names are
   "w123", which the field's word rule would not admit: ``bench_recall.synthetic_vocabulary``) get
   deterministic random unit vectors: the cost measured is the nearest-word search (the native word
   index, exact up to 8,192 words) plus the second BM25 search, not the model's.
2. The vocabulary's one-time cost with the real MiniLM: collecting and embedding the words of
   the first LoCoMo conversation (what a freshly opened field pays at its first expanding recall).

    python research/locomo_expansion_cost.py [--n 100000] [--queries 300] [--blocks 3] [--json]
        [--word-search native,inline,numpy]   (compare the word search's forms, each against the first row)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_recall import synthetic_vocabulary
from locomo_fusion_cost import field_queries, percentile_rows, print_ab, timed

import chitta
from chitta.recall import expand
from chitta.recall.engine import RecallSettings


class NumpyWords(expand.Vocabulary):
    """The word search before the native word index (expand.py at fc77190): a numpy exact scan up to
    4,096 words, a chitta.organs.index.hnsw.HNSW graph (beam 64) above, run inline."""

    _old_graph: Any = None
    LIMIT = 4096

    def _index_rows(self, start: int) -> None:
        assert self._vecs is not None
        if self._old_graph is not None:
            self._old_graph.add(
                np.arange(start, len(self._words), dtype=np.uint64), self._vecs[start:]
            )
        elif len(self._words) > self.LIMIT:
            from chitta.organs.index.hnsw import HNSW

            self._old_graph = HNSW(int(self._vecs.shape[1]))
            self._old_graph.add(np.arange(len(self._words), dtype=np.uint64), self._vecs)

    def nearest_start(
        self,
        vector: Any,
        m: int,
        min_cosine: float,
        exclude: Any = frozenset(),
        *,
        background: bool = True,
    ) -> Callable[[], list[str]]:
        self.refresh()
        vecs = self._vecs
        assert vecs is not None
        q = np.asarray(vector, np.float32).reshape(-1)
        q = q / float(np.linalg.norm(q))
        want = m + len(exclude)
        if self._old_graph is not None:
            ids, dist = self._old_graph.search(q, min(want, len(self._words)), ef=max(64, want))
            rows = [int(i) for i in np.asarray(ids).reshape(-1)]
            sims = [1.0 - float(d) for d in np.asarray(dist).reshape(-1)]
        else:
            all_sims = vecs @ q
            top = (
                np.argpartition(-all_sims, want - 1)[:want]
                if want < len(all_sims)
                else np.arange(len(all_sims))
            )
            top = top[np.lexsort((top, -all_sims[top]))]
            rows, sims = top.tolist(), all_sims[top].tolist()
        out: list[str] = []
        for r, s in zip(rows, sims):
            if r >= len(self._words) or s < min_cosine:
                continue
            if self._words[r] not in exclude:
                out.append(self._words[r])
                if len(out) == m:
                    break
        return lambda: out


class InlineWords(expand.Vocabulary):
    """The native word index, searched inline (not on the search thread)."""

    def nearest_start(
        self,
        vector: Any,
        m: int,
        min_cosine: float,
        exclude: Any = frozenset(),
        *,
        background: bool = True,
    ) -> Callable[[], list[str]]:
        return super().nearest_start(vector, m, min_cosine, exclude, background=False)


WORD_SEARCH = {"numpy": NumpyWords, "inline": InlineWords, "native": expand.Vocabulary}


def attach(field: chitta.Field, kind: str = "native") -> expand.Vocabulary:
    vocab: expand.Vocabulary = synthetic_vocabulary(WORD_SEARCH[kind])
    field.core.engine.vocabulary = vocab
    return vocab


def vocabulary_cost(console: Console) -> dict[str, float]:
    from eval_locomo import DEFAULT_DATA, turns

    from chitta.encode import default_embedder

    model = default_embedder()
    sample = json.loads(DEFAULT_DATA.read_text())[0]
    texts = [t["text"] for t in turns(sample["conversation"])]
    model.embed(["warm up"])
    t0 = time.perf_counter()
    vocab = expand.Vocabulary(model.embed)
    vocab.add_texts(texts)
    collected = time.perf_counter() - t0
    t1 = time.perf_counter()
    vocab.refresh()
    embedded = time.perf_counter() - t1
    return {
        "turns": len(texts),
        "words": len(vocab),
        "collect_s": collected,
        "embed_s": embedded,
        "words_per_s": len(vocab) / embedded,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--field-dir", type=Path, default=Path("/tmp/chitta-fusion-cost"))
    ap.add_argument("--no-model", action="store_true", help="skip the MiniLM vocabulary timing")
    ap.add_argument(
        "--word-search",
        default="native",
        help="comma list of native (search thread), inline, numpy (before the native index)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    root, qv, qt = field_queries(args, console)
    base = RecallSettings(fusion_alpha=0.55)
    expanding = RecallSettings(
        fusion_alpha=0.55, expansion_weight=0.2, expansion_words=5, expansion_min_cosine=-1.0
    )
    # (settings, word search): "native" searches the words on the search thread beside BM25,
    # "inline" the same index on the calling thread, "numpy" the search before the native index
    variants = {
        "native": "+ expansion 0.2 (5 words, always)",
        "inline": "+ expansion, native words inline",
        "numpy": "+ expansion, numpy words (before)",
    }
    settings = {"convex 0.55": (base, "")}
    settings.update({variants[k]: (expanding, k) for k in args.word_search.split(",")})
    got: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in settings}
    for _ in range(args.blocks):
        for name, (s, kind) in settings.items():
            with chitta.open(root, embedder=None, recall_settings=s) as f:
                if s.expansion_weight:
                    attach(f, kind)
                wall, cpu = timed(f, qv, qt)
            got[name][0].extend(wall)
            got[name][1].extend(cpu)
    rows = percentile_rows(got)
    vocab = None if args.no_model else vocabulary_cost(console)
    out = {
        "n": args.n,
        "queries": args.queries * args.blocks,
        "load": os.getloadavg(),
        "rows": rows,
        "vocabulary": vocab,
    }
    if args.json:
        print(json.dumps(out))
        return 0
    print_ab(console, out)
    if vocab:
        console.print(
            f"vocabulary of one LoCoMo conversation ({vocab['turns']} turns): {vocab['words']} words, "
            f"collected in {vocab['collect_s'] * 1000:.0f} ms, embedded by MiniLM in {vocab['embed_s']:.2f} s "
            f"({vocab['words_per_s']:.0f} words/s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
