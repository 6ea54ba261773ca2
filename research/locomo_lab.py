"""LoCoMo ablation lab, the shared pieces: conversations loaded once, each lane's ranked list
built from chitta's own components (``chitta.organs.index.bm25.BM25``, exact cosine over cached vectors,
``rrf_fuse``), and the scoring of a ranker on the tune / held-out halves.

The rounds (``locomo_variants*.py``) build rankers from these; ``locomo_ablate.py`` runs them.
Research code, not shipped: see research/README.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from eval_locomo import DEFAULT_DATA, normalise_evidence, turns
from locomo_cache import CachedEmbedder

from chitta.field.importers import Turn, context_texts
from chitta.organs.index.bm25 import BM25, PAD_ID
from chitta.organs.index.fusion import rrf_fuse

KS = (1, 5, 10, 20)
POOL = 100


@dataclass
class Conv:
    items: list[dict[str, Any]]
    texts: list[str]
    questions: list[dict[str, Any]]  # question, category, gold (indices), half
    qvecs: np.ndarray
    ctx: dict[int, np.ndarray] = field(default_factory=dict)
    bm25: dict[tuple[Any, ...], BM25] = field(default_factory=dict)
    posting: list[list[int]] | None = None


def load(emb: CachedEmbedder, path: Path = DEFAULT_DATA, limit: int | None = None) -> list[Conv]:
    data = json.loads(path.read_text())[:limit]
    convs = []
    for sample in data:
        items = turns(sample["conversation"])
        index = {t["dia_id"]: i for i, t in enumerate(items)}
        qs = []
        for qi, qa in enumerate(sample["qa"]):
            gold, _ = normalise_evidence(qa.get("evidence", []), set(index))
            if gold:
                qs.append(
                    {
                        "q": qa["question"],
                        "cat": qa["category"],
                        "gold": {index[g] for g in gold},
                        "half": "tune" if qi % 2 == 0 else "held",
                    }
                )
        qvecs = emb.embed_query([q["q"] for q in qs])
        convs.append(Conv(items, [t["text"] for t in items], qs, qvecs))
    return convs


def ctx_vectors(c: Conv, emb: CachedEmbedder, n: int) -> np.ndarray:
    """Vectors of each turn with ``n`` earlier turns; n = -1: the normalised mean of the
    turn-alone and 1-earlier-turn vectors (one vector per turn, two views)."""
    if n == -1 and n not in c.ctx:
        m = ctx_vectors(c, emb, 0) + ctx_vectors(c, emb, 1)
        c.ctx[n] = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    if (
        n == -3 and n not in c.ctx
    ):  # derived: normalised sum of the turn-alone vectors of the turn and the one before
        v0 = ctx_vectors(c, emb, 0)
        m = v0.copy()
        for i in range(1, len(c.items)):
            if c.items[i]["session"] == c.items[i - 1]["session"]:
                m[i] += v0[i - 1]
        c.ctx[n] = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    if n not in c.ctx:
        tt = [Turn(t["speaker"], t["said"], t["session"], t["at"]) for t in c.items]
        c.ctx[n] = emb.embed(context_texts(tt, n))
    return c.ctx[n]


def bm25_rank(
    c: Conv,
    query: str,
    *,
    k1: float = 1.2,
    b: float = 0.75,
    stem: bool = False,
    texts: Callable[[Conv], list[str]] | None = None,
    key: str = "",
) -> list[int]:
    ik = (k1, b, stem, key)
    if ik not in c.bm25:
        idx = BM25(k1, b, stem=stem)
        idx.add(np.arange(len(c.texts), dtype=np.uint64), texts(c) if texts else c.texts)
        c.bm25[ik] = idx
    if not query.strip():
        return []
    ids, _ = c.bm25[ik].search(query, POOL)
    return [int(i) for i in ids if i != PAD_ID]


def dense_rank(vecs: np.ndarray, q: np.ndarray) -> list[int]:
    sims = vecs @ q
    top = np.argsort(-sims, kind="stable")[:POOL]
    return [int(i) for i in top]


def adjacent(c: Conv, seeds: list[int]) -> list[int]:
    seen, out = set(seeds), []
    for s in seeds:
        for j in (s - 1, s + 1):
            if (
                0 <= j < len(c.items)
                and c.items[j]["session"] == c.items[s]["session"]
                and j not in seen
            ):
                seen.add(j)
                out.append(j)
    return out


def fuse(lists: dict[str, list[int]], weights: dict[str, float], k: float) -> list[int]:
    names = [n for n in lists if lists[n] and weights.get(n, 0) > 0]
    if not names:
        return []
    ids, _ = rrf_fuse(
        [np.array(lists[n], np.uint64) for n in names],
        k=k,
        weights=[weights[n] for n in names],
        limit=POOL,
    )
    return [int(i) for i in ids]


def score(
    convs: list[Conv], ranker: Callable[[Conv, int], list[int]]
) -> dict[str, dict[Any, dict[int, float]]]:
    """half -> category (and 'all' = 1-4) -> k -> mean R@k."""
    acc: dict[str, dict[Any, dict[int, list[float]]]] = {}
    for c in convs:
        for qi, q in enumerate(c.questions):
            got = ranker(c, qi)
            for half in (q["half"], "both"):
                for cat in (q["cat"], "all") if q["cat"] != 5 else (5,):
                    slot = acc.setdefault(half, {}).setdefault(cat, {k: [] for k in KS})
                    for k in KS:
                        slot[k].append(len(set(got[:k]) & q["gold"]) / len(q["gold"]))
    return {
        h: {cat: {k: float(np.mean(v)) for k, v in ks.items()} for cat, ks in cats.items()}
        for h, cats in acc.items()
    }


def line(name: str, r: dict[str, Any]) -> str:
    b, t, h = r["both"], r["tune"], r["held"]
    cats = " ".join(f"{b[c][10]:.3f}" for c in (1, 2, 3, 4))
    return (
        f"{name:<44} tune {t['all'][10]:.3f} held {h['all'][10]:.3f} | all R@5 {b['all'][5]:.3f} "
        f"R@10 {b['all'][10]:.3f} R@20 {b['all'][20]:.3f} | cats {cats} | c5 {b[5][10]:.3f}"
    )


def inner_embedder(name: str) -> Any:
    if name == "minilm":
        from chitta.encode import OnnxMiniLM

        return OnnxMiniLM()
    if name == "nomic":
        from chitta.encode import NomicEmbedder

        return NomicEmbedder()
    from chitta.encode import MpnetEmbedder

    return MpnetEmbedder()
