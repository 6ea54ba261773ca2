"""Rounds 23-25 of the LoCoMo ablation (``locomo_ablate.py --round 23``): pass 6 levers
for multi-hop (category 1) and open-domain (category 3) questions.

Every ranker starts from the adopted pipeline of the named embedder (MiniLM: turn
with 1 earlier turn, dense w 0.5; nomic: two views summed, dense w 1.0; both with
the keyword lane over the turn with 2 earlier turns, own text 3x, query
processing, stemming, RRF k 20, speaker prior x1.3, time prior x2, 0.02 cosine
tiebreak) and changes one thing after fusion:

- (23) diversity: MMR over the fused candidates' vectors; a cap of hits per session;
- (24) pseudo-relevance feedback: a second dense lane whose query is the question's
  vector moved toward the top fused hits' vectors (Rocchio); the keyword query
  expanded with the top hits' terms (RM3-like); the neighbour lane (adjacent turns
  of the strongest candidates) on the adopted pipeline;
- (25) speaker handling: a query naming several participants favours each one's turns.

``--round 26`` prints the missed gold turns of categories 1 and 3 (error analysis).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from locomo_lab import Conv, adjacent, ctx_vectors, dense_rank
from locomo_variants2 import fuse_scores, kw_search
from locomo_variants3 import speaker_prior
from locomo_variants4 import time_prior

from chitta.recall.query import keyword_query

Ranker = Callable[[Conv, int], list[int]]
Post = Callable[[Conv, int, dict[int, float], np.ndarray], dict[int, float]]


def adopted_settings(emb: Any) -> tuple[int, float]:
    """(ctx view, dense weight) of the embedder's adopted pipeline."""
    w = getattr(emb, "recall_dense_weight", None)
    return (-1 if getattr(emb, "recall_turn_view", False) else 1), (0.5 if w is None else float(w))


def fused_for(
    c: Conv,
    qi: int,
    emb: Any,
    *,
    ctx: int,
    wd: float,
    extra: dict[str, list[int]] | None = None,
    extra_w: dict[str, float] | None = None,
    kwq: str | None = None,
) -> dict[int, float]:
    vecs = ctx_vectors(c, emb, ctx)
    q = c.questions[qi]["q"]
    lists = {
        "bm25": kw_search(c, kwq if kwq is not None else keyword_query(q))[0],
        "dense": dense_rank(vecs, c.qvecs[qi]),
    }
    w = {"bm25": 1.0, "dense": wd}
    if extra:
        lists.update(extra)
        w.update(extra_w or {})
    return time_prior(c, qi, speaker_prior(c, qi, fuse_scores(lists, w, 20)))


def tiebreak(
    c: Conv, qi: int, fused: dict[int, float], vecs: np.ndarray, tie: float = 0.02
) -> dict[int, float]:
    qv = c.qvecs[qi]
    return {i: s + tie * max(0.0, float(vecs[i] @ qv)) for i, s in fused.items()}


def ranked(scores: dict[int, float], n: int = 20) -> list[int]:
    return sorted(scores, key=lambda i: (-scores[i], i))[:n]


def pipeline(
    emb: Any,
    post: Post | None = None,
    pre: Callable[[Conv, int, Any, int, float], dict[int, float]] | None = None,
    ctx: int | None = None,
    wd: float | None = None,
) -> Ranker:
    c0, w0 = adopted_settings(emb)
    ctx = c0 if ctx is None else ctx
    wd = w0 if wd is None else wd

    def r(c: Conv, qi: int) -> list[int]:
        vecs = ctx_vectors(c, emb, ctx)
        fused = pre(c, qi, emb, ctx, wd) if pre else fused_for(c, qi, emb, ctx=ctx, wd=wd)
        scores = tiebreak(c, qi, fused, vecs)
        if post is not None:
            scores = post(c, qi, scores, vecs)
        return ranked(scores)

    return r


# --- (23) diversity ------------------------------------------------------------------------------------


