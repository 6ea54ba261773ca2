"""Rounds 31-40 of the LoCoMo ablation (``locomo_ablate.py --round 31``): pass 8 levers for
multi-hop (category 1) and open-domain (category 3) questions on the convex-fusion pipeline.

Every ranker starts from the adopted pipeline of the named embedder (pass 6: convex score
fusion of the keyword lane, over the turn with 2 earlier turns, own text 3x, query
processing, stemming, and the dense lane, MiniLM alpha 0.55 / nomic 0.3; speaker prior
x1.3, time prior x2, 0.02 cosine tiebreak) and adds one lever:

- (31) semantic keyword expansion from the field's own vocabulary: each distinct field word
  embedded once; the query's content words (or the whole query vector) pick their nearest
  field words, which form a second keyword query whose BM25 score joins the convex sum with
  weight ``beta``;
- (32) session-level evidence: a session scores by its best candidates; its turns gain from it
  and (optionally) the turns of the strongest sessions enter the candidates;
- (33) the dense query without the named speaker's name;
- (35, 37) paired bootstrap intervals of expansion settings against the reference (37: categories
  1-4 and multi-hop alone, per half); (36) the expansion grid, categories 1 and 3 per half;
- (38) new candidates from the expansion, or re-scoring only (the library's form), pool 50;
- (39) per-word expansion from the field's own word table only (no word search at recall);
- (40) the expansion with the name-free dense query of round 33.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from locomo_lab import Conv, ctx_vectors
from locomo_variants2 import kw_search
from locomo_variants3 import speaker_prior
from locomo_variants4 import time_prior
from locomo_variants5 import adopted_settings, paired  # noqa: F401  (paired: used by locomo_ablate --round 34)

from chitta.organs.index.bm25 import tokenize
from chitta.recall.query import QUERY_STOPWORDS, keyword_query, named_speaker

Ranker = Callable[[Conv, int], list[int]]
Expand = Callable[[Conv, int, Any], str]


def _alpha(emb: Any) -> float:
    a = getattr(emb, "recall_fusion_alpha", None)
    return 0.55 if a is None else float(a)


def vocab(c: Conv, emb: Any) -> tuple[list[str], np.ndarray]:
    """The field's distinct words (alphabetic, > 2 letters, not function words) and their vectors."""
    key = ("vocab6",)
    if key not in c.bm25:
        words = sorted(
            {
                t
                for text in c.texts
                for t in tokenize(text, stopwords=False)
                if t not in QUERY_STOPWORDS and t.isalpha() and len(t) > 2
            }
        )
        c.bm25[key] = (words, emb.embed(words))  # type: ignore[assignment]
    return c.bm25[key]  # type: ignore[return-value]


def per_word(tau: float, m: int, drop_names: bool = True) -> Expand:
    """For each content word of the query, the ``m`` field words nearest to it (cosine >= tau)."""

    def f(c: Conv, qi: int, emb: Any) -> str:
        q = keyword_query(c.questions[qi]["q"])
        names = (
            {w for s in {t["speaker"] for t in c.items} for w in tokenize(s, stopwords=False)}
            if drop_names
            else set()
        )
        terms = [t for t in q.split() if t.isalpha() and t not in names and len(t) > 2]
        if not terms:
            return ""
        words, wv = vocab(c, emb)
        sims = emb.embed(terms) @ wv.T
        out: list[str] = []
        for t, row in zip(terms, sims):
            top = [words[j] for j in np.argsort(-row)[: m + 3] if words[j] != t and row[j] >= tau]
            out += top[:m]
        return " ".join(out)

    return f


def whole_query(tau: float, m: int) -> Expand:
    """The ``m`` field words nearest to the query's own vector (cosine >= tau), not in the query."""

    def f(c: Conv, qi: int, emb: Any) -> str:
        words, wv = vocab(c, emb)
        qset = set(tokenize(c.questions[qi]["q"], stopwords=False))
        row = wv @ c.qvecs[qi]
        top = [
            words[j] for j in np.argsort(-row)[: m + 10] if words[j] not in qset and row[j] >= tau
        ]
        return " ".join(top[:m])

    return f


