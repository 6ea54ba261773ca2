"""``MemoriesOrgan.memories(ids)`` (one native call, _ext/bind_memories_build.cc) against
``get`` of each id (the Python path, ``_memory``): equal memories with values of the same
types, on the random organs of test_memories_columns.py (duplicates, None labels, unicode,
meta, tags, artifacts, odd-width vectors, changed texts, deletes, touches, demotions) and
after a snapshot/restore round trip (vectors then read from the restored base matrix)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_memories_columns import _mem, _restored, _vec, changes, puts

from chitta import _core, ops
from chitta.model import _MEMORY_SLOTS, Memory
from chitta.ops.put_columns import PutColumns
from chitta.organs.memories import MemoriesOrgan


def _same(o: MemoriesOrgan, probe: list[int]) -> None:
    assert [_mem(m) for m in o.memories(probe)] == [_mem(o.get(m)) for m in probe]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(puts, max_size=14), min_size=1, max_size=4), st.lists(changes, max_size=25)
)
def test_memories_equals_get_of_each(runs: list[list[ops.PutPayload]], later: list[ops.Op]) -> None:
    o = MemoriesOrgan()
    for run in runs:
        o.apply_columns(PutColumns.from_puts(run))
    probe = sorted({p.id for run in runs for p in run}) + [(9 << 32) | 1, 0]
    probe = probe + probe[:3]  # repeated ids
    _same(o, probe)
    for op in later:
        o.apply(op)
    _same(o, probe)
    _same(_restored(o), probe)


def test_the_arena_stays_growable() -> None:
    # The builder holds no buffer export on the arena (a bytearray the organ grows in place).
    o = MemoriesOrgan()
    o.apply_columns(PutColumns.from_puts([ops.PutPayload(id=i, text=f"t{i}") for i in range(1, 5)]))
    o.memories([1, 2])
    o.apply(
        ops.PutPayload(id=9, text="after")
    )  # grows the arena in place: BufferError while an export is held
    assert o.memories([9])[0].text == "after"  # type: ignore[union-attr]


def test_meta_is_a_copy_and_embedding_a_fresh_array() -> None:
    o = MemoriesOrgan()
    o.apply_columns(
        PutColumns.from_puts(
            [ops.PutPayload(id=1, text="a", meta={"k": [1]}, embedding=_vec(3, 0))]
        )
    )
    m1, m2 = o.memories([1, 1])
    assert m1 is not m2 and m1.meta == {"k": [1]} and m1.meta is not m2.meta
    assert (
        m1.embedding is not None and m1.embedding.flags.owndata and m1.embedding.dtype == np.float32
    )
    m1.embedding[0] = 42.0
    assert o.get(1).embedding[0] == 0.0  # type: ignore[union-attr]


def _build_args(o: MemoriesOrgan, cls: type, slots: tuple[Any, ...], ids: list[int]) -> list[Any]:
    """The 17 arguments of ``_core._build_memories`` for organ ``o`` (as MemoriesOrgan.memories gives)."""
    s = o._s
    c = s.c
    cols = (
        "created",
        "written",
        "updated",
        "last_access",
        "confidence",
        "strength",
        "decay",
        "tier",
        "access",
    )
    labels = ("kind", "realm", "session", "source_tool", "harness")
    return [
        cls,
        slots,
        ids,
        s.map,
        c["dead"],
        tuple(c[n] for n in cols),
        tuple((c[n], s.labels[n].values) for n in labels),
        s.arena,
        s.text_off,
        s.texts,
        s.tags,
        s.meta,
        s.artifacts,
        c["vec"],
        s.vecs,
        s.base,
        s.odd,
    ]


def test_build_refuses_bad_arguments() -> None:
    o = MemoriesOrgan()
    o.apply_columns(
        PutColumns.from_puts([ops.PutPayload(id=1, text="a"), ops.PutPayload(id=2, text="b")])
    )
    o.apply(ops.DeleteMemory(id=2, at_ms=1))
    s = o._s
    c = s.c
    args = _build_args(o, Memory, _MEMORY_SLOTS, [1, 2, 3])
    assert _core._build_memories(*args) == [o.get(1), None, None]
    with pytest.raises(OverflowError):
        _core._build_memories(*args[:2], [-1], *args[3:])
    with pytest.raises(TypeError):
        _core._build_memories(*args[:2], ["1"], *args[3:])
    bad = list(args)
    bad[5] = tuple(x.astype(np.int32) if x.dtype == np.int64 else x for x in args[5])
    with pytest.raises(TypeError, match="created"):
        _core._build_memories(*bad)
    bad = list(args)
    bad[3] = "not a map"
    with pytest.raises(TypeError, match="RowMap"):
        _core._build_memories(*bad)
    bad = list(args)
    bad[7] = "not an arena"
    with pytest.raises(TypeError, match="wrong kind"):
        _core._build_memories(*bad)
    with pytest.raises(TypeError, match="17 arguments"):
        _core._build_memories(*args[:16])
    short = list(args)
    short[4] = c["dead"][:1].copy()  # row 1 (id 2) is past this column
    with pytest.raises(IndexError, match="row past"):
        _core._build_memories(*short)


def test_odd_vectors_are_read_as_numpy_reads_them() -> None:
    o = MemoriesOrgan()
    o.apply_columns(
        PutColumns.from_puts(
            [
                ops.PutPayload(id=1, text="a", embedding=_vec(3, 0)),
                ops.PutPayload(id=2, text="b", embedding=_vec(2, 5)),
            ]
        )
    )  # 2 floats: odd
    assert 1 in o._s.odd  # row 1 holds the odd-width vector
    got = o.memories([2, 1])
    assert [_mem(m) for m in got] == [_mem(o.get(2)), _mem(o.get(1))]
    o._s.odd[1] = b"\x00\x00\x80"  # not whole floats: numpy's error
    with pytest.raises(ValueError, match="multiple of element size"):
        o.memories([2])
    with pytest.raises(ValueError, match="multiple of element size"):
        o.get(2)


def test_fields_are_addressed_by_name_not_position() -> None:
    """A class whose slots list Memory's fields in another order gets the same values
    per field name (the builder matches slot descriptors by name); a class with a field
    the builder does not fill is refused."""
    import dataclasses

    o = MemoriesOrgan()
    o.apply_columns(
        PutColumns.from_puts(
            [
                ops.PutPayload(
                    id=1,
                    text="by name",
                    kind="decision",
                    tags=("t",),
                    confidence=0.25,
                    meta={"m": 1},
                    embedding=_vec(4, 1),
                )
            ]
        )
    )
    fields = [(f.name, f.type) for f in dataclasses.fields(Memory)]
    Reordered = dataclasses.make_dataclass("Reordered", list(reversed(fields)), slots=True)
    slots = tuple(Reordered.__dict__[name] for name, _ in reversed(fields))
    args = _build_args(o, Reordered, slots, [1])
    (built,) = _core._build_memories(*args)
    want = o.get(1)
    for name, _ in fields:
        got, expected = getattr(built, name), getattr(want, name)
        assert (
            np.array_equal(got, expected) if isinstance(expected, np.ndarray) else got == expected
        ), name
    Other = dataclasses.make_dataclass(
        "Other", [*fields[:-1], ("not_a_memory_field", int)], slots=True
    )
    other_slots = tuple(
        Other.__dict__[name] for name, _ in [*fields[:-1], ("not_a_memory_field", int)]
    )
    with pytest.raises(TypeError, match="not_a_memory_field"):
        _core._build_memories(Other, other_slots, *args[2:])
