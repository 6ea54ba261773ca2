"""RecallIndexOrgan.apply_columns against the per-op path (the contract of
chitta/ops/put_columns.py): an oracle organ fed each put by ``apply(op)`` (and one
fed ``apply_run(cols.ops())``) vs one fed ``apply_columns(cols)``, compared
through every query, on random runs with duplicates (inside a run and of live
ids), None labels, unicode, meta (recall contexts, speakers), tags, vectors of
an odd width and zero vectors, followed by updates, deletes, re-puts of deleted
ids and touches."""

from __future__ import annotations

from typing import Any

import numpy as np
from _recall_index_state import organ_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta import ops
from chitta.ops import OpType
from chitta.ops.put_columns import PutColumns
from chitta.organs.recall_index import RecallIndexOrgan

WORDS = ["alpha", "beta", "gamma", "delta", "caf\u00e9", "\u65e5\u672c", "x"]
SPEAKERS = ("Ana", "Cy")
LABEL_VALUES = {
    "kind": ["observation", "fact", "d\u00e9cision"],
    "realm": [None, "work", "home"],
    "session": [None, "s1", "s2", "\u00fc"],
    "harness": [None, "claude", "codex"],
}


def _vec(rng: np.random.Generator, dim: int) -> bytes:
    if rng.random() < 0.05:
        return np.zeros(dim, "<f4").tobytes()  # zero norm: no vector
    return rng.standard_normal(dim).astype("<f4").tobytes()


def _put(rng: np.random.Generator, mid: int, dim: int) -> ops.PutPayload:
    r = rng.random()
    meta: Any = None
    if r < 0.15:
        meta = {"recall_context": "gamma " + str(rng.choice(WORDS))}
    elif r < 0.25:
        meta = {"speaker": str(rng.choice(SPEAKERS))}
    elif r < 0.3:
        meta = {"speaker": "Ana", "recall_context": "delta"}
    emb = None
    v = rng.random()
    if v < 0.5:
        emb = _vec(rng, dim)
    elif v < 0.55:
        emb = _vec(rng, dim + 2)  # an odd width
    return ops.PutPayload(
        id=mid,
        text=" ".join(rng.choice(WORDS, int(rng.integers(0, 5)))),
        created_ms=1000 + int(rng.integers(0, 300)),
        **{f: vals[int(rng.integers(0, len(vals)))] for f, vals in LABEL_VALUES.items()},  # type: ignore[arg-type]
        tags=("t",) if rng.random() < 0.1 else (),
        meta=meta,
        embedding=emb,
    )


def _other(rng: np.random.Generator, mid: int, dim: int) -> ops.Op:
    r = rng.random()
    if r < 0.35:
        return ops.DeleteMemory(id=mid, at_ms=5)
    if r < 0.6:
        return ops.UpdateState(id=mid, at_ms=6, touch=True)
    if r < 0.8:
        return ops.UpdateMemoryContent(id=mid, at_ms=7, text="beta " + str(rng.choice(WORDS)))
    if r < 0.87:
        return ops.UpdateMemoryContent(
            id=mid, at_ms=7, meta={"recall_context": "alpha", "speaker": "Cy"}
        )
    if r < 0.94:
        feats = tuple(sorted(rng.choice(16384, 64, replace=False).tolist()))
        return ops.UpdateSparseCode(
            id=mid,
            features=feats,
            activations=np.ones(64, "<f4").tobytes(),
            encoder_version=int(rng.integers(0, 3)),
        )
    return ops.UpdateMemoryContent(id=mid, at_ms=7, embedding=_vec(rng, dim))


def _labels() -> dict[str, set[Any]]:
    return {f: set(v) for f, v in LABEL_VALUES.items()}


def _check(seed: int, rounds: int, dim: int, exact_limit: int | None = None) -> None:
    rng = np.random.default_rng(seed)
    per_op, by_run, cols_organ = (RecallIndexOrgan(exact_limit=exact_limit) for _ in range(3))
    ids: list[int] = []
    space = [
        0,
        2**64 - 2,
        2**63 + 5,
        *range(1, 60),
    ]  # 0 and ids with the high bit (2**64-1 is BM25's pad id)
    for _ in range(rounds):
        run = [
            _put(rng, space[int(rng.integers(len(space)))], dim)
            for _ in range(int(rng.integers(0, 40)))
        ]
        ids = sorted(set(ids) | {p.id for p in run})
        cols = PutColumns.from_puts(run)
        for op in run:
            per_op.apply(op)
        by_run.apply_run(OpType.PutPayload, cols.ops())  # type: ignore[arg-type]
        cols_organ.apply_columns(cols)
        want = organ_state(per_op, ids, _labels(), SPEAKERS)
        assert organ_state(cols_organ, ids, _labels(), SPEAKERS) == want
        assert organ_state(by_run, ids, _labels(), SPEAKERS) == want
        for _ in range(int(rng.integers(0, 8))):
            op = _other(rng, ids[int(rng.integers(len(ids)))] if ids else 1, dim)
            for o in (per_op, by_run, cols_organ):
                o.apply(op)
        assert organ_state(cols_organ, ids, _labels(), SPEAKERS) == organ_state(
            per_op, ids, _labels(), SPEAKERS
        )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_apply_columns_equals_per_op_apply(seed: int) -> None:
    _check(seed, rounds=6, dim=4)


def test_long_random_history() -> None:
    _check(12345, rounds=40, dim=8)


def test_long_random_history_through_binary_codes() -> None:
    _check(
        777, rounds=30, dim=70, exact_limit=5
    )  # the dense lane searches Hamming codes + rescoring


def test_first_vector_of_odd_width_sets_the_dimension() -> None:
    run = [
        ops.PutPayload(id=1, text="a", created_ms=1, embedding=np.ones(3, "<f4").tobytes()),
        *(
            ops.PutPayload(id=i, text="b", created_ms=i, embedding=np.ones(5, "<f4").tobytes())
            for i in range(2, 5)
        ),
    ]
    a, b = RecallIndexOrgan(), RecallIndexOrgan()
    for op in run:
        a.apply(op)
    b.apply_columns(PutColumns.from_puts(run))
    assert a.dim == b.dim == 3 and b.vector_count == 1
    assert organ_state(a, [1, 2, 3, 4], {}) == organ_state(b, [1, 2, 3, 4], {})


def test_empty_run_changes_nothing() -> None:
    o = RecallIndexOrgan()
    o.apply_columns(PutColumns.from_puts([]))
    assert len(o) == 0 and o.allowed() is None and o.keyword("x", 5, None).tolist() == []