def cx(
    emb: Any,
    *,
    alpha: float | None = None,
    expand: Expand | None = None,
    beta: float = 0.0,
    with_query: bool = False,
    sess: float = 0.0,
    sess_top: int = 1,
    sess_in: int = 0,
    pool: int = 100,
    strip_name: bool = False,
    new: bool = True,
) -> Ranker:
    """The convex pipeline with the optional levers (module docstring)."""
    ctx, _wd = adopted_settings(emb)
    a = _alpha(emb) if alpha is None else alpha

    def r(c: Conv, qi: int) -> list[int]:
        vecs = ctx_vectors(c, emb, ctx)
        q = c.questions[qi]["q"]
        qv = c.qvecs[qi]
        if strip_name:
            who = named_speaker(q, {t["speaker"] for t in c.items})
            if who is not None:
                qv = emb.embed_query(
                    [" ".join(w for w in q.split() if who.lower() not in w.lower())]
                )[0]
        ids, sc = kw_search(c, keyword_query(q), n=pool)
        sims = vecs @ qv
        dense = [int(i) for i in np.argsort(-sims, kind="stable")[:pool]]
        extra: dict[int, float] = {}
        if expand is not None and beta:
            words = expand(c, qi, emb)
            if words:
                eq = f"{keyword_query(q)} {words}" if with_query else words
                eids, esc = kw_search(c, eq, n=pool)
                if esc and max(esc) > 0:
                    extra = {i: s / max(esc) for i, s in zip(eids, esc)}
        union = (
            list(dict.fromkeys([*ids, *dense, *extra]))
            if new
            else list(dict.fromkeys([*ids, *dense]))
        )
        bm = dict(zip(ids, sc))
        top = max(sc) if sc else 1.0
        cu = sims[union]
        lo, hi = float(cu.min()), float(cu.max())
        score = {
            i: a * bm.get(i, 0.0) / top
            + (1 - a) * (float(sims[i]) - lo) / max(hi - lo, 1e-9)
            + beta * extra.get(i, 0.0)
            for i in union
        }
        if sess:
            by: dict[str, list[float]] = {}
            for i, s in score.items():
                by.setdefault(c.items[i]["session"], []).append(s)
            ss = {k: sum(sorted(v, reverse=True)[:sess_top]) for k, v in by.items()}
            best = max(ss.values())
            if sess_in:
                strong = set(sorted(ss, key=lambda k: -ss[k])[:sess_in])
                for i, t in enumerate(c.items):
                    if t["session"] in strong and i not in score:
                        score[i] = (1 - a) * max(0.0, (float(sims[i]) - lo) / max(hi - lo, 1e-9))
            score = {
                i: s + sess * ss.get(c.items[i]["session"], 0.0) / best for i, s in score.items()
            }
        fused = time_prior(c, qi, speaker_prior(c, qi, score))
        fin = {i: s + 0.02 * max(0.0, float(vecs[i] @ c.qvecs[qi])) for i, s in fused.items()}
        return sorted(fin, key=lambda i: (-fin[i], i))[:20]

    return r