def mmr(lam: float, top: int = 40) -> Post:
    """Greedy MMR over the ``top`` candidates: relevance = score / best, redundancy = the largest cosine to
    an already chosen candidate. Returns pseudo-scores that order the chosen list first."""

    def post(c: Conv, qi: int, scores: dict[int, float], vecs: np.ndarray) -> dict[int, float]:
        order = ranked(scores, top)
        if not order:
            return scores
        best = scores[order[0]]
        rel = np.array([scores[i] / best for i in order])
        sims = vecs[order] @ vecs[order].T
        chosen: list[int] = []
        left = list(range(len(order)))
        red = np.full(len(order), -np.inf)
        while left and len(chosen) < 20:
            vals = [lam * rel[j] - (1 - lam) * (max(0.0, red[j]) if chosen else 0.0) for j in left]
            pick = left[int(np.argmax(vals))]
            chosen.append(pick)
            left.remove(pick)
            red = np.maximum(red, sims[pick])
        return {order[j]: 100.0 - n for n, j in enumerate(chosen)}

    return post


def session_cap(cap: int) -> Post:
    def post(c: Conv, qi: int, scores: dict[int, float], vecs: np.ndarray) -> dict[int, float]:
        seen: Counter[Any] = Counter()
        first, rest = [], []
        for i in ranked(scores, 100):
            s = c.items[i]["session"]
            (first if seen[s] < cap else rest).append(i)
            seen[s] += 1
        return {i: 100.0 - n for n, i in enumerate(first + rest)}

    return post


