"""A paraphrase the query's vector finds first is not buried by keyword-only matches
(chitta/recall/lane_floor.py, issue 17 item 4).

Oracles: each case's own target (the memory that answers it, written for the case), the
lanes' own ranks of it (the precondition: the keyword lane misses it, a vector-driven lane
ranks it first), the same field with the floor off (where it is buried), the Python
reference path (``explain=True``) against the native tail, and a brute-force statement of
the rule over random fused scores.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.recall.lane_floor import FLOOR_LANES, dense_floor
from chitta.recall.presets import settings_for

# (query, the memory that answers it in other words, memories that only repeat its words)
CASES = [
    (
        "why did auth go down",
        "The login outage happened because the identity provider's certificate expired.",
        [
            "The auth service is owned by the platform team.",
            "The auth service is owned by Priya since March.",
            "The auth service is owned by security.",
            "The auth service is owned by the identity group in Berlin.",
        ],
    ),
    (
        "what made the billing job crash",
        "The nightly invoice run died because it ran out of memory on the large customer export.",
        [
            "The billing job is scheduled by cron at 2am.",
            "The billing job is maintained by the payments team.",
            "Billing job logs are kept for 30 days.",
            "The billing job config lives in billing.yaml.",
            "Billing job alerts go to the on-call.",
        ],
    ),
    (
        "how do I get the database back after a failure",
        "To restore Postgres, take the latest snapshot from S3 and replay the WAL onto a new host.",
        [
            "The database is hosted in eu-west-1.",
            "The database team meets on Thursdays.",
            "The database has 3 read replicas.",
            "Database credentials are in the vault.",
            "The database runs version 15.",
        ],
    ),
    (
        "why is the website slow for users",
        "Page loads lag because the CDN cache was purged and every request now hits the origin.",
        [
            "The website is built with Next.js.",
            "The website is owned by the growth team.",
            "The website for users has a dark mode.",
            "The website repository is on GitHub.",
            "Website analytics are in Plausible.",
        ],
    ),
]


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    pytest.importorskip("onnxruntime")
    from chitta.encode import OnnxMiniLM

    try:
        m = OnnxMiniLM()
        m.load()
    except Exception as exc:  # noqa: BLE001  (the model package is an extra)
        pytest.skip(f"MiniLM not available: {exc}")
    return m


def _rank(root: Path, model, case, floor: bool):  # type: ignore[no-untyped-def]
    query, target, noise = case
    settings = dataclasses.replace(settings_for(model), dense_floor=floor)
    with chitta.open(root, embedder=model, recall_settings=settings, clock=lambda: 1.78e9) as f:
        f.remember_many(noise)
        tid = f.remember_many([target])[0]
        hits = f.recall(query, k=len(noise) + 1, touch=False)
        reference = f.recall(query, k=len(noise) + 1, touch=False, explain=True)
        assert [h.id for h in hits] == [h.id for h in reference]  # native tail == reference
        ids = [h.id for h in hits]
        lanes = dict(hits[ids.index(tid)].lanes)
        return ids.index(tid) + 1, lanes, hits[0].text


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_vector_first_paraphrase_ranks_in_the_top_two(tmp_path, model, case):  # type: ignore[no-untyped-def]
    rank, lanes, first = _rank(tmp_path / "on", model, case, floor=True)
    # the case is what it claims: no keyword match, first in a lane the query's vector drives
    assert "bm25" not in lanes and any(lanes.get(n) == 1 for n in FLOOR_LANES), lanes
    assert rank <= 2
    off_rank, _, off_first = _rank(tmp_path / "off", model, case, floor=False)
    assert off_rank >= rank and first == off_first  # the keyword lane's winner keeps first


def test_the_filers_case_was_buried_without_the_floor(tmp_path, model):  # type: ignore[no-untyped-def]
    assert _rank(tmp_path / "off", model, CASES[0], floor=False)[0] > 2


def _reference(fused: np.ndarray, ranks: np.ndarray, names: list[str]) -> np.ndarray:
    """The rule stated plainly: each floored lane's first candidate the keyword lane missed is
    lifted to halfway between the best and second best of the other candidates' scores."""
    out = fused.astype(np.float64).copy()
    kw = names.index("bm25")
    for lane in FLOOR_LANES:
        if lane not in names:
            continue
        for j in range(len(fused)):
            if ranks[j, names.index(lane)] == 1 and ranks[j, kw] == 0:
                rest = sorted((float(x) for i, x in enumerate(fused) if i != j), reverse=True)
                lifted = (rest[0] + rest[1]) / 2 if rest[0] > rest[1] else rest[1]
                out[j] = max(float(fused[j]), lifted) if fused[j] <= rest[1] else fused[j]
                break
    return out


def test_dense_floor_matches_the_rule_on_random_scores() -> None:
    rng = np.random.default_rng(7)
    names = ["bm25", "dense", "expansion"]
    for _ in range(500):
        n = int(rng.integers(3, 12))
        fused = rng.random(n)
        ranks = np.zeros((n, 3), np.int64)
        for c in range(3):  # each lane ranks a random subset 1..m
            members = rng.permutation(n)[: int(rng.integers(0, n + 1))]
            ranks[members, c] = np.arange(1, len(members) + 1)
        got = dense_floor(fused, ranks, names)
        expected = _reference(fused, ranks, names)
        np.testing.assert_array_equal(fused if got is None else got, expected)
        assert float((fused if got is None else got).max()) == float(fused.max())
