"""Round 8+ of the LoCoMo ablation (``locomo_ablate.py --round 8``): multi-hop levers.

Every ranker starts from the adopted pipeline (keyword lane over the turn with
2 earlier turns, own text 3x, query processing, stemming; dense lane over the
turn with 1 earlier turn, weight 0.5; RRF k 20; 0.02 cosine tiebreak) and adds
one lever: keyword pseudo-relevance feedback (RM3-like), per-term query
decomposition, a speaker prior, a second dense view, score-based fusion.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from locomo_lab import Conv, ctx_vectors, dense_rank
from locomo_variants import ctx_boost

from chitta.organs.index.bm25 import BM25, PAD_ID, tokenize
from chitta.organs.index.fusion import rrf_fuse
from chitta.recall.query import QUERY_STOPWORDS, keyword_query

Ranker = Callable[[Conv, int], list[int]]
POOL = 100


def keyword_index(
    c: Conv, key: str, texts: Callable[[Conv], list[str]], k1: float = 1.2, b: float = 0.75
) -> BM25:
    ik = ("v2", key, k1, b)
    if ik not in c.bm25:
        idx = BM25(k1, b, stem=True)
        idx.add(np.arange(len(c.texts), dtype=np.uint64), texts(c))
        c.bm25[ik] = idx
    return c.bm25[ik]


def kw_search(
    c: Conv,
    q: str,
    key: str = "boost3",
    texts: Callable[[Conv], list[str]] | None = None,
    n: int = POOL,
) -> tuple[list[int], list[float]]:
    idx = keyword_index(c, key, texts or ctx_boost(2, 3))
    if not q.strip():
        return [], []
    ids, sc = idx.search(q, n)
    keep = [(int(i), float(s)) for i, s in zip(ids, sc) if i != PAD_ID]
    return [i for i, _ in keep], [s for _, s in keep]


def fuse_scores(
    lists: dict[str, list[int]], w: dict[str, float], k: float = 20
) -> dict[int, float]:
    names = [n for n in lists if lists[n] and w.get(n, 0) > 0]
    if not names:
        return {}
    fid, fs = rrf_fuse(
        [np.array(lists[n], np.uint64) for n in names],
        k=k,
        weights=[w[n] for n in names],
        limit=POOL,
    )
    best = float(fs[0])
    return {int(i): float(s) / best for i, s in zip(fid, fs)}


def finish(
    c: Conv, qi: int, fused: dict[int, float], tie: float = 0.02, vecs: np.ndarray | None = None
) -> list[int]:
    if tie and vecs is not None:
        qv = c.qvecs[qi]
        fused = {i: s + tie * max(0.0, float(vecs[i] @ qv)) for i, s in fused.items()}
    return sorted(fused, key=lambda i: (-fused[i], i))[:20]


def base_lists(
    c: Conv, qi: int, emb: Any, wd: float = 0.5
) -> tuple[dict[str, list[int]], dict[str, float]]:
    q = keyword_query(c.questions[qi]["q"])
    lists = {"bm25": kw_search(c, q)[0]}
    w = {"bm25": 1.0}
    if wd:
        lists["dense"] = dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi])
        w["dense"] = wd
    return lists, w


def adopted(emb: Any, wd: float = 0.5, k: float = 20, ctx: int = 1) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        vecs = ctx_vectors(c, emb, ctx)
        lists = {"bm25": kw_search(c, q)[0], "dense": dense_rank(vecs, c.qvecs[qi])}
        return finish(
            c, qi, fuse_scores(lists, {"bm25": 1.0, "dense": wd}, k), vecs=ctx_vectors(c, emb, 1)
        )

    return r


# --- keyword pseudo-relevance feedback (RM3-like) -------------------------------------------------


def _idf(c: Conv) -> dict[str, float]:
    key = ("idf",)
    if key not in c.bm25:
        df: Counter[str] = Counter()
        for t in c.texts:
            df.update(set(tokenize(t, stem=True)))
        n = len(c.texts)
        c.bm25[key] = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}  # type: ignore[assignment]
    return c.bm25[key]  # type: ignore[return-value]


def expansion_terms(c: Conv, seeds: list[int], query_terms: set[str], n_terms: int) -> list[str]:
    """Terms of the seed turns' own text, weighted by tf/len x idf summed over seeds (rank-discounted)."""
    idf = _idf(c)
    weight: Counter[str] = Counter()
    for rank, s in enumerate(seeds):
        toks = [
            t
            for t in tokenize(c.texts[s], stem=True)
            if t not in QUERY_STOPWORDS and not t.isdigit()
        ]
        if not toks:
            continue
        tf = Counter(toks)
        for t, f in tf.items():
            weight[t] += (f / len(toks)) * idf.get(t, 0.0) / (1 + rank)
    return [t for t, _ in weight.most_common() if t not in query_terms][:n_terms]


