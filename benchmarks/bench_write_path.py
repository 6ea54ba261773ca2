"""The write path an agent uses, with the real default model (issue 17, item 2).

Side by side in one run, rounds alternating which goes first:

- ``deferred``: ``chitta.open(path)`` with the default model as installed: ``remember()``
  logs the text and returns; the process's background embedder logs the vectors.
- ``sync``: the same model forced onto the caller's thread (``background = False``):
  the write path before this change (each remember embeds its text, then its new words).

Per path and round, on a fresh field: ``open`` time, the first ``remember()`` after
open, p50/p99 of the next ``N`` calls, whether a ``recall`` issued 1 ms after a
``remember`` of a fresh word finds it (top 10), and (deferred) the background
throughput: texts / seconds from the first remember until ``wait_embedded()`` returns.

Run: ``python benchmarks/bench_write_path.py`` (``CHITTA_BENCH_N`` texts per round,
default 300; ``CHITTA_BENCH_ROUNDS``, default 3). Smoke (CI): ``pytest
benchmarks/bench_write_path.py`` (hashing-free: skipped without the model).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import chitta
from chitta.encode import onnx_minilm

SENTENCES = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "real_text_sentences.txt"


class SyncMiniLM(onnx_minilm.OnnxMiniLM):
    """The default model embedded on the caller's thread (the old write path)."""

    background = False


def _texts(n: int) -> list[str]:
    base = [s.strip() for s in SENTENCES.read_text().splitlines() if s.strip()]
    return [f"{base[i % len(base)]} ({i})" for i in range(n)]


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def one_round(path: str, root: Path, n: int) -> dict[str, Any]:
    texts = _texts(n)
    t0 = time.perf_counter()
    f = chitta.open(root, embedder=SyncMiniLM() if path == "sync" else "auto")
    t_open = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        f.remember(texts[0])
        first = time.perf_counter() - t1
        lat = []
        for t in texts[1:]:
            a = time.perf_counter()
            f.remember(t)
            lat.append(time.perf_counter() - a)
        # paced, as an agent writes: one call every 5 ms while the model works meanwhile
        paced = []
        if path == "deferred":
            for t in texts[: n // 2]:
                time.sleep(0.005)
                a = time.perf_counter()
                f.remember(t + " (again)")
                paced.append(time.perf_counter() - a)
        target = f.remember("the axolotl regrew its gill yesterday")
        time.sleep(0.001)
        found = target in [h.id for h in f.recall("axolotl gill", k=10, touch=False)]
        f.wait_embedded()
        total = time.perf_counter() - t1
        vecs = f.core.index.vector_count
    finally:
        f.close()
    return {
        "path": path,
        "open_ms": t_open * 1e3,
        "first_ms": first * 1e3,
        "p50_ms": statistics.median(lat) * 1e3,
        "p99_ms": _pct(lat, 0.99) * 1e3,
        "max_ms": max(lat) * 1e3,
        "paced_p99_ms": _pct(paced, 0.99) * 1e3 if paced else float("nan"),
        "paced_max_ms": max(paced) * 1e3 if paced else float("nan"),
        "recall_1ms_finds": found,
        "texts_per_s_until_embedded": (n + 1 + len(paced)) / total,
        "vectors": vecs,
    }


def model_round(n: int) -> dict[str, Any]:
    """The model alone on the same texts, batches of 64 (what bounds the background)."""
    emb = onnx_minilm.OnnxMiniLM()
    emb.load()
    texts = _texts(n)
    t0 = time.perf_counter()
    for i in range(0, n, 64):
        emb.embed(texts[i : i + 64])
    return {"path": "model", "texts_per_s": n / (time.perf_counter() - t0)}


def run(n: int, rounds: int) -> list[dict[str, Any]]:
    out = []
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            out.append(model_round(n))
            print(json.dumps(out[-1]), file=sys.stderr, flush=True)
            order = ("deferred", "sync") if r % 2 == 0 else ("sync", "deferred")
            for path in order:
                res = one_round(path, Path(d) / f"{path}-{r}", n)
                res["round"] = r
                out.append(res)
                print(json.dumps(res), file=sys.stderr, flush=True)
    return out


def summary(results: list[dict[str, Any]]) -> str:
    head = "| path | open ms | first remember ms | p50 ms | p99 ms | paced p99 / max ms "
    lines = [head + "| recall 1 ms later | texts/s |"]
    lines.append("|---|---|---|---|---|---|---|---|")
    for path in ("deferred", "sync"):
        rs = [r for r in results if r["path"] == path]
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "path"}
        lines.append(
            f"| {path} | {med['open_ms']:.1f} | {med['first_ms']:.2f} | {med['p50_ms']:.3f} | "
            f"{med['p99_ms']:.3f} | {med['paced_p99_ms']:.3f} / {med['paced_max_ms']:.3f} | "
            f"{sum(r['recall_1ms_finds'] for r in rs)}/{len(rs)} | "
            f"{med['texts_per_s_until_embedded']:.0f} |"
        )
    model = statistics.median(r["texts_per_s"] for r in results if r["path"] == "model")
    lines.append(f"\nthe model alone, batches of 64: {model:.0f} texts/s")
    return "\n".join(lines)


def test_smoke() -> None:
    import pytest

    if not onnx_minilm.is_available():
        pytest.skip("the default model is not installed")
    res = run(20, 1)
    assert all(r["vectors"] >= 21 for r in res if r["path"] != "model")


if __name__ == "__main__":
    results = run(
        int(os.environ.get("CHITTA_BENCH_N", "300")),
        int(os.environ.get("CHITTA_BENCH_ROUNDS", "3")),
    )
    print(summary(results))
