"""Learned sparse encoder vs its random initial projection: posting-lane recall.

1. Synthetic: 256-d clustered unit vectors (``datagen``), 200 queries near stored
   vectors; recall@10 of the posting lane (``PostingIndex`` over the codes)
   against the exact dense cosine top-10 (brute-force numpy). The learned encoder
   is the random one after ``passes`` of :meth:`SparseEncoder.fit` over the
   stored vectors (ops applied), with the stored codes re-encoded.
2. LoCoMo dev (``/work/shared/data/locomo/locomo-dev.json``, read at run time;
   skipped when missing): one store per conversation, each turn one memory
   ("Speaker: text"); evidence R@10 of the posting lane alone over questions of
   categories 1-4. Embeddings from ``chitta.encode.default_embedder()`` when it
   exists, else a labelled local fallback (TF-IDF + seeded random projection to
   384-d). The learned encoder is fitted on the conversation's turn vectors.

Full run (numbers in RESULTS.md, section ``sparse``)::

    CHITTA_BENCH_N=20000 nice -n 10 pytest benchmarks/bench_sparse.py -s --benchmark-disable

Smoke: ``CHITTA_BENCH_N=2000 pytest benchmarks/bench_sparse.py --benchmark-disable``.
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
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chitta.encode.sparse import SparseEncoder
from chitta.index.posting import PostingIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datagen

N = int(os.environ.get("CHITTA_BENCH_N", "20000").split(",")[0])
SMOKE = N < 10000
PASSES = int(os.environ.get("CHITTA_BENCH_PASSES", "1" if SMOKE else "3"))
NQ = 200
LOCOMO = Path(os.environ.get("CHITTA_LOCOMO", "/work/shared/data/locomo/locomo-dev.json"))


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


# ------------------------------------------------------------- synthetic


def test_synthetic_recall() -> None:
    stored = datagen.clustered_vectors(N, 256, n_clusters=max(10, N // 20), seed=0)
    queries = datagen.queries_near(stored, NQ, seed=99)
    truth = np.argsort(-(queries @ stored.T), axis=1, kind="stable")[:, :10]
    enc = SparseEncoder(256, seed=0)
    ids, codes = _posting_topk(enc, stored, queries, 10)
    r_random, s_random = _recall_at(ids, truth), float(codes.surprise.mean())
    rows = [("random (version 0)", r_random, s_random, 0.0, 0)]
    t0 = time.perf_counter()
    n_ops = 0
    op_bytes = 0
    max_op = 0
    for p in range(PASSES):
        for op in enc.fit(stored, passes=1, batch_size=256, shuffle_seed=p):
            n_ops += 1
            op_bytes += len(op.atoms)
            max_op = max(max_op, len(op.atoms))
        ids, codes = _posting_topk(enc, stored, queries, 10)
        rows.append(
            (
                f"learned, {p + 1} pass(es), version {enc.version}",
                _recall_at(ids, truth),
                float(codes.surprise.mean()),
                time.perf_counter() - t0,
                n_ops,
            )
        )
    print(f"\nsynthetic: N={N}, dim 256, {NQ} queries, recall@10 vs exact cosine top-10")
    print("| encoder | recall@10 | ratio vs random | mean surprise | fit time (s) | ops |")
    print("|---|---|---|---|---|---|")
    for name, r, s, t, n in rows:
        print(f"| {name} | {r:.3f} | {r / r_random:.2f}x | {s:.3f} | {t:.1f} | {n} |")
    print(
        f"learning ops: {n_ops}, atom bytes {op_bytes / 2**20:.1f} MiB in all, "
        f"largest op {max_op / 2**10:.0f} KiB (max_rows {enc.max_rows}), "
        f"atoms updated at least once: {int((enc.updates > 0).sum())} of {enc.n_features}"
    )
    _save("synthetic", {"n": N, "rows": rows})


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


def test_locomo_recall() -> None:
    if not LOCOMO.exists():
        pytest.skip(f"{LOCOMO} not found")
    samples = json.loads(LOCOMO.read_text())
    if SMOKE:
        samples = samples[:1]
    hits = {"random": [], "learned": []}  # per question R@10
    skipped = 0
    dropped_ids = 0
    emb_name = ""
    per_conv = []
    for sample in samples:
        conv = sample["conversation"]
        turns = []
        for key in sorted(conv, key=lambda k: (len(k), k)):
            if re.fullmatch(r"session_\d+", key):
                for t in conv[key]:
                    turns.append((t["dia_id"], f"{t['speaker']}: {t['text']}"))
        turn_ids = [did for did, _ in turns]
        canon = [f"D{int(a)}:{int(b)}" for a, b in (_ID.findall(d)[0] for d in turn_ids)]
        index_of = {c: i for i, c in enumerate(canon)}
        emb = _embedder([t for _, t in turns])
        emb_name = emb.name
        stored = _embed(emb, [t for _, t in turns])
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            raw = [e for e in qa.get("evidence", [])]
            gold = normalise_evidence(raw, set(canon))
            n_raw = sum(len(_ID.findall(str(e))) for e in raw)
            dropped_ids += n_raw - len(gold)
            if not gold:
                skipped += 1
                continue
            questions.append((qa["question"], [index_of[g] for g in gold]))
        qvecs = _embed(emb, [q for q, _ in questions])
        conv_hits: dict[str, list[float]] = {}
        for name in ("random", "learned"):
            enc = SparseEncoder(stored.shape[1], seed=0)
            if name == "learned":
                enc.fit(stored, passes=PASSES, batch_size=128)
            ids, _ = _posting_topk(enc, stored, qvecs, 10)
            rec = [
                len({int(i) for i in row} & set(g)) / len(g) for row, (_, g) in zip(ids, questions)
            ]
            hits[name] += rec
            conv_hits[name] = rec
        per_conv.append(
            (
                sample["sample_id"],
                len(turns),
                len(questions),
                *(np.mean(conv_hits[n]) for n in hits),
            )
        )
    r_random, r_learned = (float(np.mean(hits[n])) for n in ("random", "learned"))
    print(
        f"\nLoCoMo dev, embeddings: {emb_name}; posting lane alone, evidence R@10, categories 1-4"
    )
    print(
        f"questions scored {len(hits['random'])}, skipped (no gold left) {skipped}, "
        f"evidence ids dropped {dropped_ids}; learned = {PASSES} pass(es), batch 128"
    )
    print("| conversation | turns | questions | random R@10 | learned R@10 | ratio |")
    print("|---|---|---|---|---|---|")
    for cid, nt, nq, rr, rl in per_conv:
        print(f"| {cid} | {nt} | {nq} | {rr:.3f} | {rl:.3f} | {rl / max(rr, 1e-9):.2f}x |")
    print(
        f"| all | | {len(hits['random'])} | {r_random:.3f} | {r_learned:.3f} | "
        f"{r_learned / max(r_random, 1e-9):.2f}x |"
    )
    _save(
        "locomo",
        {
            "embedder": emb_name,
            "per_conv": per_conv,
            "random": r_random,
            "learned": r_learned,
            "skipped": skipped,
            "dropped": dropped_ids,
        },
    )


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
