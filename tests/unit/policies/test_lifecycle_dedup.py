"""Dedup: F_merge decisions on hand-made pairs, significant tokens, and merges
through the real Field and log (provenance kept, replay gives the same state)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _lifecycle_helpers import Clock, assert_replays_same, open_field, unit, with_cosine

import chitta
from chitta.policies import dedup

BASE = unit(np.arange(1, 17, dtype=np.float32))


@pytest.mark.parametrize(
    ("a", "b", "cos", "merge"),
    [
        ("the server listens on port 8080", "the server listens on port 8080", 1.0, True),
        ("the server listens on port 8080", "the server listens on port 8081", 1.0, False),
        ("set max_retries to 3", "set max_retries to three", 0.99, False),  # 3 vs none
        ("tests run with pytest", "the tests are run with pytest", 0.96, True),
        ("tests run with pytest", "the tests are run with pytest", 0.94, False),
        ("call os.path.join here", "call os.path.join there", 0.97, True),
        ("call os.path.join here", "call os.path.split here", 0.99, False),
        ("getUserName is slow", "getUserId is slow", 0.99, False),
        ("python 3.11 is required", "python 3.12 is required", 0.99, False),
    ],
)
def test_f_merge_decisions_on_hand_made_pairs(a: str, b: str, cos: float, merge: bool) -> None:
    f = dedup.f_merge(cos, a, b)
    assert (f < 0) is merge
    if not math.isinf(f):
        assert f == pytest.approx((1 - cos) - dedup.LAMBDA)  # loss + lambda * (-1)


def test_significant_tokens() -> None:
    assert dedup.significant_tokens("port 8080 on host db-01, see `make check`") == {
        "8080",
        "db-01",
        "make check",
    }
    assert dedup.significant_tokens("the plain words only") == frozenset()
    assert dedup.significant_tokens("src/chitta/field.py and HTTP at 10:30") >= {
        "src/chitta/field.py",
        "HTTP",
        "10:30",
    }


def test_canonical_hash_ignores_case_and_spacing_only() -> None:
    assert dedup.canonical_hash("Port  8080\n") == dedup.canonical_hash("port 8080")
    assert dedup.canonical_hash("port 8080") != dedup.canonical_hash("port 8080.")


def test_near_duplicates_merge_with_provenance(tmp_path: Path) -> None:
    clock = Clock()
    f = open_field(tmp_path / "f", clock)
    a = f.remember("tests run with pytest", embedding=BASE, tags=["ci"])
    clock.advance(1)
    b = f.remember("the tests are run with pytest", embedding=with_cosine(BASE, 0.97), tags=["py"])
    far = f.remember("tests run with nose", embedding=with_cosine(BASE, 0.90, seed=1))
    port_a = f.remember("listen on port 8080", embedding=with_cosine(BASE, 0.2, seed=2))
    port_b = f.remember("listen on port 8081", embedding=with_cosine(BASE, 0.2, seed=2))
    report = f.dedup_pass()
    assert (report.exact, report.near, report.merges) == (0, 1, ((a, b),))
    assert b not in f and a in f and far in f and port_a in f and port_b in f
    kept = f.get(a)
    assert kept.meta == {"merged_from": [b]}
    assert set(kept.tags) == {"ci", "py"}
    ops_b = [r["op"] for r in f.history(b)]
    assert ops_b[0] == "PutPayload" and ops_b[-1] == "DeleteMemory"
    assert f.dedup_pass().merged == 0
    assert_replays_same(f)


def test_exact_duplicates_merge_and_keep_the_most_confident(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    a = f.remember("Build with ninja", confidence=0.5)
    b = f.remember("build  with ninja", confidence=0.9)
    other_realm = f.remember("build with ninja", realm="other")
    report = f.dedup_pass()
    assert (report.exact, report.merges) == (1, ((b, a),))
    assert a not in f and other_realm in f
    assert f.get(b).meta == {"merged_from": [a]}
    assert_replays_same(f)


def test_merge_chains_carry_earlier_provenance(tmp_path: Path) -> None:
    f = open_field(tmp_path / "f", Clock())
    a = f.remember("alpha beta", confidence=0.9)
    b = f.remember("alpha  beta", confidence=0.5)
    f.dedup_pass()
    c = f.remember("ALPHA beta", confidence=1.0)
    f.dedup_pass()
    assert f.ids() == [c]
    assert f.get(c).meta == {"merged_from": sorted([a, b])}


def test_dedup_on_read_only_field_is_refused(tmp_path: Path) -> None:
    chitta.open(tmp_path / "f").close()
    with chitta.open(tmp_path / "f", read_only=True) as f, pytest.raises(chitta.InvalidArgument):
        f.dedup_pass()
