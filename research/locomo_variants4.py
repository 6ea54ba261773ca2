"""Rounds 18-21 of the LoCoMo ablation (``locomo_ablate.py --round 18``): pass 5 levers.

Every ranker starts from the pipeline adopted in pass 4 (keyword lane over the
turn with 2 earlier turns, own text 3x, query processing, stemming; dense lane
over the turn with ``ctx`` earlier turns, weight ``wd``; RRF k 20; speaker prior
x1.3; time prior x2; 0.02 cosine tiebreak) and changes one thing:

- (18) the embedder's settings: dense weight, RRF k, context turns, the lane alone;
- (19) the dense lane's query: the question rewritten as a statement
  (``chitta.recall.rewrite.declarative``), instead of or beside the question;
- (20) the keyword lane expanded with the field words whose word vectors are
  nearest to the query's words (round 17 again, on the pass 4 pipeline);
- (21) error-analysis levers: a second keyword lane over the turn alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from locomo_lab import Conv, ctx_vectors, dense_rank
from locomo_variants2 import finish, fuse_scores, keyword_index, kw_search
from locomo_variants3 import speaker_prior, vocab_vectors

from chitta.recall.query import keyword_query
from chitta.recall.rewrite import declarative
from chitta.recall.timeq import query_times

Ranker = Callable[[Conv, int], list[int]]


def time_prior(c: Conv, qi: int, fused: dict[int, float], lam: float = 1.0) -> dict[int, float]:
    when = query_times(c.questions[qi]["q"])
    if when is None or not lam:
        return fused
    return {
        i: s * (1 + lam) if when.contains(int(c.items[i]["at"].timestamp() * 1000)) else s
        for i, s in fused.items()
    }


def pipeline(
    emb: Any,
    *,
    wd: float = 0.5,
    k: float = 20,
    ctx: int = 1,
    extra: Callable[[Conv, int], tuple[dict[str, list[int]], dict[str, float]]] | None = None,
    dense_q: Callable[[Conv, int], np.ndarray] | None = None,
    lanes: tuple[str, ...] = ("bm25", "dense"),
    wb: float = 1.0,
    speaker: float = 0.3,
    tprior: float = 1.0,
) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        vecs = ctx_vectors(c, emb, ctx)
        qv = c.qvecs[qi] if dense_q is None else dense_q(c, qi)
        lists: dict[str, list[int]] = {}
        w: dict[str, float] = {}
        if "bm25" in lanes:
            lists["bm25"], w["bm25"] = kw_search(c, keyword_query(c.questions[qi]["q"]))[0], wb
        if "dense" in lanes:
            lists["dense"], w["dense"] = dense_rank(vecs, qv), wd
        if extra is not None:
            more, mw = extra(c, qi)
            lists.update(more)
            w.update(mw)
        fused = time_prior(c, qi, speaker_prior(c, qi, fuse_scores(lists, w, k), speaker), tprior)
        return finish(c, qi, fused, vecs=vecs)

    return r


def round18(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    for n in (0, 1, 2):
        yield f"R18 dense lane alone, ctx={n}", pipeline(emb, ctx=n, lanes=("dense",))
    for n in (0, 1):
        for wd in (0.3, 0.5, 0.75, 1.0):
            yield f"R18 reference ctx={n} dense w={wd}", pipeline(emb, ctx=n, wd=wd)
    for kk in (10, 40):
        yield f"R18 reference ctx={ctx} dense w=0.5 k={kk}", pipeline(emb, ctx=ctx, k=kk)
    for wd, kk in ((0.75, 10), (0.75, 40), (1.0, 10), (1.0, 40), (1.5, 20), (2.0, 20)):
        yield f"R18 ctx={ctx} dense w={wd} k={kk}", pipeline(emb, ctx=ctx, wd=wd, k=kk)
    for w0, w1 in (
        (0.25, 0.25),
        (0.5, 0.5),
        (0.4, 0.4),
        (0.6, 0.6),
        (0.75, 0.75),
        (0.5, 0.75),
        (0.75, 0.5),
    ):

        def views(
            c: Conv, qi: int, w0: float = w0
        ) -> tuple[dict[str, list[int]], dict[str, float]]:
            return {"dense0": dense_rank(ctx_vectors(c, emb, 0), c.qvecs[qi])}, {"dense0": w0}

        yield (
            f"R18 two dense views ctx=0 w={w0} + ctx=1 w={w1}",
            pipeline(emb, ctx=1, wd=w1, extra=views),
        )
    for src, name in ((0, "turn alone"), (1, "1 earlier turn")):
        for w in (0.5, 0.75):

            def derived(
                c: Conv, qi: int, w: float = w
            ) -> tuple[dict[str, list[int]], dict[str, float]]:
                return {"dense3": dense_rank(ctx_vectors(c, emb, -3), c.qvecs[qi])}, {"dense3": w}

            yield (
                f"R18 derived view (sum of stored turn-alone vectors) + {name} view, w={w} each",
                pipeline(emb, ctx=src, wd=w, extra=derived),
            )
    for wd in (0.5, 0.75, 1.0):
        yield (
            f"R18 mean view (ctx=0 + ctx=1 vectors, normalised) w={wd}",
            pipeline(emb, ctx=-1, wd=wd),
        )
    for sp in (0.2, 0.5):
        yield (
            f"R18 ctx={ctx} dense w=0.75 speaker prior x{1 + sp}",
            pipeline(emb, ctx=ctx, wd=0.75, speaker=sp),
        )


# --- the dense lane's query as a statement ---------------------------------------------------------


def _rewrite_vectors(c: Conv, emb: Any, side: str, move: bool) -> np.ndarray:
    key = ("rewrite", side, move)
    if key not in c.ctx:  # type: ignore[comparison-overlap]
        texts = [declarative(q["q"], move_noun_phrase=move) for q in c.questions]
        fn = emb.embed_query if side == "query" else emb.embed
        c.ctx[key] = fn(texts)  # type: ignore[index]
    return c.ctx[key]  # type: ignore[index]


def rewrite(
    emb: Any,
    mode: str,
    side: str = "query",
    move: bool = True,
    w2: float = 0.25,
    ctx: int = 1,
    wd: float = 0.5,
) -> Ranker:
    """mode 'instead': the dense lane embeds the statement; 'lane': a second dense lane (weight ``w2``) for
    it; 'mean': the dense lane embeds the mean of the question's and the statement's vectors."""

    def dq(c: Conv, qi: int) -> np.ndarray:
        rv = _rewrite_vectors(c, emb, side, move)[qi]
        if mode == "instead":
            return rv
        m = c.qvecs[qi] + rv
        return m / np.linalg.norm(m)

    def extra(c: Conv, qi: int) -> tuple[dict[str, list[int]], dict[str, float]]:
        rv = _rewrite_vectors(c, emb, side, move)[qi]
        return {"dense2": dense_rank(ctx_vectors(c, emb, ctx), rv)}, {"dense2": w2}

    if mode == "lane":
        return pipeline(emb, ctx=ctx, wd=wd, extra=extra)
    return pipeline(emb, ctx=ctx, wd=wd, dense_q=dq)


def round19(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R19 reference ctx={ctx}", pipeline(emb, ctx=ctx)
    sides = ("query", "doc") if hasattr(emb.inner, "embed_query") else ("query",)
    for side in sides:
        for move in (True, False):
            tag = f"side={side} move={move}"
            yield f"R19 rewrite instead {tag}", rewrite(emb, "instead", side, move, ctx=ctx)
            yield f"R19 rewrite mean {tag}", rewrite(emb, "mean", side, move, ctx=ctx)
        for w2 in (0.25, 0.5):
            yield (
                f"R19 rewrite lane w={w2} side={side}",
                rewrite(emb, "lane", side, True, w2, ctx=ctx),
            )
    yield (
        "R19 dense lane alone, rewrite instead",
        pipeline(
            emb,
            ctx=ctx,
            lanes=("dense",),
            dense_q=lambda c, qi: _rewrite_vectors(c, emb, "query", True)[qi],
        ),
    )


# --- keyword expansion by word vectors, on the pass 4 pipeline --------------------------------------


def _expand(
    emb: Any, tau: float, m: int, lam: float
) -> Callable[[Conv, int], tuple[dict[str, list[int]], dict[str, float]]]:
    def extra(c: Conv, qi: int) -> tuple[dict[str, list[int]], dict[str, float]]:
        q = keyword_query(c.questions[qi]["q"])
        words, wv = vocab_vectors(c, emb)
        terms = [t for t in q.split() if t.isalpha()]
        add: list[str] = []
        if terms:
            sims = emb.embed(terms) @ wv.T
            for t, row in zip(terms, sims):
                add += [
                    words[j] for j in np.argsort(-row)[: m + 1] if words[j] != t and row[j] >= tau
                ][:m]
        if not add:
            return {}, {}
        return {"exp": kw_search(c, " ".join([q, *add]))[0]}, {"exp": lam}

    return extra


def round20(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R20 reference ctx={ctx}", pipeline(emb, ctx=ctx)
    for tau in (0.5, 0.6, 0.7):
        for lam in (0.3, 0.6):
            yield (
                f"R20 expansion tau={tau} m=3 w={lam}",
                pipeline(emb, ctx=ctx, extra=_expand(emb, tau, 3, lam)),
            )


# --- error analysis: a keyword lane over the turn alone ---------------------------------------------


def _turn_alone(c: Conv) -> list[str]:
    return c.texts


def round21(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield f"R21 reference ctx={ctx}", pipeline(emb, ctx=ctx)
    for lam in (0.2, 0.4):

        def extra(
            c: Conv, qi: int, lam: float = lam
        ) -> tuple[dict[str, list[int]], dict[str, float]]:
            keyword_index(c, "alone", _turn_alone)
            return {
                "kw0": kw_search(c, keyword_query(c.questions[qi]["q"]), "alone", _turn_alone)[0]
            }, {"kw0": lam}

        yield f"R21 keyword lane over the turn alone w={lam}", pipeline(emb, ctx=ctx, extra=extra)


def round22(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """Pass 5's adopted pipeline for NomicEmbedder (two views summed, dense weight 1.0) and the levers
    of rounds 19-20 on top of it."""
    yield "R22 adopted: mean view, dense w=1.0", pipeline(emb, ctx=-1, wd=1.0)
    for tau, lam in ((0.5, 0.6), (0.6, 0.3), (0.7, 0.3)):
        yield (
            f"R22 adopted + expansion tau={tau} w={lam}",
            pipeline(emb, ctx=-1, wd=1.0, extra=_expand(emb, tau, 3, lam)),
        )
    yield (
        "R22 adopted + rewrite lane w=0.25",
        rewrite(emb, "lane", "query", True, 0.25, ctx=-1, wd=1.0),
    )