def round31(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R31 reference (convex, adopted)", cx(emb)
    for tau, m in ((0.5, 3), (0.6, 3), (0.5, 5)):
        for beta in (0.1, 0.2, 0.3):
            yield (
                f"R31 per-word expansion tau={tau} m={m} beta={beta}",
                cx(emb, expand=per_word(tau, m), beta=beta),
            )
    for tau, m in ((0.3, 5), (0.3, 10), (0.2, 10)):
        for beta in (0.1, 0.2, 0.3):
            yield (
                f"R31 whole-query expansion tau={tau} m={m} beta={beta}",
                cx(emb, expand=whole_query(tau, m), beta=beta),
            )
    yield (
        "R31 per-word tau=0.5 m=3 beta=0.2 +query",
        cx(emb, expand=per_word(0.5, 3), beta=0.2, with_query=True),
    )


def round32(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R32 reference (convex, adopted)", cx(emb)
    for s in (0.05, 0.1, 0.2):
        for top in (1, 3):
            yield f"R32 session score top {top} x{s}", cx(emb, sess=s, sess_top=top)
    for s, n in ((0.1, 2), (0.1, 4), (0.2, 3)):
        yield (
            f"R32 session score top 3 x{s}, turns of the best {n} sessions in",
            cx(emb, sess=s, sess_top=3, sess_in=n),
        )


def round33(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R33 reference (convex, adopted)", cx(emb)
    yield "R33 dense query without the named speaker", cx(emb, strip_name=True)


def round34(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R34 reference (convex, adopted)", cx(emb)


def round35(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """Paired intervals (``--round 35``) of the expansion settings against the reference."""
    yield "R35 reference (convex, adopted)", cx(emb)
    for tau, m, beta in (
        (0.3, 5, 0.2),
        (0.3, 5, 0.15),
        (0.3, 7, 0.2),
        (0.25, 7, 0.2),
        (0.3, 5, 0.25),
    ):
        yield (
            f"R35 whole-query expansion tau={tau} m={m} beta={beta}",
            cx(emb, expand=whole_query(tau, m), beta=beta),
        )
    yield "R35 per-word expansion tau=0.5 m=3 beta=0.2", cx(emb, expand=per_word(0.5, 3), beta=0.2)


def detail(name: str, r: dict[str, Any]) -> str:
    """Multi-hop (1) and open-domain (3) per half, R@5 / R@10 / R@20; 1-4 R@10 per half; c5 R@10."""

    def cat(c: Any) -> str:
        return " ".join(
            f"{h[0]}{r[h][c][5]:.3f}/{r[h][c][10]:.3f}/{r[h][c][20]:.3f}"
            for h in ("tune", "held", "both")
        )

    return (
        f"{name:<52} c1 {cat(1)} | c3 {cat(3)} | 1-4 t{r['tune']['all'][10]:.3f} h{r['held']['all'][10]:.3f} "
        f"a{r['both']['all'][10]:.3f} | c2 {r['both'][2][10]:.3f} c4 {r['both'][4][10]:.3f} c5 {r['both'][5][10]:.3f}"
    )


def no_names(inner: Expand) -> Expand:
    """``inner``'s words without the field's speakers' names."""

    def f(c: Conv, qi: int, emb: Any) -> str:
        names = {w for s in {t["speaker"] for t in c.items} for w in tokenize(s, stopwords=False)}
        return " ".join(w for w in inner(c, qi, emb).split() if w not in names)

    return f


def round36(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """Printed with :func:`detail` (``--round 36``): the expansion grid per half for categories 1 and 3."""
    yield "R36 reference (convex, adopted)", cx(emb)
    for tau in (0.25, 0.3, 0.35):
        for m in (5, 8):
            for beta in (0.15, 0.2, 0.3):
                yield (
                    f"R36 whole-query tau={tau} m={m} beta={beta}",
                    cx(emb, expand=whole_query(tau, m), beta=beta),
                )
    yield (
        "R36 whole-query tau=0.3 m=5 beta=0.2 no names",
        cx(emb, expand=no_names(whole_query(0.3, 5)), beta=0.2),
    )
    yield (
        "R36 whole-query tau=0.3 m=5 beta=0.2 +query",
        cx(emb, expand=whole_query(0.3, 5), beta=0.2, with_query=True),
    )
    yield "R36 per-word tau=0.5 m=3 beta=0.2", cx(emb, expand=per_word(0.5, 3), beta=0.2)
    yield "R36 per-word tau=0.5 m=3 beta=0.3", cx(emb, expand=per_word(0.5, 3), beta=0.3)


def paired_cats(convs: list[Conv], a: Ranker, b: Ranker, seed: int = 0) -> str:
    """Paired R@10 differences b - a with bootstrap 95% intervals: categories 1-4 and 1 alone, per half."""
    diff: dict[tuple[str, str], list[float]] = {}
    for c in convs:
        for qi, q in enumerate(c.questions):
            if q["cat"] == 5:
                continue
            ra, rb = (len(set(r(c, qi)[:10]) & q["gold"]) / len(q["gold"]) for r in (a, b))
            for grp in ("1-4", "c1") if q["cat"] == 1 else ("1-4",):
                diff.setdefault((grp, q["half"]), []).append(rb - ra)
    rng = np.random.default_rng(seed)
    out = []
    for (grp, h), d in sorted(diff.items()):
        arr = np.array(d)
        boots = [arr[rng.integers(0, len(arr), len(arr))].mean() for _ in range(2000)]
        out.append(
            f"{grp} {h} {arr.mean():+.3f} [{np.percentile(boots, 2.5):+.3f}, {np.percentile(boots, 97.5):+.3f}]"
            f" {(arr > 0).sum()}/{(arr < 0).sum()}"
        )
    return " | ".join(out)


def round37(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """``--round 37``: paired intervals (1-4 and multi-hop, per half) of the expansion grid."""
    yield "R37 reference (convex, adopted)", cx(emb)
    for tau in (0.25, 0.3, 0.35):
        for m in (5, 8):
            for beta in (0.15, 0.2, 0.3):
                yield (
                    f"R37 whole-query tau={tau} m={m} beta={beta}",
                    cx(emb, expand=whole_query(tau, m), beta=beta),
                )


def round38(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """``--round 38``: where the expansion's gain comes from: new candidates, or re-scoring the others."""
    yield "R38 reference (convex, adopted)", cx(emb)
    for tau, m, beta in ((0.3, 5, 0.2), (0.25, 5, 0.2), (0.25, 5, 0.3)):
        yield (
            f"R38 whole-query tau={tau} m={m} beta={beta}",
            cx(emb, expand=whole_query(tau, m), beta=beta),
        )
        yield (
            "R38 same, re-scoring only (no new candidates)",
            cx(emb, expand=whole_query(tau, m), beta=beta, new=False),
        )
        yield "R38 same, pool 50", cx(emb, expand=whole_query(tau, m), beta=beta, pool=50)


def per_word_known(tau: float, m: int) -> Expand:
    """:func:`per_word` with only the query words the field itself uses (their vectors from the field's
    word table: no embedding at query time), each expanded by its ``m`` nearest field words."""

    def f(c: Conv, qi: int, emb: Any) -> str:
        words, wv = vocab(c, emb)
        row = {w: i for i, w in enumerate(words)}
        q = keyword_query(c.questions[qi]["q"])
        names = {w for s in {t["speaker"] for t in c.items} for w in tokenize(s, stopwords=False)}
        terms = [t for t in q.split() if t in row and t not in names]
        out: list[str] = []
        for t in terms:
            sims = wv @ wv[row[t]]
            top = [words[j] for j in np.argsort(-sims)[: m + 1] if words[j] != t and sims[j] >= tau]
            out += top[:m]
        return " ".join(out)

    return f


def round39(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """``--round 39``: per-word expansion from the field's own word table only (no query-time model call)."""
    yield "R39 reference (convex, adopted)", cx(emb)
    yield (
        "R39 whole-query tau=0.3 m=5 beta=0.2 (adopted form)",
        cx(emb, expand=whole_query(0.3, 5), beta=0.2, new=False),
    )
    for tau, m, beta in ((0.5, 3, 0.2), (0.5, 3, 0.3), (0.4, 3, 0.2), (0.5, 5, 0.2), (0.6, 3, 0.2)):
        yield (
            f"R39 per known word tau={tau} m={m} beta={beta}",
            cx(emb, expand=per_word_known(tau, m), beta=beta, new=False),
        )
    yield (
        "R39 per word (embedded) tau=0.5 m=3 beta=0.2",
        cx(emb, expand=per_word(0.5, 3), beta=0.2, new=False),
    )


def round40(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """``--round 40``: the expansion with the name-free dense query of round 33."""
    yield "R40 reference (convex, adopted)", cx(emb)
    yield (
        "R40 expansion 0.2 / 5 / 0.3 (adopted form)",
        cx(emb, expand=whole_query(0.3, 5), beta=0.2, new=False),
    )
    yield (
        "R40 same + dense query without the named speaker",
        cx(emb, expand=whole_query(0.3, 5), beta=0.2, new=False, strip_name=True),
    )
