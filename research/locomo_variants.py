"""The settings compared by ``locomo_ablate.py`` (one ranker per line of output)."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from locomo_lab import Conv, adjacent, bm25_rank, ctx_vectors, dense_rank, fuse

import chitta
from chitta.field.importers import Turn, import_conversation
from chitta.recall.query import keyword_query

Ranker = Callable[[Conv, int], list[int]]
_TMP = tempfile.mkdtemp(prefix="locomo-ablate-")


def posting_lists(c: Conv, emb: Any) -> list[list[int]]:
    """Posting-lane rankings from a real field (context vectors, 1 turn)."""
    digest = hashlib.sha1("\n".join(c.texts).encode()).hexdigest()[:12]
    cache = Path("/tmp/chitta-locomo-cache") / f"posting-{digest}.json"
    if c.posting is None and cache.exists():
        c.posting = json.loads(cache.read_text())
    if c.posting is None:
        root = Path(_TMP) / f"f{id(c)}"
        with chitta.open(root, durability="buffered", embedder=emb) as f:
            ids = import_conversation(
                f, [Turn(t["speaker"], t["said"], t["session"], t["at"]) for t in c.items]
            )
            pos = {mid: i for i, mid in enumerate(ids)}
            c.posting = [
                [
                    pos[h.id]
                    for h in f.recall(vector=c.qvecs[qi], k=100, lanes=("posting",), touch=False)
                ]
                for qi in range(len(c.questions))
            ]
        cache.write_text(json.dumps(c.posting))
    return c.posting


def hybrid(
    emb: Any,
    *,
    w: dict[str, float],
    k: float = 20,
    ctx: int = 1,
    qproc: bool = False,
    stem: bool = False,
    k1: float = 1.2,
    b: float = 0.75,
    adj: float = 0.0,
    seeds: int = 5,
    cos_tie: float = 0.02,
    prf: float = 0.0,
    kctx: int = 0,
    fwd: int = 0,
) -> Ranker:
    def rank(c: Conv, qi: int) -> list[int]:
        q = c.questions[qi]["q"]
        vecs = ctx_vectors(c, emb, ctx) if (w.get("dense", 0) or cos_tie) else None
        qv = c.qvecs[qi]
        lists: dict[str, list[int]] = {}
        if w.get("bm25", 0):
            lists["bm25"] = bm25_rank(
                c,
                keyword_query(q) if qproc else q,
                k1=k1,
                b=b,
                stem=stem,
                texts=_ctx_texts(kctx, fwd) if (kctx or fwd) else None,
                key=f"{kctx}/{fwd}",
            )
        if w.get("dense", 0):
            if prf:
                top = dense_rank(vecs, qv)[:3]
                qv = qv + prf * vecs[top].mean(axis=0)
                qv = qv / np.linalg.norm(qv)
            lists["dense"] = dense_rank(vecs, qv)
        if w.get("posting", 0):
            lists["posting"] = posting_lists(c, emb)[qi]
        if adj:
            lists["adj"] = adjacent(c, fuse(lists, w, k)[:seeds])
        ids = fuse(lists, {**w, "adj": adj}, k)
        if cos_tie and ids:  # the scorer: fused / best + 0.02 * cosine
            from chitta.organs.index.fusion import rrf_fuse

            names = [n for n in lists if lists[n] and {**w, "adj": adj}.get(n, 0) > 0]
            fid, fs = rrf_fuse(
                [np.array(lists[n], np.uint64) for n in names],
                k=k,
                weights=[{**w, "adj": adj}[n] for n in names],
                limit=100,
            )
            best = float(fs[0])
            sc = {
                int(i): float(s) / best + cos_tie * max(0.0, float(vecs[int(i)] @ c.qvecs[qi]))
                for i, s in zip(fid, fs)
            }
            ids = sorted(sc, key=lambda i: (-sc[i], i))
        return ids[:20]

    return rank


def variants(emb: Any) -> Iterator[tuple[str, Ranker]]:
    B, D, P = "bm25", "dense", "posting"
    yield "bm25 (as shipped)", hybrid(emb, w={B: 1}, cos_tie=0)
    yield "bm25 + query processing", hybrid(emb, w={B: 1}, qproc=True, cos_tie=0)
    yield "bm25 + stem", hybrid(emb, w={B: 1}, stem=True, cos_tie=0)
    yield "bm25 + qproc + stem", hybrid(emb, w={B: 1}, qproc=True, stem=True, cos_tie=0)
    for k1 in (0.9, 1.2, 1.5, 2.0):
        for b in (0.5, 0.75, 0.9):
            yield (
                f"bm25 qproc+stem k1={k1} b={b}",
                hybrid(emb, w={B: 1}, qproc=True, stem=True, k1=k1, b=b, cos_tie=0),
            )
    for n in (0, 1, 2):
        yield f"dense ctx={n}", hybrid(emb, w={D: 1}, ctx=n, cos_tie=0)
    yield "posting ctx=1", hybrid(emb, w={P: 1}, cos_tie=0)
    yield "hybrid (as shipped, no edges)", hybrid(emb, w={B: 1, D: 1, P: 0.5})
    yield "hybrid qproc+stem", hybrid(emb, w={B: 1, D: 1, P: 0.5}, qproc=True, stem=True)
    yield (
        "hybrid qproc+stem+kctx2",
        hybrid(emb, w={B: 1, D: 1, P: 0.5}, qproc=True, stem=True, kctx=2),
    )
    for wd in (0.3, 0.5, 0.7, 1.0):
        for wp in (0.0, 0.25, 0.5):
            for k in (10, 20, 60):
                yield (
                    f"hybrid qsk2 bm25=1 dense={wd} post={wp} k={k}",
                    hybrid(emb, w={B: 1, D: wd, P: wp}, k=k, qproc=True, stem=True, kctx=2),
                )
    for n in (0, 2):
        yield (
            f"hybrid qsk2 dense ctx={n}",
            hybrid(emb, w={B: 1, D: 1, P: 0.5}, ctx=n, qproc=True, stem=True, kctx=2),
        )
    for a in (0.2, 0.5):
        yield (
            f"hybrid qsk2 + adjacent turns w={a}",
            hybrid(emb, w={B: 1, D: 1, P: 0.5}, adj=a, qproc=True, stem=True, kctx=2),
        )
    for p in (0.3, 0.6):
        yield (
            f"hybrid qsk2 + dense PRF {p}",
            hybrid(emb, w={B: 1, D: 1, P: 0.5}, prf=p, qproc=True, stem=True, kctx=2),
        )


def _ctx_texts(n: int, fwd: int = 0) -> Callable[[Conv], list[str]]:
    def f(c: Conv) -> list[str]:
        it = c.items
        out = []
        for i, t in enumerate(it):
            lo, hi = max(0, i - n), min(len(it), i + fwd + 1)
            out.append(
                "\n".join(it[j]["text"] for j in range(lo, hi) if it[j]["session"] == t["session"])
            )
        return out

    return f


def bm25_extra(emb: Any) -> Iterator[tuple[str, Ranker]]:
    for b in (0.3, 0.4):
        yield (
            f"bm25 qproc+stem k1=1.2 b={b}",
            hybrid(emb, w={"bm25": 1}, qproc=True, stem=True, b=b, cos_tie=0),
        )
    yield (
        "bm25 qproc+stem over context 1 back 1 forward",
        hybrid(emb, w={"bm25": 1}, qproc=True, stem=True, kctx=1, fwd=1, cos_tie=0),
    )
    yield (
        "bm25 qproc+stem over context 0 back 1 forward",
        hybrid(emb, w={"bm25": 1}, qproc=True, stem=True, kctx=0, fwd=1, cos_tie=0),
    )
    for n in (1, 2, 3):

        def rank(c: Conv, qi: int, n: int = n) -> list[int]:
            return bm25_rank(
                c,
                keyword_query(c.questions[qi]["q"]),
                stem=True,
                texts=_ctx_texts(n),
                key=f"ctx{n}",
            )[:20]

        yield f"bm25 qproc+stem over context text ({n} turn)", rank


def round2(emb: Any) -> Iterator[tuple[str, Ranker]]:
    B, D, P = "bm25", "dense", "posting"
    best = {B: 1, D: 0.3, P: 0.25}
    for b in (0.3, 0.5, 0.75):
        yield (
            f"R2 bm25 qsk2 b={b}",
            hybrid(emb, w={B: 1}, qproc=True, stem=True, kctx=2, b=b, cos_tie=0),
        )
    for n in (1, 2, 3):
        yield f"R2 hybrid best weights kctx={n}", hybrid(emb, w=best, qproc=True, stem=True, kctx=n)
    yield "R2 hybrid best weights no qproc", hybrid(emb, w=best, stem=True, kctx=2)
    yield "R2 hybrid best weights no stem", hybrid(emb, w=best, qproc=True, kctx=2)
    yield "R2 hybrid best weights b=0.5", hybrid(emb, w=best, qproc=True, stem=True, kctx=2, b=0.5)
    for n in (0, 2):
        yield (
            f"R2 hybrid best weights dense ctx={n}",
            hybrid(emb, w=best, ctx=n, qproc=True, stem=True, kctx=2),
        )
    for a in (0.1, 0.3):
        yield (
            f"R2 hybrid best + adjacent w={a}",
            hybrid(emb, w=best, adj=a, qproc=True, stem=True, kctx=2),
        )
    yield (
        "R2 hybrid best + dense PRF 0.3",
        hybrid(emb, w=best, prf=0.3, qproc=True, stem=True, kctx=2),
    )
    yield (
        "R2 hybrid best no cosine tiebreak",
        hybrid(emb, w=best, qproc=True, stem=True, kctx=2, cos_tie=0),
    )


def _ctx_said(n: int) -> Callable[[Conv], list[str]]:
    def f(c: Conv) -> list[str]:
        it = c.items
        return [
            "\n".join(
                [
                    *(
                        it[j]["said"]
                        for j in range(max(0, i - n), i)
                        if it[j]["session"] == t["session"]
                    ),
                    t["text"],
                ]
            )
            for i, t in enumerate(it)
        ]

    return f


def round3(emb: Any) -> Iterator[tuple[str, Ranker]]:
    B, D, P = "bm25", "dense", "posting"
    best = {B: 1, D: 0.3, P: 0.25}
    base = hybrid(emb, w=best, qproc=True, stem=True, kctx=2)

    def no_names(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        lists = {
            B: bm25_rank(c, q, stem=True, texts=_ctx_said(2), key="said2"),
            D: dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
            P: posting_lists(c, emb)[qi],
        }
        return fuse(lists, best, 20)[:20]

    yield "R3 context lines without speaker names", no_names

    def two_kw(w2: float) -> Ranker:
        def r(c: Conv, qi: int) -> list[int]:
            q = keyword_query(c.questions[qi]["q"])
            lists = {
                B: bm25_rank(c, q, stem=True, texts=_ctx_texts(2), key="2/0"),
                "b0": bm25_rank(c, q, stem=True),
                D: dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
                P: posting_lists(c, emb)[qi],
            }
            return fuse(lists, {**best, "b0": w2}, 20)[:20]

        return r

    for w2 in (0.3, 0.6):
        yield f"R3 + keyword lane on the turn alone w={w2}", two_kw(w2)

    def dense_kq(c: Conv, qi: int) -> list[int]:
        q = keyword_query(c.questions[qi]["q"])
        qv = emb.embed([q])[0]
        lists = {
            B: bm25_rank(c, q, stem=True, texts=_ctx_texts(2), key="2/0"),
            D: dense_rank(ctx_vectors(c, emb, 1), qv),
            P: posting_lists(c, emb)[qi],
        }
        return fuse(lists, best, 20)[:20]

    yield "R3 dense embeds the keyword query", dense_kq

    def per_session(cap: int) -> Ranker:
        def r(c: Conv, qi: int) -> list[int]:
            q = keyword_query(c.questions[qi]["q"])
            lists = {
                B: bm25_rank(c, q, stem=True, texts=_ctx_texts(2), key="2/0"),
                D: dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
                P: posting_lists(c, emb)[qi],
            }
            ids = fuse(lists, best, 20)
            seen: dict[str, int] = {}
            first, later = [], []
            for i in ids:
                s = c.items[i]["session"]
                seen[s] = seen.get(s, 0) + 1
                (first if seen[s] <= cap else later).append(i)
            return (first + later)[:20]

        return r

    for cap in (2, 3, 5):
        yield f"R3 at most {cap} per session before the rest", per_session(cap)
    yield "R3 reference (best)", base


def ctx_boost(n: int, reps: int) -> Callable[[Conv], list[str]]:
    def f(c: Conv) -> list[str]:
        it = c.items
        return [
            "\n".join(
                [
                    *(
                        it[j]["text"]
                        for j in range(max(0, i - n), i)
                        if it[j]["session"] == t["session"]
                    ),
                    *[t["text"]] * reps,
                ]
            )
            for i, t in enumerate(it)
        ]

    return f


def round4(emb: Any) -> Iterator[tuple[str, Ranker]]:
    B, D, P = "bm25", "dense", "posting"
    best = {B: 1, D: 0.3, P: 0.25}
    yield "R4 hybrid best b=0.3", hybrid(emb, w=best, qproc=True, stem=True, kctx=2, b=0.3)

    def boosted(reps: int, w: dict[str, float] = best, k: int = 20) -> Ranker:
        def r(c: Conv, qi: int) -> list[int]:
            q = keyword_query(c.questions[qi]["q"])
            lists = {
                B: bm25_rank(c, q, stem=True, texts=ctx_boost(2, reps), key=f"boost{reps}"),
                D: dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
                P: posting_lists(c, emb)[qi],
            }
            return fuse(lists, w, k)[:20]

        return r

    yield "R4 turn text twice in the keyword document", boosted(2)
    for r in (3, 4, 5, 6):
        yield f"R4 turn text x{r} in the keyword document", boosted(r)
    for wd in (0.2, 0.3, 0.5):
        for wp in (0.0, 0.25):
            for k in (10, 20):
                yield f"R4 x3 weights 1/{wd}/{wp} k={k}", boosted(3, {B: 1, D: wd, P: wp}, k)

    def bm25_only(reps: int) -> Ranker:
        def r(c: Conv, qi: int) -> list[int]:
            return bm25_rank(
                c,
                keyword_query(c.questions[qi]["q"]),
                stem=True,
                texts=ctx_boost(2, reps),
                key=f"boost{reps}",
            )[:20]

        return r

    yield "R4 bm25 alone, turn text x3", bm25_only(3)

    def with_tie(tie: float) -> Ranker:
        inner = boosted(3, {B: 1, D: 0.5, P: 0.0}, 20)

        def r(c: Conv, qi: int) -> list[int]:
            ids = inner(c, qi)
            q = keyword_query(c.questions[qi]["q"])
            lists = {
                B: bm25_rank(c, q, stem=True, texts=ctx_boost(2, 3), key="boost3"),
                D: dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
            }
            from chitta.organs.index.fusion import rrf_fuse

            fid, fs = rrf_fuse(
                [np.array(v, np.uint64) for v in lists.values()],
                k=20,
                weights=[1.0, 0.5],
                limit=100,
            )
            vecs = ctx_vectors(c, emb, 1)
            sc = {
                int(i): float(s) / float(fs[0]) + tie * max(0.0, float(vecs[int(i)] @ c.qvecs[qi]))
                for i, s in zip(fid, fs)
            }
            return sorted(sc, key=lambda i: (-sc[i], i))[:20] if tie else ids

        return r

    for tie in (0.0, 0.01, 0.02):
        yield f"R5 adopted, cosine tiebreak {tie}", with_tie(tie)


def round6(emb: Any) -> Iterator[tuple[str, Ranker]]:
    """Session prior (cluster hypothesis): a turn gains from the fused relevance of its session."""
    from chitta.organs.index.fusion import rrf_fuse

    def session_prior(lam: float, top: int) -> Ranker:
        def r(c: Conv, qi: int) -> list[int]:
            q = keyword_query(c.questions[qi]["q"])
            lists = [
                bm25_rank(c, q, stem=True, texts=ctx_boost(2, 3), key="boost3"),
                dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
            ]
            fid, fs = rrf_fuse(
                [np.array(v, np.uint64) for v in lists], k=20, weights=[1.0, 0.5], limit=100
            )
            fused = {int(i): float(s) / float(fs[0]) for i, s in zip(fid, fs)}
            sess: dict[str, list[float]] = {}
            for i, s in fused.items():
                sess.setdefault(c.items[i]["session"], []).append(s)
            prior = {k: sum(sorted(v, reverse=True)[:top]) for k, v in sess.items()}
            best = max(prior.values())
            sc = {i: s + lam * prior[c.items[i]["session"]] / best for i, s in fused.items()}
            return sorted(sc, key=lambda i: (-sc[i], i))[:20]

        return r

    for lam in (0.05, 0.1, 0.2, 0.4):
        for top in (3, 10):
            yield f"R6 session prior lam={lam} top={top}", session_prior(lam, top)


def round7(emb: Any) -> Iterator[tuple[str, Ranker]]:
    def params(k1: float, b: float) -> Ranker:
        def r(c: Conv, qi: int) -> list[int]:
            q = keyword_query(c.questions[qi]["q"])
            lists = {
                "bm25": bm25_rank(c, q, k1=k1, b=b, stem=True, texts=ctx_boost(2, 3), key="boost3"),
                "dense": dense_rank(ctx_vectors(c, emb, 1), c.qvecs[qi]),
            }
            return fuse(lists, {"bm25": 1.0, "dense": 0.5}, 20)[:20]

        return r

    for k1 in (0.9, 1.2, 1.5, 2.0):
        for b in (0.5, 0.75, 0.9):
            yield f"R7 adopted, BM25 k1={k1} b={b}", params(k1, b)
