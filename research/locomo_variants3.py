"""Rounds 13-17 of the LoCoMo ablation (``locomo_ablate.py --round 13``): pass 4 levers.

Every ranker starts from the pipeline adopted in pass 3 (keyword lane over the
turn with 2 earlier turns, own text 3x, query processing, stemming; dense lane
over the turn with ``ctx`` earlier turns, weight 0.5; RRF k 20; speaker prior
x1.3; 0.02 cosine tiebreak) and adds one lever:

- session-neighbour smoothing: a turn also scores by its best neighbour turn
  in the same session (fused scores, or the dense lane's cosines);
- a time prior: dates the query names (``chitta.recall.timeq``) favour the
  memories whose event time falls in them;
- a multi-vector query: the query's content-word phrases embedded one by one;
- (round 16) a "when" answer-type prior; (round 17) a keyword lane expanded with
  the field words whose word vectors are nearest to the query's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from locomo_lab import Conv, ctx_vectors, dense_rank
from locomo_variants2 import finish, fuse_scores, kw_search

from chitta.organs.index.bm25 import tokenize
from chitta.recall.query import QUERY_STOPWORDS, keyword_query, named_speaker

Ranker = Callable[[Conv, int], list[int]]
POOL = 100


def speaker_prior(c: Conv, qi: int, fused: dict[int, float], lam: float = 0.3) -> dict[int, float]:
    who = named_speaker(c.questions[qi]["q"], {t["speaker"] for t in c.items})
    if who is None or not lam:
        return fused
    return {i: s * (1 + lam) if c.items[i]["speaker"] == who else s for i, s in fused.items()}


def base_fused(
    c: Conv, qi: int, emb: Any, wd: float = 0.5, ctx: int = 1, dense: list[int] | None = None
) -> dict[int, float]:
    q = keyword_query(c.questions[qi]["q"])
    vecs = ctx_vectors(c, emb, ctx)
    lists = {
        "bm25": kw_search(c, q)[0],
        "dense": dense if dense is not None else dense_rank(vecs, c.qvecs[qi]),
    }
    return fuse_scores(lists, {"bm25": 1.0, "dense": wd})


def reference(emb: Any, ctx: int = 1) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        return finish(
            c,
            qi,
            speaker_prior(c, qi, base_fused(c, qi, emb, ctx=ctx)),
            vecs=ctx_vectors(c, emb, ctx),
        )

    return r


# --- session-neighbour smoothing ------------------------------------------------------------------


def _neighbours(c: Conv, i: int, before: int, after: int) -> list[int]:
    s = c.items[i]["session"]
    return [
        j
        for j in range(i - before, i + after + 1)
        if j != i and 0 <= j < len(c.items) and c.items[j]["session"] == s
    ]


def smooth_fused(
    emb: Any,
    beta: float,
    before: int,
    after: int,
    ctx: int = 1,
    add_new: bool = True,
    prior_first: bool = True,
) -> Ranker:
    """s'(i) = s(i) + beta * max_j s(j) over the turns ``before`` earlier / ``after`` later in its session."""

    def r(c: Conv, qi: int) -> list[int]:
        fused = base_fused(c, qi, emb, ctx=ctx)
        if prior_first:
            fused = speaker_prior(c, qi, fused)
        cand = set(fused)
        if add_new:
            for i in list(fused):
                cand.update(
                    _neighbours(c, i, after, before)
                )  # i lends to j when j's window holds i
        out = {}
        for i in cand:
            best = max((fused.get(j, 0.0) for j in _neighbours(c, i, before, after)), default=0.0)
            out[i] = fused.get(i, 0.0) + beta * best
        if not prior_first:
            out = speaker_prior(c, qi, out)
        return finish(c, qi, out, vecs=ctx_vectors(c, emb, ctx))

    return r


