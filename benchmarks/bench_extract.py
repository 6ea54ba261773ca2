"""What write-time triplet extraction costs ``remember()`` (issue 18, item 2).

Side by side in one run, rounds alternating which goes first, on fresh fields:

- ``off`` / ``on``: the field setting ``extract_triplets`` (chitta/field/extract_write.py);
- ``embedder=None`` (the log and the indexes only: the native fast path when off) and,
  when the default model is installed, ``embedder="auto"`` (the path an agent uses:
  the vector comes from the background embedder).

Per case: p50 and mean of ``remember()`` over ``N`` real sentences (the repository's
own prose, tests/helpers/real_text_sentences.txt), ``remember_many`` throughput in
batches of 256, triplets logged per text, and the extractor alone per text.

Run: ``python benchmarks/bench_extract.py`` (``CHITTA_BENCH_N``, default 2000;
``CHITTA_BENCH_ROUNDS``, default 3). Smoke: ``pytest benchmarks/bench_extract.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import chitta
from chitta.encode.extract import extract

SENTENCES = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "real_text_sentences.txt"
LABELLED = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "unit"
    / "encode"
    / "data"
    / "extraction_labelled.txt"
)


def _texts(n: int) -> list[str]:
    base = [s.strip() for s in SENTENCES.read_text().splitlines() if s.strip()]
    facts = [
        line.partition("=>")[0].strip()
        for line in LABELLED.read_text().splitlines()
        if "=>" in line and not line.startswith("#")
    ]
    both = [x for pair in zip(base, facts) for x in pair]  # prose and fact-bearing sentences
    return [f"{both[i % len(both)]} ({i})" for i in range(n)]


def _model_available() -> bool:
    try:
        from chitta.encode import onnx_minilm

        onnx_minilm.OnnxMiniLM()
    except Exception:  # noqa: BLE001 (any failure to load means: no model here)
        return False
    return True


def one_case(root: Path, embedder: Any, on: bool, texts: list[str]) -> dict[str, float]:
    f = chitta.open(root, embedder=embedder)
    try:
        f.call("kg_set_extraction", on=on)
        f.remember("warm up")
        lat = []
        for t in texts:
            t0 = time.perf_counter()
            f.remember(t)
            lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i in range(0, len(texts), 256):
            f.remember_many(texts[i : i + 256])
        many = time.perf_counter() - t0
        triplets = f.call("kg_query", limit=1)["total"]
        if embedder == "auto":
            f.wait_embedded()
    finally:
        f.close()
    return {
        "p50_us": statistics.median(lat) * 1e6,
        "mean_us": statistics.fmean(lat) * 1e6,
        "many_per_s": len(texts) / many,
        "triplets": float(triplets),
    }


def run(n: int, rounds: int) -> dict[str, Any]:
    texts = _texts(n)
    t0 = time.perf_counter()
    found = sum(len(extract(t)) for t in texts)
    alone_us = (time.perf_counter() - t0) / n * 1e6
    embedders: list[Any] = [None] + (["auto"] if _model_available() else [])
    out: dict[str, Any] = {"n": n, "extract_alone_us": alone_us, "triplets_per_text": found / n}
    for emb in embedders:
        acc: dict[bool, list[dict[str, float]]] = {False: [], True: []}
        for r in range(rounds):
            for on in (False, True) if r % 2 == 0 else (True, False):
                with tempfile.TemporaryDirectory() as d:
                    acc[on].append(one_case(Path(d) / "f", emb, on, texts))
        name = "none" if emb is None else "auto"
        for on in (False, True):
            keys = acc[on][0].keys()
            out[f"{name}_{'on' if on else 'off'}"] = {
                k: statistics.median(x[k] for x in acc[on]) for k in keys
            }
        off, on_ = out[f"{name}_off"], out[f"{name}_on"]
        out[f"{name}_ratio_p50"] = on_["p50_us"] / off["p50_us"]
        out[f"{name}_ratio_mean"] = on_["mean_us"] / off["mean_us"]
        out[f"{name}_ratio_many"] = off["many_per_s"] / on_["many_per_s"]
    return out


def test_bench_extract_smoke() -> None:
    result = run(50, 1)
    assert result["none_on"]["triplets"] > 0


if __name__ == "__main__":
    n = int(os.environ.get("CHITTA_BENCH_N", "2000"))
    rounds = int(os.environ.get("CHITTA_BENCH_ROUNDS", "3"))
    print(json.dumps(run(n, rounds), indent=2))