def round23(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R23 reference (adopted pipeline)", pipeline(emb)
    for lam in (0.95, 0.9, 0.8, 0.7):
        yield f"R23 MMR lambda={lam} over top 40", pipeline(emb, mmr(lam))
    for cap in (4, 6):
        yield f"R23 at most {cap} hits per session first", pipeline(emb, session_cap(cap))


# --- (24) pseudo-relevance feedback and the neighbour lane ---------------------------------------------


def rocchio(
    m: int, beta: float, w2: float, replace: bool = False
) -> Callable[[Conv, int, Any, int, float], dict[int, float]]:
    def pre(c: Conv, qi: int, emb: Any, ctx: int, wd: float) -> dict[int, float]:
        first = fused_for(c, qi, emb, ctx=ctx, wd=wd)
        vecs = ctx_vectors(c, emb, ctx)
        top = ranked(first, m)
        qv = c.qvecs[qi] + beta * vecs[top].mean(axis=0)
        qv = qv / np.linalg.norm(qv)
        lane = dense_rank(vecs, qv)
        if replace:
            q = c.questions[qi]["q"]
            lists = {"bm25": kw_search(c, keyword_query(q))[0], "dense": lane}
            return time_prior(
                c, qi, speaker_prior(c, qi, fuse_scores(lists, {"bm25": 1.0, "dense": wd}, 20))
            )
        return fused_for(c, qi, emb, ctx=ctx, wd=wd, extra={"prf": lane}, extra_w={"prf": w2})

    return pre


_WORD = re.compile(r"[a-z][a-z']+")


def rm3(m: int, terms: int, w2: float) -> Callable[[Conv, int, Any, int, float], dict[int, float]]:
    """A second keyword lane: the processed query plus the ``terms`` words most frequent in the top ``m``
    fused hits' own texts (weighted by the hit's fused score, idf-scaled), absent from the query."""

    def pre(c: Conv, qi: int, emb: Any, ctx: int, wd: float) -> dict[int, float]:
        first = fused_for(c, qi, emb, ctx=ctx, wd=wd)
        if "df" not in c.ctx:  # type: ignore[comparison-overlap]
            df: Counter[str] = Counter()
            for t in c.texts:
                df.update(set(_WORD.findall(t.lower())))
            c.ctx["df"] = df  # type: ignore[index,assignment]
        df = c.ctx["df"]  # type: ignore[index,assignment]
        n = len(c.texts)
        q = keyword_query(c.questions[qi]["q"])
        qset = set(q.lower().split())
        cand: Counter[str] = Counter()
        for i in ranked(first, m):
            words = [
                w
                for w in _WORD.findall(c.items[i]["said"].lower())
                if keyword_query(w) and w not in qset
            ]
            for w in set(words):
                cand[w] += first[i] * math.log(n / (1 + df[w]))
        add = [w for w, _ in cand.most_common(terms)]
        if not add:
            return first
        lane = kw_search(c, " ".join([q, *add]))[0]
        return fused_for(c, qi, emb, ctx=ctx, wd=wd, extra={"rm3": lane}, extra_w={"rm3": w2})

    return pre


def neighbour_lane(
    seeds: int, w2: float
) -> Callable[[Conv, int, Any, int, float], dict[int, float]]:
    def pre(c: Conv, qi: int, emb: Any, ctx: int, wd: float) -> dict[int, float]:
        first = fused_for(c, qi, emb, ctx=ctx, wd=wd)
        lane = adjacent(c, ranked(first, seeds))
        return fused_for(c, qi, emb, ctx=ctx, wd=wd, extra={"nb": lane}, extra_w={"nb": w2})

    return pre


def round24(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R24 reference (adopted pipeline)", pipeline(emb)
    for m, beta, w2 in (
        (3, 0.5, 0.5),
        (5, 0.5, 0.5),
        (5, 1.0, 0.5),
        (5, 0.5, 0.25),
        (10, 0.5, 0.5),
        (5, 1.0, 1.0),
    ):
        yield (
            f"R24 Rocchio lane top {m} beta={beta} w={w2}",
            pipeline(emb, pre=rocchio(m, beta, w2)),
        )
    for m, beta in ((3, 0.3), (5, 0.5)):
        yield (
            f"R24 Rocchio in place of the dense query, top {m} beta={beta}",
            pipeline(emb, pre=rocchio(m, beta, 0, True)),
        )
    for m, terms, w2 in ((5, 5, 0.3), (5, 10, 0.3), (10, 10, 0.5), (5, 5, 0.6)):
        yield (
            f"R24 RM3 keyword lane top {m} +{terms} terms w={w2}",
            pipeline(emb, pre=rm3(m, terms, w2)),
        )
    for seeds, w2 in ((5, 0.1), (5, 0.3), (3, 0.2)):
        yield (
            f"R24 neighbour lane seeds={seeds} w={w2}",
            pipeline(emb, pre=neighbour_lane(seeds, w2)),
        )


# --- (25) several named participants --------------------------------------------------------------------


def multi_speaker(lam: float) -> Post:
    def post(c: Conv, qi: int, scores: dict[int, float], vecs: np.ndarray) -> dict[int, float]:
        q = c.questions[qi]["q"].lower()
        who = {t["speaker"] for t in c.items}
        named = {s for s in who if re.search(rf"\b{re.escape(s.lower())}\b", q)}
        if len(named) < 2:
            return scores
        return {
            i: s * (1 + lam) if c.items[i]["speaker"] in named else s for i, s in scores.items()
        }

    return post


def _named(c: Conv, qi: int) -> str | None:
    from chitta.recall.query import named_speaker

    return named_speaker(c.questions[qi]["q"], {t["speaker"] for t in c.items})


def speaker_lanes(
    wd2: float, wb2: float, prior: float = 0.3
) -> Callable[[Conv, int, Any, int, float], dict[int, float]]:
    """A query naming one participant adds lanes restricted to that participant's turns: a dense lane
    (weight ``wd2``) and a keyword lane (``wb2``); ``prior``: the speaker prior of the fused score."""

    def pre(c: Conv, qi: int, emb: Any, ctx: int, wd: float) -> dict[int, float]:
        who = _named(c, qi)
        extra: dict[str, list[int]] = {}
        w: dict[str, float] = {}
        if who is not None:
            own = np.array([t["speaker"] == who for t in c.items])
            if wd2:
                vecs = ctx_vectors(c, emb, ctx)
                sims = np.where(own, vecs @ c.qvecs[qi], -np.inf)
                top = np.argsort(-sims, kind="stable")[: int(own.sum())][:100]
                extra["dsp"], w["dsp"] = [int(i) for i in top], wd2
            if wb2:
                extra["bsp"] = [
                    i for i in kw_search(c, keyword_query(c.questions[qi]["q"]), n=300)[0] if own[i]
                ][:100]
                w["bsp"] = wb2
        vecs = ctx_vectors(c, emb, ctx)
        q = c.questions[qi]["q"]
        lists = {
            "bm25": kw_search(c, keyword_query(q))[0],
            "dense": dense_rank(vecs, c.qvecs[qi]),
            **extra,
        }
        return time_prior(
            c,
            qi,
            speaker_prior(c, qi, fuse_scores(lists, {"bm25": 1.0, "dense": wd, **w}, 20), prior),
        )

    return pre


def round25(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R25 reference (adopted pipeline)", pipeline(emb)
    for p in (0.0, 0.5, 1.0):
        yield f"R25 speaker prior x{1 + p}", pipeline(emb, pre=speaker_lanes(0, 0, p))
    _c0, wd = adopted_settings(emb)
    for f in (0.5, 1.0):
        yield (
            f"R25 speaker-scoped dense lane w={f}x dense",
            pipeline(emb, pre=speaker_lanes(f * wd, 0)),
        )
        yield f"R25 speaker-scoped keyword lane w={f}", pipeline(emb, pre=speaker_lanes(0, f))
        yield (
            f"R25 speaker-scoped dense {f}x + keyword {f}",
            pipeline(emb, pre=speaker_lanes(f * wd, f)),
        )
    yield (
        "R25 speaker-scoped dense 0.5x + keyword 0.5, no prior",
        pipeline(emb, pre=speaker_lanes(0.5 * wd, 0.5, 0.0)),
    )


# --- (26) error analysis --------------------------------------------------------------------------------


def round26(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    ref = pipeline(emb)

    def r(c: Conv, qi: int) -> list[int]:
        got = ref(c, qi)
        q = c.questions[qi]
        if q["cat"] in (1, 3):
            c0, wd = adopted_settings(emb)
            full = ranked(
                tiebreak(c, qi, fused_for(c, qi, emb, ctx=c0, wd=wd), ctx_vectors(c, emb, c0)), 100
            )
            miss = [g for g in sorted(q["gold"]) if g not in got[:10]]
            if miss:
                print(f"[c{q['cat']}] {q['q']}  gold {len(q['gold'])}, missed {len(miss)}")
                for g in miss:
                    rank = full.index(g) + 1 if g in full else None
                    print(f"     rank {rank}: {c.items[g]['speaker']}: {c.items[g]['said'][:110]}")
        return got

    yield "R26 error analysis", r


# --- (27) paired differences of the round's best levers against the reference ----------------------------


def paired(
    convs: list[Conv], a: Ranker, b: Ranker, seed: int = 0
) -> dict[str, tuple[float, float, float, int, int]]:
    """half -> (mean R@10 difference b - a, bootstrap 95% low, high, wins, losses) over categories 1-4."""
    diff: dict[str, list[float]] = {"tune": [], "held": []}
    for c in convs:
        for qi, q in enumerate(c.questions):
            if q["cat"] == 5:
                continue
            ra, rb = (len(set(r(c, qi)[:10]) & q["gold"]) / len(q["gold"]) for r in (a, b))
            diff[q["half"]].append(rb - ra)
    rng = np.random.default_rng(seed)
    out = {}
    for h, d in diff.items():
        arr = np.array(d)
        boots = [arr[rng.integers(0, len(arr), len(arr))].mean() for _ in range(2000)]
        out[h] = (
            float(arr.mean()),
            float(np.percentile(boots, 2.5)),
            float(np.percentile(boots, 97.5)),
            int((arr > 0).sum()),
            int((arr < 0).sum()),
        )
    return out


def round27(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """Printed by ``locomo_ablate.py --round 27``: paired intervals (the rankers are yielded for the table too)."""
    yield "R27 reference (adopted pipeline)", pipeline(emb)
    _c0, wd = adopted_settings(emb)
    yield (
        "R27 speaker-scoped dense lane w=0.5x dense",
        pipeline(emb, pre=speaker_lanes(0.5 * wd, 0)),
    )
    yield "R27 speaker-scoped dense lane w=1.0x dense", pipeline(emb, pre=speaker_lanes(wd, 0))
    yield "R27 RM3 keyword lane top 10 +10 terms w=0.5", pipeline(emb, pre=rm3(10, 10, 0.5))


# --- (28) fusion by scores, and a penalty for adjacent near-duplicates ------------------------------------


def convex(
    alpha: float, mix: float = 1.0, pool: int = 100, bm_minmax: bool = False
) -> Callable[[Conv, int, Any, int, float], dict[int, float]]:
    """Score fusion over the union of both lanes' top 100: ``alpha`` x BM25 / max BM25 + (1 - alpha) x
    min-max normalised cosine (Bruch et al. 2023, convex combination). ``mix`` < 1 blends it with the
    normalised RRF score: mix x convex + (1 - mix) x rrf. Speaker and time priors as in the pipeline."""

    def pre(c: Conv, qi: int, emb: Any, ctx: int, wd: float) -> dict[int, float]:
        vecs = ctx_vectors(c, emb, ctx)
        q = c.questions[qi]["q"]
        ids, sc = kw_search(c, keyword_query(q), n=pool)
        sims = vecs @ c.qvecs[qi]
        dense = dense_rank(vecs, c.qvecs[qi])[:pool]
        union = list(dict.fromkeys([*ids, *dense]))
        floor = min(sc) if (sc and bm_minmax) else 0.0
        bm = {i: s - floor for i, s in zip(ids, sc)}
        top = (max(sc) - floor) if sc else 1.0
        cu = sims[union]
        lo, hi = float(cu.min()), float(cu.max())
        cx = {
            i: alpha * bm.get(i, 0.0) / top
            + (1 - alpha) * (float(sims[i]) - lo) / max(hi - lo, 1e-9)
            for i in union
        }
        if mix < 1.0:
            rrf = fuse_scores({"bm25": ids, "dense": dense}, {"bm25": 1.0, "dense": wd}, 20)
            cx = {i: mix * cx[i] + (1 - mix) * rrf.get(i, 0.0) for i in union}
        return time_prior(c, qi, speaker_prior(c, qi, cx))

    return pre


def adjacent_penalty(p: float) -> Post:
    """A candidate ranked below a turn adjacent to it (same session, one turn away) loses ``p`` of its score."""

    def post(c: Conv, qi: int, scores: dict[int, float], vecs: np.ndarray) -> dict[int, float]:
        out, placed = {}, set()
        for i in ranked(scores, 100):
            near = any(
                j in placed and c.items[j]["session"] == c.items[i]["session"]
                for j in (i - 1, i + 1)
            )
            out[i] = scores[i] * (1 - p) if near else scores[i]
            placed.add(i)
        return out

    return post


def round28(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    yield "R28 reference (adopted pipeline)", pipeline(emb)
    for a in (0.3, 0.5, 0.7):
        yield f"R28 convex fusion alpha={a}", pipeline(emb, pre=convex(a))
    for a, m in ((0.5, 0.5), (0.5, 0.3), (0.7, 0.5)):
        yield f"R28 convex alpha={a} mixed with RRF, mix={m}", pipeline(emb, pre=convex(a, m))
    for p in (0.1, 0.2, 0.3):
        yield f"R28 adjacent near-duplicate penalty {p}", pipeline(emb, adjacent_penalty(p))


def round29(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """Convex fusion: the alpha grid near the round 28 best, the engine's pool (50), BM25 min-max."""
    yield "R29 reference (adopted pipeline)", pipeline(emb)
    grid = (
        (0.2, 0.25, 0.3, 0.35, 0.4, 0.45)
        if getattr(emb, "recall_turn_view", False)
        else (0.4, 0.45, 0.5, 0.55, 0.6)
    )
    for a in grid:
        yield f"R29 convex alpha={a}", pipeline(emb, pre=convex(a))
        yield f"R29 convex alpha={a} pool 50", pipeline(emb, pre=convex(a, pool=50))
    mid = grid[2]
    yield (
        f"R29 convex alpha={mid} pool 50, BM25 min-max",
        pipeline(emb, pre=convex(mid, pool=50, bm_minmax=True)),
    )


def round30(emb: Any, ctx: int = 1) -> Iterator[tuple[str, Ranker]]:
    """Paired intervals (``--round 30``) of the adopted convex fusion against the RRF reference."""
    yield "R30 reference (adopted pipeline)", pipeline(emb)
    alpha = 0.3 if getattr(emb, "recall_turn_view", False) else 0.55
    yield f"R30 convex alpha={alpha}", pipeline(emb, pre=convex(alpha))