def smooth_dense(emb: Any, beta: float, before: int, after: int, ctx: int = 1) -> Ranker:
    """The dense lane ranks by cos(i) + beta * max cos(neighbour) instead of cos(i)."""

    def r(c: Conv, qi: int) -> list[int]:
        vecs = ctx_vectors(c, emb, ctx)
        sims = vecs @ c.qvecs[qi]
        sm = sims.copy()
        for i in range(len(c.items)):
            nb = _neighbours(c, i, before, after)
            if nb:
                sm[i] += beta * float(sims[nb].max())
        dl = [int(i) for i in np.argsort(-sm, kind="stable")[:POOL]]
        return finish(
            c, qi, speaker_prior(c, qi, base_fused(c, qi, emb, ctx=ctx, dense=dl)), vecs=vecs
        )

    return r


# --- time prior -----------------------------------------------------------------------------------


def time_prior(emb: Any, lam: float, slack_days: float, ctx: int = 1) -> Ranker:
    from chitta.recall.timeq import query_times

    def r(c: Conv, qi: int) -> list[int]:
        fused = speaker_prior(c, qi, base_fused(c, qi, emb, ctx=ctx))
        when = query_times(c.questions[qi]["q"])
        if when is not None:
            ms = {i: int(c.items[i]["at"].timestamp() * 1000) for i in fused}
            fused = {
                i: s * (1 + lam) if when.contains(ms[i], slack_days=slack_days) else s
                for i, s in fused.items()
            }
        return finish(c, qi, fused, vecs=ctx_vectors(c, emb, ctx))

    return r


# --- multi-vector query ----------------------------------------------------------------------------


def phrases(question: str) -> list[str]:
    """Runs of consecutive content words of the question (function words split them)."""
    out, run = [], []
    for t in tokenize(question, stopwords=False):
        if t in QUERY_STOPWORDS:
            if run:
                out.append(" ".join(run))
            run = []
        else:
            run.append(t)
    if run:
        out.append(" ".join(run))
    return out


def multi_vector(emb: Any, w_each: float, mode: str, ctx: int = 1) -> Ranker:
    """mode 'lanes': one dense lane per phrase (total weight w_each * n); 'max': one lane ranking by the
    max of the whole query's and the phrases' cosines; 'mean': by the mean query+phrase vector."""

    def r(c: Conv, qi: int) -> list[int]:
        vecs = ctx_vectors(c, emb, ctx)
        ph = phrases(c.questions[qi]["q"])
        if len(ph) < 2:
            return reference(emb, ctx)(c, qi)
        pv = emb.embed(ph)
        q = keyword_query(c.questions[qi]["q"])
        lists = {"bm25": kw_search(c, q)[0], "dense": dense_rank(vecs, c.qvecs[qi])}
        w = {"bm25": 1.0, "dense": 0.5}
        if mode == "lanes":
            for j, v in enumerate(pv):
                lists[f"p{j}"] = dense_rank(vecs, v)
                w[f"p{j}"] = w_each
        elif mode == "max":
            sims = np.maximum(vecs @ c.qvecs[qi], (vecs @ pv.T).max(axis=1))
            lists["pmax"] = [int(i) for i in np.argsort(-sims, kind="stable")[:POOL]]
            w["pmax"] = w_each
        else:
            m = c.qvecs[qi] + pv.sum(axis=0)
            lists["pmean"] = dense_rank(vecs, m / np.linalg.norm(m))
            w["pmean"] = w_each
        return finish(c, qi, speaker_prior(c, qi, fuse_scores(lists, w)), vecs=vecs)

    return r