def rm3(
    emb: Any, m: int, n_terms: int, lane_w: float, source: str = "bm25", qrep: int = 0
) -> Ranker:
    """lane_w > 0: the expanded query is its own keyword lane (weight lane_w);
    qrep > 0: it replaces the keyword query (original terms repeated qrep times)."""

    def r(c: Conv, qi: int) -> list[int]:
        lists, w = base_lists(c, qi, emb)
        q = keyword_query(c.questions[qi]["q"])
        seeds = lists["bm25"][:m] if source == "bm25" else list(fuse_scores(lists, w))[:m]
        qterms = set(tokenize(q, stem=True))
        extra = expansion_terms(c, seeds, qterms, n_terms)
        if qrep:
            lists["bm25"] = kw_search(c, " ".join([q] * qrep + extra))[0]
        else:
            lists["prf"] = kw_search(c, " ".join([q, *extra]))[0]
            w["prf"] = lane_w
        return finish(c, qi, fuse_scores(lists, w), vecs=ctx_vectors(c, emb, 1))

    return r


# --- query decomposition: one keyword list per content term ---------------------------------------


def decomposed(emb: Any, lane_w: float) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        lists, w = base_lists(c, qi, emb)
        terms = keyword_query(c.questions[qi]["q"]).split()
        if len(terms) > 1:
            for j, t in enumerate(terms):
                lists[f"t{j}"] = kw_search(c, t)[0]
                w[f"t{j}"] = lane_w / len(terms)
        return finish(c, qi, fuse_scores(lists, w), vecs=ctx_vectors(c, emb, 1))

    return r


# --- speaker prior -----------------------------------------------------------------------------------


def speaker_prior(emb: Any, lam: float) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        lists, w = base_lists(c, qi, emb)
        fused = fuse_scores(lists, w)
        qtok = set(tokenize(c.questions[qi]["q"]))
        speakers = {t["speaker"] for t in c.items}
        named = {s for s in speakers if s.lower() in qtok}
        if len(named) == 1:
            fused = {
                i: s * (1 + lam) if c.items[i]["speaker"] in named else s for i, s in fused.items()
            }
        return finish(c, qi, fused, vecs=ctx_vectors(c, emb, 1))

    return r


# --- a second dense view (the turn alone) ------------------------------------------------------------


def two_dense(emb: Any, w0: float, w1: float) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        lists, w = base_lists(c, qi, emb, wd=w1)
        lists["dense0"] = dense_rank(ctx_vectors(c, emb, 0), c.qvecs[qi])
        w["dense0"] = w0
        return finish(c, qi, fuse_scores(lists, w), vecs=ctx_vectors(c, emb, 1))

    return r


def max_dense(emb: Any, wd: float) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        lists, w = base_lists(c, qi, emb, wd=0)
        sims = np.maximum(
            ctx_vectors(c, emb, 0) @ c.qvecs[qi], ctx_vectors(c, emb, 1) @ c.qvecs[qi]
        )
        lists["dense"] = [int(i) for i in np.argsort(-sims, kind="stable")[:POOL]]
        w["dense"] = wd
        return finish(c, qi, fuse_scores(lists, w), vecs=ctx_vectors(c, emb, 1))

    return r


# --- score-based fusion (min-max normalised, weighted sum) --------------------------------------------


