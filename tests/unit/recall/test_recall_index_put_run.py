"""RecallIndexOrgan: a run of puts applied as a run (``apply_run``) leaves
exactly the state that applying each put in turn leaves, through every query."""

from __future__ import annotations

import random
from typing import Any

from _recall_index_state import organ_state

from chitta import ops
from chitta.ops import OpType
from chitta.organs.recall_index import RecallIndexOrgan


def _puts(rng: random.Random, base: int, n: int, labels: int) -> list[ops.PutPayload]:
    words = ["alpha", "beta", "gamma", "delta"]
    out = []
    for i in range(n):
        meta = (
            {"recall_context": "gamma delta"}
            if rng.random() < 0.2
            else ({} if rng.random() < 0.1 else None)
        )
        out.append(
            ops.PutPayload(
                id=base + i,
                text=" ".join(rng.choices(words, k=3)),
                created_ms=1000 + i,
                kind=rng.choice(["observation", "decision", "fact"]),
                realm=rng.choice([None, "work", "home"]),
                session=rng.choice([None, *(f"s{j}" for j in range(labels))]),
                harness=rng.choice([None, "claude", "codex"]),
                meta=meta,
                embedding=ops.f32_bytes([rng.random(), rng.random(), 1.0])
                if rng.random() < 0.3
                else None,
            )
        )
    return out


def _labels(runs: list[list[ops.PutPayload]]) -> dict[str, set[Any]]:
    return {
        f: {getattr(p, f) for run in runs for p in run}
        for f in ("kind", "realm", "session", "harness")
    }


def test_put_run_matches_per_op_puts() -> None:
    rng = random.Random(11)
    runs = [
        _puts(rng, 1 << 32, 300, labels=3),  # few distinct labels per column
        _puts(rng, 2 << 32, 300, labels=40),  # many distinct sessions
        [ops.PutPayload(id=(3 << 32) | 1, text="alpha", created_ms=1)]
        * 2,  # a duplicate inside the run
        _puts(rng, 1 << 32, 5, labels=2),  # ids already present: the first put stays
    ]
    ids = sorted({p.id for run in runs for p in run})
    labels = _labels(runs)
    fast, ref = RecallIndexOrgan(), RecallIndexOrgan()
    for run in runs:
        fast.apply_run(OpType.PutPayload, list(run))
        for op in run:
            ref.apply(op)
        assert organ_state(fast, ids, labels) == organ_state(ref, ids, labels)
    for op in (
        ops.DeleteMemory(id=(1 << 32) | 7, at_ms=5),
        ops.UpdateMemoryContent(
            id=(2 << 32) | 9, at_ms=6, text="beta beta", meta={"recall_context": "x"}
        ),
    ):
        fast.apply(op)
        ref.apply(op)
    assert organ_state(fast, ids, labels) == organ_state(ref, ids, labels)
