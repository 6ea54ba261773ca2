"""MemoriesOrgan: the run fast path and the lazily built records give exactly
the state that applying each op in turn (one MemoryRecord per put) gives."""

from __future__ import annotations

import random

from chitta import ops
from chitta.ops import OpType
from chitta.organs.memories import MemoriesOrgan


def _put(mid: int, emb: bool = False) -> ops.PutPayload:
    return ops.PutPayload(
        id=mid,
        text=f"t{mid}",
        created_ms=mid & 0xFFFF,
        embedding=ops.f32_bytes([1.0, 2.0]) if emb else None,
    )


def _state(o: MemoriesOrgan) -> tuple[object, ...]:
    mems = [o.get(m) for m in o.live_ids()]
    return (
        len(o),
        o.forgotten,
        o.ignored,
        o.embedding_dim,
        dict(o._max_local),
        [(m.id, m.text, m.tags, m.confidence, m.strength, m.tier, m.updated_ms) for m in mems if m],
    )


def _apply_each(o: MemoriesOrgan, op_type: OpType, run: list[ops.Op]) -> None:
    for op in run:
        o.apply(op)


def test_put_runs_match_per_op_apply() -> None:
    rng = random.Random(5)
    runs: list[list[ops.Op]] = [
        [_put((1 << 32) | i) for i in range(1, 50)],  # fast path
        [_put((1 << 32) | 3), _put((1 << 32) | 60)],  # an existing id
        [_put((2 << 32) | 1), _put((1 << 32) | 61)],  # two instances
        [_put((3 << 32) | 5), _put((3 << 32) | 5)],  # a duplicate inside the run
        [_put((4 << 32) | 1, emb=True), _put((4 << 32) | 2)],  # the first embedding
    ]
    changes: list[ops.Op] = [
        ops.UpdateState(id=(1 << 32) | 2, at_ms=9, confidence=0.5),
        ops.DeleteMemory(id=(1 << 32) | 4, at_ms=10),
        ops.DeleteMemory(id=(1 << 32) | 4, at_ms=11),  # already forgotten: ignored
        ops.UpdateMemoryContent(id=(1 << 32) | 7, at_ms=12, text="new", tags=("a",)),
        ops.DemoteMemory(id=(1 << 32) | 8, tier=2, at_ms=13),
        ops.UpdateState(id=(9 << 32) | 1, at_ms=14, touch=True),  # missing: ignored
    ]
    fast, ref = MemoriesOrgan(), MemoriesOrgan()
    for run in runs:
        fast.apply_run(OpType.PutPayload, run)
        _apply_each(ref, OpType.PutPayload, run)
        assert _state(fast) == _state(ref)
    rng.shuffle(changes)
    for op in changes:
        fast.apply(op)
        ref.apply(op)
        assert _state(fast) == _state(ref)
    assert fast.get((1 << 32) | 4) is None and not fast.is_live((1 << 32) | 4)
    assert fast.get((1 << 32) | 7).text == "new"  # type: ignore[union-attr]
    assert fast.get((1 << 32) | 9) == ref.get((1 << 32) | 9)
    assert fast.next_local_id(1) == 62 and fast.next_local_id(3) == 6


def test_scoring_states_match_the_per_id_calls() -> None:
    organ = MemoriesOrgan()
    organ.apply_run(OpType.PutPayload, [_put((1 << 32) | i) for i in range(1, 9)])
    for op in (
        ops.UpdateState(id=(1 << 32) | 2, at_ms=70, confidence=0.25, strength=2.0),
        ops.UpdateState(id=(1 << 32) | 2, at_ms=80, touch=True),
        ops.UpdateState(
            id=(1 << 32) | 3, at_ms=90, touch=True
        ),  # touched, still a fresh put otherwise
        ops.DemoteMemory(id=(1 << 32) | 5, tier=2, at_ms=95),
        ops.DeleteMemory(id=(1 << 32) | 6, at_ms=99),
    ):
        organ.apply(op)
    asked = [(1 << 32) | i for i in (3, 1, 2, 5, 6, 99, 3)]  # a forgotten, a missing, a repeat
    got = organ.scoring_states(asked)
    assert len(got.live) == len(got.kind) == len(got.access_ms) == len(asked)
    for pos, mid in enumerate(asked):
        state = organ.scoring_state(mid)
        if state is None:
            assert not got.live[pos] and got.kind[pos] == "" and got.access_ms[pos] == ()
            continue
        assert got.live[pos]
        row = (
            got.kind[pos],
            int(got.created_ms[pos]),
            float(got.confidence[pos]),
            float(got.strength[pos]),
            int(got.tier[pos]),
        )
        assert row == state
        assert got.access_ms[pos] == organ.access_times(mid)
    empty = organ.scoring_states([])
    assert len(empty.live) == 0 and empty.created_ms.dtype == "int64"
