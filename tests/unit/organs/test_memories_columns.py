"""The columnar MemoriesOrgan against an independent oracle (the organ as it was
before columns, tests/helpers/_memories_reference.py): ``apply_columns(cols)``,
``apply_run(cols.ops())`` and one ``apply`` per op all give the oracle's
answers to every public query, on random runs (duplicates, None labels,
unicode, meta, tags, artifacts, odd vectors) followed by updates, deletes,
touches and demotions, and again after a snapshot/restore round trip."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import numpy as np
from _memories_reference import MemoriesOrgan as Reference
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta import ops
from chitta.ops import OpType
from chitta.ops.put_columns import PutColumns
from chitta.organs.memories import MemoriesOrgan


def _vec(n: int, seed: int) -> bytes:
    return np.arange(seed, seed + n, dtype="<f4").tobytes()


ids = st.builds(lambda inst, local: (inst << 32) | local, st.integers(1, 3), st.integers(1, 40))
labels = st.one_of(st.none(), st.sampled_from(["r", "s", "ünï ✓"]))
puts = st.builds(
    ops.PutPayload,
    id=ids,
    text=st.one_of(st.text(max_size=12), st.just("café 😀")),
    kind=st.sampled_from(["observation", "decision", "thought"]),
    created_ms=st.integers(0, 10**6),
    realm=labels,
    session=labels,
    source_tool=labels,
    harness=labels,
    tags=st.one_of(st.just(()), st.lists(st.sampled_from(["a", "b", "ç"]), max_size=2).map(tuple)),
    confidence=st.floats(0, 1),
    strength=st.floats(0, 3),
    embedding=st.one_of(
        st.none(), st.none(), st.builds(_vec, st.sampled_from([3, 3, 3, 2]), st.integers(0, 9))
    ),
    meta=st.one_of(
        st.none(), st.none(), st.fixed_dictionaries({"speaker": st.sampled_from(["Ana", "Bo"])})
    ),
    artifacts=st.one_of(st.just(()), st.just(("/x/y",))),
    written_ms=st.integers(0, 10**6),
)
changes = st.one_of(
    st.builds(ops.DeleteMemory, id=ids, at_ms=st.integers(0, 10**6)),
    st.builds(
        ops.UpdateState,
        id=ids,
        at_ms=st.integers(0, 10**6),
        strength=st.one_of(st.none(), st.floats(0, 2)),
        confidence=st.one_of(st.none(), st.floats(0, 1)),
        decay_rate=st.one_of(st.none(), st.floats(0, 1)),
        touch=st.booleans(),
    ),
    st.builds(
        ops.UpdateMemoryContent,
        id=ids,
        at_ms=st.integers(0, 10**6),
        text=st.one_of(st.none(), st.text(max_size=5)),
        embedding=st.one_of(
            st.none(), st.builds(_vec, st.sampled_from([3, 2, 4]), st.integers(0, 9))
        ),
        tags=st.one_of(st.none(), st.just(()), st.just(("t",))),
        meta=st.one_of(st.none(), st.just({"speaker": "Cy"})),
    ),
    st.builds(ops.DemoteMemory, id=ids, tier=st.integers(0, 3), at_ms=st.integers(0, 10**6)),
)


def _mem(m: Any) -> Any:
    if m is None:
        return None
    d = dataclasses.asdict(m)
    emb = d.pop("embedding")
    d["embedding"] = None if emb is None else np.asarray(emb, np.float32).tobytes()
    d["types"] = [type(v).__name__ for v in d.values()]
    return d


def _answers(o: Any, probe: list[int]) -> dict[str, Any]:
    st_ = o.scoring_states(probe)
    ids_, puts_, texts = o.live_puts()
    return {
        "len": len(o),
        "forgotten": o.forgotten,
        "ignored": o.ignored,
        "dim": o.embedding_dim,
        "next": [o.next_local_id(i) for i in (1, 2, 3, 4)],
        "live_ids": list(o.live_ids()),
        "get": [_mem(o.get(m)) for m in probe],
        "is_live": [o.is_live(m) for m in probe],
        "access": [o.access_times(m) for m in probe],
        "scoring_state": [o.scoring_state(m) for m in probe],
        "states": (
            st_.live.tolist(),
            st_.kind,
            st_.created_ms.tolist(),
            st_.confidence.tolist(),
            st_.strength.tolist(),
            st_.tier.tolist(),
            st_.access_ms,
        ),
        "live_puts": (
            ids_,
            [
                (
                    p.id,
                    p.text,
                    p.kind,
                    p.realm,
                    p.session,
                    p.source_tool,
                    p.harness,
                    p.created_ms,
                    p.written_ms,
                    p.meta,
                    p.artifacts,
                )
                for p in puts_
            ],
            texts,
        ),
    }


def _restored(o: MemoriesOrgan) -> MemoriesOrgan:
    state, vids, vecs = o.snapshot_columns()
    state = msgspec.msgpack.decode(msgspec.msgpack.encode(state))  # as the state file carries it
    fresh = MemoriesOrgan()
    fresh.restore_columns(state, vids.copy(), vecs.copy())
    return fresh


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.lists(puts, max_size=14), min_size=1, max_size=4), st.lists(changes, max_size=25)
)
def test_columns_match_the_oracle(runs: list[list[ops.PutPayload]], later: list[ops.Op]) -> None:
    oracle, by_cols, by_run, by_op = Reference(), MemoriesOrgan(), MemoriesOrgan(), MemoriesOrgan()
    for run in runs:
        cols = PutColumns.from_puts(run)
        oracle.apply_run(OpType.PutPayload, cols.ops())
        by_cols.apply_columns(cols)
        by_run.apply_run(OpType.PutPayload, cols.ops())
        for op in run:
            by_op.apply(op)
    probe = sorted({p.id for run in runs for p in run}) + [(9 << 32) | 1, 0]
    want = _answers(oracle, probe)
    for organ in (by_cols, by_run, by_op, _restored(by_cols)):
        assert _answers(organ, probe) == want
    for op in later:
        for organ in (oracle, by_cols, by_op):
            organ.apply(op)
    want = _answers(oracle, probe)
    assert _answers(by_cols, probe) == want
    assert _answers(by_op, probe) == want
    again = _restored(by_cols)
    assert _answers(again, probe) == want
    for op in later[:5]:  # a restored organ goes on applying like the rest
        oracle.apply(op)
        again.apply(op)
    more = [
        ops.PutPayload(id=(3 << 32) | 41, text="after", embedding=_vec(3, 1)),
        ops.PutPayload(id=(3 << 32) | 42, text="x"),
    ]
    for p in more:
        oracle.apply(p)
        again.apply(p)
    assert _answers(again, probe + [p.id for p in more]) == _answers(
        oracle, probe + [p.id for p in more]
    )


def test_memories_is_many_gets() -> None:
    o = MemoriesOrgan()
    o.apply_columns(
        PutColumns.from_puts(
            [ops.PutPayload(id=i, text=f"t{i}", embedding=_vec(2, i)) for i in range(1, 20)]
        )
    )
    o.apply(ops.DeleteMemory(id=5, at_ms=1))
    asked = [3, 5, 99, 19, 3]
    assert [_mem(m) for m in o.memories(asked)] == [_mem(o.get(m)) for m in asked]
    assert o.memories([]) == []