def combsum(emb: Any, wd: float, pool: int = POOL) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        ids, sc = kw_search(c, keyword_query(c.questions[qi]["q"]), n=pool)
        vecs = ctx_vectors(c, emb, 1)
        sims = vecs @ c.qvecs[qi]
        top = np.argsort(-sims, kind="stable")[:pool]
        out: dict[int, float] = {}
        if ids:
            hi, lo = sc[0], sc[-1] if len(sc) > 1 else 0.0
            for i, s in zip(ids, sc):
                out[i] = out.get(i, 0.0) + (s - lo) / (hi - lo + 1e-9)
        dhi, dlo = float(sims[top[0]]), float(sims[top[-1]])
        for i in top:
            out[int(i)] = out.get(int(i), 0.0) + wd * (float(sims[i]) - dlo) / (dhi - dlo + 1e-9)
        return sorted(out, key=lambda i: (-out[i], i))[:20]

    return r


def round8(emb: Any) -> Iterator[tuple[str, Ranker]]:
    yield "R8 adopted (reference)", adopted(emb)
    for m, n, lw in ((3, 5, 0.5), (5, 10, 0.5), (10, 10, 0.5), (5, 10, 1.0), (5, 5, 0.3)):
        yield f"R8 keyword PRF lane seeds={m} terms={n} w={lw}", rm3(emb, m, n, lw)
    for m, n in ((5, 10), (10, 10)):
        yield (
            f"R8 keyword PRF lane from fused seeds={m} terms={n} w=0.5",
            rm3(emb, m, n, 0.5, source="fused"),
        )
    for rep in (2, 3):
        yield (
            f"R8 keyword PRF in the query (orig x{rep}) seeds=5 terms=10",
            rm3(emb, 5, 10, 0, qrep=rep),
        )
    for lw in (0.3, 0.6, 1.0):
        yield f"R8 per-term decomposition lanes total w={lw}", decomposed(emb, lw)
    for lam in (0.05, 0.1, 0.2):
        yield f"R8 speaker prior x(1+{lam})", speaker_prior(emb, lam)
    for w0, w1 in ((0.25, 0.25), (0.25, 0.5), (0.5, 0.5)):
        yield f"R8 two dense lanes ctx0 w={w0} ctx1 w={w1}", two_dense(emb, w0, w1)
    yield "R8 dense max(ctx0, ctx1) w=0.5", max_dense(emb, 0.5)
    for wd in (0.3, 0.5, 1.0):
        yield f"R8 score fusion (min-max) dense w={wd}", combsum(emb, wd)


def name_emphasis(emb: Any, rep: int) -> Ranker:
    """Capitalised question words (names) repeated ``rep`` times in the keyword query."""

    def r(c: Conv, qi: int) -> list[int]:
        lists, w = base_lists(c, qi, emb)
        raw = c.questions[qi]["q"]
        names = [t.lower() for t in raw.replace("'", " ").split()[1:] if t[:1].isupper()]
        names = [n for n in tokenize(" ".join(names), stopwords=False) if n not in QUERY_STOPWORDS]
        if names:
            lists["bm25"] = kw_search(c, " ".join([keyword_query(raw), *names * (rep - 1)]))[0]
        return finish(c, qi, fuse_scores(lists, w), vecs=ctx_vectors(c, emb, 1))

    return r


def round9(emb: Any) -> Iterator[tuple[str, Ranker]]:
    for lam in (0.3, 0.5, 1.0, 3.0):
        yield f"R9 speaker prior x(1+{lam})", speaker_prior(emb, lam)
    for rep in (2, 3):
        yield f"R9 names x{rep} in the keyword query", name_emphasis(emb, rep)