def round13(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R13 reference (pass 3 adopted, ctx={ctx})", reference(emb, ctx)
    for beta in (0.1, 0.2, 0.3, 0.5):
        for before, after in ((1, 1), (1, 0), (0, 1), (2, 2)):
            yield (
                f"R13 smooth fused b={beta} before={before} after={after}",
                smooth_fused(emb, beta, before, after, ctx),
            )
    for beta in (0.1, 0.2, 0.3):
        for before, after in ((1, 1), (1, 0), (0, 1)):
            yield (
                f"R13 smooth dense b={beta} before={before} after={after}",
                smooth_dense(emb, beta, before, after, ctx),
            )


def round14(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R14 reference (ctx={ctx})", reference(emb, ctx)
    for lam in (0.1, 0.2, 0.3, 0.5, 1.0):
        for slack in (0, 7, 14, 31):
            yield f"R14 time prior x(1+{lam}) slack={slack}d", time_prior(emb, lam, slack, ctx)


def round15(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R15 reference (ctx={ctx})", reference(emb, ctx)
    for w in (0.1, 0.2, 0.3):
        yield f"R15 multi-vector lanes w={w} each", multi_vector(emb, w, "lanes", ctx)
    for w in (0.25, 0.5):
        yield f"R15 multi-vector max lane w={w}", multi_vector(emb, w, "max", ctx)
        yield f"R15 multi-vector mean lane w={w}", multi_vector(emb, w, "mean", ctx)


# --- answer-type prior: a "when" question favours memories that say when -----------------------------

_TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last|next|weekend|week|month|year|morning|evening|night|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|(?:19|20)\d\d|since|recently|earlier|later)\b",
    re.IGNORECASE,
)


def when_prior(emb: Any, lam: float, ctx: int = 1) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        fused = speaker_prior(c, qi, base_fused(c, qi, emb, ctx=ctx))
        if c.questions[qi]["q"].strip().lower().startswith(("when ", "how long ago")):
            fused = {
                i: s * (1 + lam) if _TIME_WORDS.search(c.items[i]["said"]) else s
                for i, s in fused.items()
            }
        return finish(c, qi, fused, vecs=ctx_vectors(c, emb, ctx))

    return r


def round16(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R16 reference (ctx={ctx})", reference(emb, ctx)
    for lam in (0.1, 0.2, 0.3, 0.5):
        yield f"R16 'when' answer-type prior x(1+{lam})", when_prior(emb, lam, ctx)


# --- word-level semantic expansion of the keyword query from the field's own vocabulary --------------


def vocab_vectors(c: Conv, emb: Any) -> tuple[list[str], np.ndarray]:
    key = ("vocab",)
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


def expansion(emb: Any, tau: float, m: int, lam: float, with_query: bool, ctx: int = 1) -> Ranker:
    """A second keyword lane (weight ``lam``) searching, for each content word of the query, the ``m``
    field words whose vectors are nearest to it (cosine >= ``tau``), with (or without) the query."""

    def r(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        vecs = ctx_vectors(c, emb, ctx)
        lists = {"bm25": kw_search(c, q)[0], "dense": dense_rank(vecs, c.qvecs[qi])}
        w = {"bm25": 1.0, "dense": 0.5}
        words, wv = vocab_vectors(c, emb)
        terms = [t for t in q.split() if t.isalpha()]
        extra: list[str] = []
        if terms:
            sims = emb.embed(terms) @ wv.T
            for t, row in zip(terms, sims):
                top = [
                    words[j] for j in np.argsort(-row)[: m + 1] if words[j] != t and row[j] >= tau
                ]
                extra += top[:m]
        if extra:
            lists["exp"] = kw_search(c, " ".join([q, *extra] if with_query else extra))[0]
            w["exp"] = lam
        return finish(c, qi, speaker_prior(c, qi, fuse_scores(lists, w)), vecs=vecs)

    return r


def round17(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R17 reference (ctx={ctx})", reference(emb, ctx)
    for tau in (0.5, 0.6, 0.7):
        for lam in (0.3, 0.6):
            yield (
                f"R17 expansion lane tau={tau} m=3 w={lam} (+query)",
                expansion(emb, tau, 3, lam, True, ctx),
            )
    yield (
        "R17 expansion lane tau=0.6 m=3 w=0.3 (words only)",
        expansion(emb, 0.6, 3, 0.3, False, ctx),
    )
    yield "R17 expansion lane tau=0.5 m=5 w=0.3 (+query)", expansion(emb, 0.5, 5, 0.3, True, ctx)
