"""RecallIndexOrgan.apply_code_columns against the per-op path: one organ fed
each UpdateSparseCode by ``apply(op)``, one fed runs as ``CodeColumns`` (the
a run holding a code of another feature count goes per op, as replay does), compared through every
code query and posting search, on random runs with repeated ids, codes of
unknown and forgotten memories, memories re-coded after their code reached the
posting index, forgets and re-puts between runs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta import ops
from chitta.ops.code_columns import CodeColumns
from chitta.organs.recall_index import RecallIndexOrgan

ACTIVE = 64
MIDS = [(5 << 32) | i for i in range(1, 41)]


def _code(rng: np.random.Generator, mid: int, version: int, odd: bool) -> ops.UpdateSparseCode:
    n = (
        ACTIVE if not odd or rng.random() > 0.1 else 3
    )  # a few codes of another count: never indexed
    feats = tuple(sorted(rng.choice(16384, n, replace=False).tolist()))
    acts = rng.random(n).astype("<f4").tobytes()
    return ops.UpdateSparseCode(id=mid, features=feats, activations=acts, encoder_version=version)


def _state(o: RecallIndexOrgan) -> tuple:
    probes = [
        np.sort(np.random.default_rng(i).choice(16384, ACTIVE, replace=False)).astype(np.uint32)
        for i in range(3)
    ]
    return (
        sorted(o.coded_ids()),
        {mid: (o.code_version(mid), o.code_features(mid)) for mid in MIDS},
        [o.posting(p, 20, None).tolist() for p in probes],
        [
            o.posting(np.array(o.code_features(m), np.uint32), 5, None).tolist()
            for m in MIDS
            if o.code_features(m) and len(o.code_features(m)) == ACTIVE
        ],
    )


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 6))
def test_apply_code_columns_equals_per_op(seed: int, steps: int) -> None:
    rng = np.random.default_rng(seed)
    per_op, by_run = RecallIndexOrgan(), RecallIndexOrgan()
    puts = [ops.PutPayload(id=m, text=f"m {m}") for m in MIDS[:30]]
    for o in (per_op, by_run):
        o.apply_run(ops.OpType.PutPayload, puts)
    for version in range(1, steps + 1):
        odd = rng.random() < 0.3
        run = [
            _code(rng, int(rng.choice(MIDS)), version, odd) for _ in range(int(rng.integers(1, 60)))
        ]
        for op in run:
            per_op.apply(op)
        cols, others = CodeColumns.from_ops(run, ACTIVE)
        if others:  # as replay does: a run with a code of another count takes the per-op path whole
            for op in run:
                by_run.apply(op)
        else:
            by_run.apply_code_columns(cols)
        if rng.random() < 0.5:  # some codes reach the posting index, later runs re-code them
            per_op.posting(np.arange(ACTIVE, dtype=np.uint32), 1, None)
            by_run.posting(np.arange(ACTIVE, dtype=np.uint32), 1, None)
        for mid in rng.choice(MIDS, 3).tolist():  # forgets and re-puts between runs
            op: ops.Op = (
                ops.DeleteMemory(id=mid, at_ms=1)
                if rng.random() < 0.6
                else ops.PutPayload(id=mid, text="again")
            )
            per_op.apply(op)
            by_run.apply(op)
        assert _state(by_run) == _state(per_op)


def test_pending_codes_enter_the_posting_index_sorted_across_slices() -> None:
    """More pending codes than one sort slice (recall_index._SORT_ROWS), features given
    unsorted: every indexed code is its features ascending with their own activations
    (the oracle: sorting each code's (feature, activation) pairs on its own)."""
    from chitta.organs import recall_index

    n = 2 * recall_index._SORT_ROWS + 123
    rng = np.random.default_rng(4)
    ids = np.arange(1, n + 1, dtype=np.uint64) + np.uint64(9 << 32)
    feats = np.stack([rng.choice(16384, ACTIVE, replace=False) for _ in range(n)]).astype(np.uint32)
    acts = rng.random((n, ACTIVE)).astype(np.float32)
    o = RecallIndexOrgan()
    o.apply_run(ops.OpType.PutPayload, [ops.PutPayload(id=int(m), text=f"m {m}") for m in ids])
    o.apply_code_columns(CodeColumns(ids, feats.copy(), acts.copy(), np.ones(n, np.uint32)))
    assert o.posting(np.sort(feats[0]), 1, None).tolist() == [int(ids[0])]  # flushes
    index = o._posting
    assert len(index) == n
    for row in (0, recall_index._SORT_ROWS - 1, recall_index._SORT_ROWS, n - 1, n // 2):
        order = np.argsort(feats[row])
        got_f, got_a = index.get(int(ids[row]))
        assert got_f.tolist() == feats[row][order].tolist()
        assert got_a.tolist() == acts[row][order].tolist()