def with_prior(emb: Any, wd: float, ctx: int, lam: float = 0.3, k: float = 20) -> Ranker:
    """The adopted pipeline plus the speaker prior, dense lane over ``ctx`` earlier turns."""

    def r(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        vecs = ctx_vectors(c, emb, ctx)
        lists = {"bm25": kw_search(c, q)[0], "dense": dense_rank(vecs, c.qvecs[qi])}
        fused = fuse_scores(lists, {"bm25": 1.0, "dense": wd}, k)
        qtok = set(tokenize(c.questions[qi]["q"]))
        named = {s for s in {t["speaker"] for t in c.items} if s.lower() in qtok}
        if len(named) == 1 and lam:
            fused = {
                i: s * (1 + lam) if c.items[i]["speaker"] in named else s for i, s in fused.items()
            }
        return finish(c, qi, fused, vecs=vecs)

    return r


def round10(emb: Any) -> Iterator[tuple[str, Ranker]]:
    """Per embedder: dense alone, and the dense weight with the speaker prior (ctx 0 and 1)."""
    for ctx in (0, 1):
        yield (
            f"R10 dense alone ctx={ctx}",
            lambda c, qi, ctx=ctx: dense_rank(ctx_vectors(c, emb, ctx), c.qvecs[qi])[:20],
        )
        for wd in (0.5, 0.75, 1.0, 1.5):
            yield f"R10 prior 0.3, dense ctx={ctx} w={wd}", with_prior(emb, wd, ctx)


def mmr(emb: Any, wd: float, ctx: int, penalty: float, lam: float = 0.3, depth: int = 50) -> Ranker:
    """Maximal marginal relevance over the fused pool: each next pick maximises
    fused - penalty * (max cosine to the picks so far), vectors of the dense lane."""
    base = with_prior(emb, wd, ctx, lam)

    def r(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        vecs = ctx_vectors(c, emb, ctx)
        lists = {"bm25": kw_search(c, q)[0], "dense": dense_rank(vecs, c.qvecs[qi])}
        fused = fuse_scores(lists, {"bm25": 1.0, "dense": wd})
        qtok = set(tokenize(c.questions[qi]["q"]))
        named = {s for s in {t["speaker"] for t in c.items} if s.lower() in qtok}
        if len(named) == 1:
            fused = {
                i: s * (1 + lam) if c.items[i]["speaker"] in named else s for i, s in fused.items()
            }
        qv = c.qvecs[qi]
        rel = {i: s + 0.02 * max(0.0, float(vecs[i] @ qv)) for i, s in fused.items()}
        pool = sorted(rel, key=lambda i: (-rel[i], i))[:depth]
        picked: list[int] = []
        best_sim = {i: -1.0 for i in pool}
        while pool and len(picked) < 20:
            nxt = max(pool, key=lambda i: (rel[i] - penalty * max(0.0, best_sim[i]), -i))
            picked.append(nxt)
            pool.remove(nxt)
            for i in pool:
                best_sim[i] = max(best_sim[i], float(vecs[i] @ vecs[nxt]))
        return picked if picked else base(c, qi)

    return r


def round11(emb: Any, ctx: int) -> Iterator[tuple[str, Ranker]]:
    yield f"R11 prior 0.3, dense ctx={ctx} w=0.5 (reference)", with_prior(emb, 0.5, ctx)
    for p in (0.05, 0.1, 0.2, 0.4):
        yield f"R11 MMR penalty {p}, ctx={ctx}", mmr(emb, 0.5, ctx, p)
    yield "R11 two dense lanes ctx0/ctx1 0.25 each + prior", _two_dense_prior(emb)


def _two_dense_prior(emb: Any) -> Ranker:
    def r(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        lists = {
            "bm25": kw_search(c, q)[0],
            "d0": dense_rank(ctx_vectors(c, emb, 0), c.qvecs[qi]),
            "d1": dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
        }
        fused = fuse_scores(lists, {"bm25": 1.0, "d0": 0.25, "d1": 0.25})
        qtok = set(tokenize(c.questions[qi]["q"]))
        named = {s for s in {t["speaker"] for t in c.items} if s.lower() in qtok}
        if len(named) == 1:
            fused = {i: s * 1.3 if c.items[i]["speaker"] in named else s for i, s in fused.items()}
        return finish(c, qi, fused, vecs=ctx_vectors(c, emb, 1))

    return r


def round12(emb: Any, ctx: int) -> Iterator[tuple[str, Ranker]]:
    """RRF k and dense weight, with the prior, for one embedder."""
    for k in (10, 20, 40):
        for wd in (0.5, 0.75, 1.0):
            yield f"R12 prior 0.3, ctx={ctx} dense w={wd} k={k}", with_prior(emb, wd, ctx, k=k)
    for lam in (0.2, 0.5):
        yield f"R12 prior {lam}, ctx={ctx} dense w=0.5 k=20", with_prior(emb, 0.5, ctx, lam=lam)
