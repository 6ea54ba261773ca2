"""Recall filters as sorted id arrays, against the set-based code they replaced.

Oracle: ``reference_allowed`` below (each public memory of the field checked
against the filters in Python) and the old dense-lane row lookup (one dict
lookup per allowed id). Random fields with several realms,
sessions, harnesses, kinds and event times; writes, forgets and recalls between
queries so the cached arrays must follow every change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chitta
from chitta.organs.recall_index import RecallIndexOrgan

T0 = 1_790_000_000.0
DAY = 86_400.0
KINDS = ("observation", "decision", "lesson", "thought")


def reference_allowed(
    f: chitta.Field,
    *,
    kinds: Any = None,
    realm: Any = None,
    session: Any = None,
    harness: Any = None,
    since_ms: Any = None,
    until_ms: Any = None,
    include_staged: bool = True,
) -> Any:
    """Filters applied to the field's public memories one by one (staged: the organ's set)."""
    if (
        kinds is None
        and realm is None
        and session is None
        and harness is None
        and since_ms is None
        and until_ms is None
        and include_staged
    ):
        return None
    staged = f.core.index.staged_ids()
    result = [
        m.id
        for m in f.memories()
        if (kinds is None or m.kind in kinds)
        and (realm is None or m.realm == realm)
        and (session is None or m.session == session)
        and (harness is None or m.harness == harness)
        and (since_ms is None or m.created_ms >= since_ms)
        and (until_ms is None or m.created_ms <= until_ms)
        and (include_staged or m.id not in staged)
    ]
    return np.array(sorted(result), np.uint64)


def reference_dense(idx: RecallIndexOrgan, vector: Any, k: int, allowed: Any) -> Any:
    rows = np.array([idx._row[i] for i in allowed.tolist() if i in idx._row], np.int64)
    return idx._exact(vector, rows, k)


def random_filters(rng: np.random.Generator) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rng.random() < 0.4:
        out["kinds"] = frozenset(
            rng.choice([*KINDS, "wisdom"], int(rng.integers(0, 3)), replace=False).tolist()
        )
    for name, values in (
        ("realm", ["r0", "r1", "r2", "nope"]),
        ("session", ["s0", "s1"]),
        ("harness", ["codex", "claude-code"]),
    ):
        if rng.random() < 0.3:
            out[name] = str(rng.choice(values))
    if rng.random() < 0.4:
        out["since_ms"] = int((T0 - rng.random() * 30 * DAY) * 1000)
    if rng.random() < 0.3:
        out["until_ms"] = int((T0 - rng.random() * 30 * DAY) * 1000)
    if rng.random() < 0.1:
        out["since_ms"] = 10**30  # beyond int64: nothing
    if rng.random() < 0.3:
        out["include_staged"] = False
    return out


def write_some(f: chitta.Field, rng: np.random.Generator, n: int) -> list[int]:
    items = [
        {
            "text": f"note {int(rng.integers(0, 50))} about w{int(rng.integers(0, 20))}",
            "kind": str(rng.choice(KINDS)),
            "realm": str(rng.choice(["r0", "r1", "r2"])),
            "session": str(rng.choice(["s0", "s1", "s2"])),
            "source_tool": str(rng.choice(["codex-cli", "claude", "bash"]))
            if rng.random() < 0.8
            else None,
            "at": T0 - float(rng.random() * 30 * DAY),
        }
        for _ in range(n)
    ]
    for item in items:
        if item["source_tool"] is None:
            del item["source_tool"]
    return f.remember_many(items)


@pytest.mark.parametrize("seed", [1, 2])
def test_allowed_and_filtered_dense_equal_the_set_based_reference(
    tmp_path: Path, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    with chitta.open(tmp_path / "f", embedder="hashing", clock=lambda: T0) as f:
        ids = write_some(f, rng, 400)
        idx = f.core.index
        checked = 0
        for round_ in range(12):
            for _ in range(15):
                filters = random_filters(rng)
                got, want = idx.allowed(**filters), reference_allowed(f, **filters)
                if want is None:
                    assert got is None
                    continue
                assert got.dtype == np.uint64 and got.tolist() == want.tolist()
                vec = f.core.encoding.embed([f"note {int(rng.integers(0, 50))}"])[0]
                vec = vec / np.linalg.norm(vec)
                for a, b in zip(idx.dense(vec, 20, got), reference_dense(idx, vec, 20, want)):
                    assert np.array_equal(a, b)
                checked += len(want)
            # change what the caches hold: new memories, forgets, promotions out of the write gate
            ids += write_some(f, rng, int(rng.integers(0, 40)))
            live = [m for m in ids if m in f]
            for mid in rng.choice(live, min(len(live), 5), replace=False).tolist():
                f.forget(mid)
            f.recall(f"note {round_}", k=5)
        assert checked > 1000
