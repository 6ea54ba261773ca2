"""Learned sparse encoder vs its random initial projection: posting-lane recall.

Every comparison runs over several seeds (``CHITTA_BENCH_SEEDS``, default
0,1,2): seed ``s`` gives the random encoder ``SparseEncoder(dim, seed=s)`` and
the learned one is that same encoder after ``fit`` (shuffle seed ``s``; every
step an ``UpdateSparseEncoder`` op, applied). Two learned variants: "every
winner" (``max_rows = n_features``: every winning atom of a batch learns) and
"bounded" (``max_rows = 256``, what ``Field.learn_encoder`` uses to bound the
log). Tables give mean +- standard deviation over the seeds of recall and of
the per-seed ratio learned / random.

1. Synthetic (``N`` unit vectors, dim 256, 200 queries near stored vectors,
   recall@10 of the posting lane against the exact cosine top-10):
   a. isotropic clusters (``datagen.clustered_vectors``, ``N / 20`` clusters);
   b. a low-dimensional manifold: a 16-d Gaussian latent mapped linearly into
      256-d, plus a shared offset and a little isotropic noise (the shape of
      real embedding sets: anisotropic, with a common direction).
2. LoCoMo dev (``/work/shared/data/locomo/locomo-dev.json``, read at run time;
   skipped when missing): one store per conversation, each turn one memory
   ("Speaker: text"); evidence R@10 of the posting lane alone over questions of
   categories 1-4. Embeddings from ``chitta.encode.default_embedder()`` (the
   real MiniLM when the embed extra is installed, else the hashing embedder:
   the table names it). Learned = ``PASSES`` passes over the turn vectors.

Full run (numbers in RESULTS.md, section ``sparse``)::

    OPENBLAS_NUM_THREADS=1 CHITTA_BENCH_N=5000 nice -n 10 pytest benchmarks/bench_sparse.py -s --benchmark-disable

Smoke (the default, what CI runs): ``N = 1000``, one seed, one pass, the first LoCoMo
conversation only: ``pytest benchmarks/bench_sparse.py --benchmark-disable``.
Nothing about speed or quality is asserted; the tables are printed.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chitta.encode.sparse import SparseEncoder
from chitta.organs.index.posting import PostingIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen

N = int(os.environ.get("CHITTA_BENCH_N", "1000").split(",")[0])
SMOKE = N < 2000
SEEDS = [int(s) for s in os.environ.get("CHITTA_BENCH_SEEDS", "0" if SMOKE else "0,1,2").split(",")]
PASSES = int(os.environ.get("CHITTA_BENCH_PASSES", "1" if SMOKE else "3"))
NQ = 200
LOCOMO = Path(os.environ.get("CHITTA_LOCOMO", "/work/shared/data/locomo/locomo-dev.json"))
VARIANTS = {"every winner": 16384, "bounded (max_rows 256)": 256}


def _posting_topk(enc: SparseEncoder, stored: np.ndarray, queries: np.ndarray, k: int) -> Any:
    codes = enc.encode(stored)
    idx = PostingIndex(enc.n_features, enc.active)
    idx.add(np.arange(len(stored), dtype=np.uint64), codes.features, codes.activations)
    ids, _ = idx.search(enc.encode(queries).features, k)
    return ids, codes


def _recall_at(ids: np.ndarray, truth: np.ndarray) -> float:
    return float(
        np.mean([len(set(a.tolist()) & set(b.tolist())) / len(b) for a, b in zip(ids, truth)])
    )


def _hub(features: np.ndarray) -> float:
    """The largest share of codes one atom is in (1/256 = fair for 64 of 16,384)."""
    return float(np.bincount(features.ravel().astype(np.int64)).max() / len(features))


def _ms(values: list[float]) -> str:
    return f"{np.mean(values):.3f} +- {np.std(values):.3f}"


def _table(title: str, results: dict[str, dict[str, list[float]]]) -> None:
    """results[variant] = {"recall": [...per seed], "ratio": [...], "surprise": [...], "hub": [...]}"""
    print(f"\n{title}; seeds {SEEDS}")
    print(
        "| encoder | recall | learned / random | min ratio | mean surprise | top atom share "
        "| op bytes per memory per pass |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        ratio = (
            "1.00x"
            if name == "random"
            else f"{np.mean(r['ratio']):.2f}x +- {np.std(r['ratio']):.2f}"
        )
        low = "-" if name == "random" else f"{min(r['ratio']):.2f}x"
        print(
            f"| {name} | {_ms(r['recall'])} | {ratio} | {low} | {np.mean(r['surprise']):.3f} | "
            f"{np.mean(r['hub']):.3f} | {np.mean(r['log']) / 1024:.1f} KiB |"
        )


# ------------------------------------------------------------- synthetic


def manifold_vectors(n: int, dim: int = 256, latent: int = 16, seed: int = 0) -> np.ndarray:
    """``n`` unit vectors on a noisy ``latent``-d linear manifold with a shared offset."""
    rng = np.random.default_rng(seed + 5)
    mix = rng.standard_normal((latent, dim)).astype(np.float32)
    offset = 0.3 * rng.standard_normal(dim).astype(np.float32)
    z = rng.standard_normal((n, latent)).astype(np.float32)
    x = z @ mix / 4 + offset + 0.05 * rng.standard_normal((n, dim)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _compare(
    groups: list[tuple[np.ndarray, Any]],
    fit_batch: int,
    score: Callable[[np.ndarray, Any], list[float]],
) -> dict[str, dict[str, list[float]]]:
    """For every seed and variant: per-question scores of random and learned encoders."""
    out: dict[str, dict[str, list[float]]] = {
        n: {"recall": [], "ratio": [], "surprise": [], "hub": [], "log": []}
        for n in ("random", *VARIANTS)
    }
    for seed in SEEDS:
        base = 0.0
        for name in ("random", *VARIANTS):
            per_q: list[float] = []
            surprise, hub = [], []
            log_bytes = n_stored = 0
            for store, queries_truth in groups:
                enc = SparseEncoder(store.shape[1], seed=seed)
                n_stored += len(store)
                if name != "random":
                    fitted = enc.fit(
                        store,
                        passes=PASSES,
                        batch_size=fit_batch,
                        shuffle_seed=seed,
                        max_rows=VARIANTS[name],
                    )
                    log_bytes += sum(len(op.atoms) + len(op.thresholds) for op in fitted)
                ids, codes = _posting_topk(enc, store, queries_truth[0], 10)
                per_q += score(ids, queries_truth[1])
                surprise.append(float(codes.surprise.mean()))
                hub.append(_hub(codes.features))
            r = float(np.mean(per_q))
            base = r if name == "random" else base
            out[name]["recall"].append(r)
            out[name]["ratio"].append(r / max(base, 1e-9))
            out[name]["surprise"].append(float(np.mean(surprise)))
            out[name]["hub"].append(float(np.mean(hub)))
            out[name]["log"].append(log_bytes / n_stored / PASSES)
    return out


def _synthetic(stored: np.ndarray) -> list[tuple[np.ndarray, Any]]:
    queries = datagen.queries_near(stored, NQ, seed=99)
    truth = np.argsort(-(queries @ stored.T), axis=1, kind="stable")[:, :10]
    return [(stored, (queries, truth))]


def _score_topk(ids: np.ndarray, truth: np.ndarray) -> list[float]:
    return [len(set(a.tolist()) & set(b.tolist())) / len(b) for a, b in zip(ids, truth)]


@pytest.mark.parametrize("shape", ["isotropic clusters", "low-dim manifold"])
def test_synthetic_recall(shape: str) -> None:
    t0 = time.perf_counter()
    if shape == "isotropic clusters":
        stored = datagen.clustered_vectors(N, 256, n_clusters=max(10, N // 20), seed=0)
    else:
        stored = manifold_vectors(N)
    res = _compare(_synthetic(stored), 256, _score_topk)
    _table(
        f"synthetic {shape}: N={N}, dim 256, {NQ} queries, recall@10 vs exact cosine top-10, "
        f"{PASSES} pass(es) of batch 256 ({time.perf_counter() - t0:.0f} s)",
        res,
    )
    _save(f"synthetic_{shape.split()[0]}", {"n": N, "seeds": SEEDS, "results": res})


# ---------------------------------------------------------------- LoCoMo


_ID = re.compile(r"D:?(\d+):0*(\d+)")


def normalise_evidence(evidence: list[str], turn_ids: set[str]) -> list[str]:
    """Split "D8:6; D9:17" and space-joined lists, fix "D:11:26" / "D30:05",
    drop ids naming no turn; keeps first-seen order, no repeats."""
    out: list[str] = []
    for item in evidence:
        for a, b in _ID.findall(str(item)):
            did = f"D{int(a)}:{int(b)}"
            if did in turn_ids and did not in out:
                out.append(did)
    return out


_TOKEN = re.compile(r"[a-z0-9]+")


class TfidfProjection:
    """LOCAL FALLBACK embedder: sublinear TF-IDF over the store's turns, projected
    to 384-d with a seeded Gaussian matrix, L2-normalised. Not a semantic model."""

    name = "TF-IDF + random projection 384-d (local fallback)"

    def __init__(self, corpus: list[str], dim: int = 384, seed: int = 0) -> None:
        docs = [_TOKEN.findall(t.lower()) for t in corpus]
        df = Counter(tok for d in docs for tok in set(d))
        self.vocab = {tok: i for i, tok in enumerate(sorted(df))}
        n = len(docs)
        self.idf = np.array([math.log((1 + n) / (1 + df[t])) + 1 for t in sorted(df)])
        rng = np.random.default_rng(seed)
        self.proj = rng.standard_normal((len(self.vocab) + 1, dim)) / math.sqrt(dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.proj.shape[1]))
        for r, text in enumerate(texts):
            counts = Counter(t for t in _TOKEN.findall(text.lower()) if t in self.vocab)
            if not counts:
                out[r] = self.proj[-1]  # an "empty" token: never an all-zero vector
                continue
            for tok, c in counts.items():
                i = self.vocab[tok]
                out[r] += (1 + math.log(c)) * self.idf[i] * self.proj[i]
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out.astype(np.float32)


def _embedder(corpus: list[str]) -> Any:
    try:
        from chitta.encode import default_embedder  # type: ignore[attr-defined]
    except ImportError:
        return TfidfProjection(corpus)
    emb = default_embedder()
    if not hasattr(emb, "name"):
        emb.name = type(emb).__name__
    return emb


def _embed(emb: Any, texts: list[str]) -> np.ndarray:
    out = emb.embed(texts) if hasattr(emb, "embed") else emb(texts)
    return np.ascontiguousarray(out, dtype=np.float32)


def _locomo_groups() -> tuple[str, list[tuple[np.ndarray, Any]], dict[str, int]]:
    samples = json.loads(LOCOMO.read_text())
    if SMOKE:
        samples = samples[:1]
    groups = []
    skipped = dropped_ids = 0
    emb_name = ""
    for sample in samples:
        conv = sample["conversation"]
        turns = []
        for key in sorted(conv, key=lambda k: (len(k), k)):
            if re.fullmatch(r"session_\d+", key):
                for t in conv[key]:
                    turns.append((t["dia_id"], f"{t['speaker']}: {t['text']}"))
        canon = [f"D{int(a)}:{int(b)}" for a, b in (_ID.findall(d)[0] for d, _ in turns)]
        index_of = {c: i for i, c in enumerate(canon)}
        emb = _embedder([t for _, t in turns])
        emb_name = emb.name
        stored = _embed(emb, [t for _, t in turns])
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            raw = list(qa.get("evidence", []))
            gold = normalise_evidence(raw, set(canon))
            dropped_ids += sum(len(_ID.findall(str(e))) for e in raw) - len(gold)
            if not gold:
                skipped += 1
                continue
            questions.append((qa["question"], [index_of[g] for g in gold]))
        qvecs = _embed(emb, [q for q, _ in questions])
        groups.append((stored, (qvecs, [g for _, g in questions])))
    return emb_name, groups, {"skipped": skipped, "dropped": dropped_ids}


def _score_gold(ids: np.ndarray, gold: list[list[int]]) -> list[float]:
    return [len({int(i) for i in row} & set(g)) / len(g) for row, g in zip(ids, gold)]


def test_locomo_recall() -> None:
    if not LOCOMO.exists():
        pytest.skip(f"{LOCOMO} not found")
    t0 = time.perf_counter()
    emb_name, groups, counts = _locomo_groups()
    res = _compare(groups, 128, _score_gold)
    n_q = sum(len(g[1][1]) for g in groups)
    _table(
        f"LoCoMo dev ({len(groups)} conversations), embeddings: {emb_name}; posting lane alone, "
        f"evidence R@10 over {n_q} questions of categories 1-4 (skipped: no gold left "
        f"{counts['skipped']}, evidence ids dropped {counts['dropped']}); learned = {PASSES} "
        f"pass(es) of batch 128 per conversation ({time.perf_counter() - t0:.0f} s)",
        res,
    )
    _save("locomo", {"embedder": emb_name, "seeds": SEEDS, "results": res, **counts})


# ------------------------------------------------------------ encode speed


def test_encode_10k_x_384(benchmark: Any) -> None:
    """Write path: codes for a batch of memories (per memory = time / n)."""
    n = min(N, 10000)
    x = datagen.clustered_vectors(n, 384, n_clusters=100, seed=3)
    enc = SparseEncoder(384, seed=0)
    codes = benchmark(enc.encode, x)
    assert codes.features.shape == (n, 64)


def test_encode_one_query_384(benchmark: Any) -> None:
    """Recall path: the code of one query vector."""
    x = datagen.clustered_vectors(1, 384, n_clusters=1, seed=4)[0]
    enc = SparseEncoder(384, seed=0)
    codes = benchmark(enc.encode, x)
    assert codes.features.shape == (1, 64)


def test_learn_step_384(benchmark: Any) -> None:
    """One Field learning step: 1,024 recent vectors, at most max_rows atoms changed."""
    x = datagen.clustered_vectors(1024, 384, n_clusters=100, seed=5)
    enc = SparseEncoder(384, seed=0)
    op = benchmark(enc.learn, x)
    assert len(op.rows) <= enc.max_rows


def _save(name: str, data: Any) -> None:
    out = os.environ.get("CHITTA_BENCH_OUT")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, f"sparse_{name}.json").write_text(json.dumps(data, default=float, indent=1))
