"""memory_of builds the same frozen Memory as the dataclass constructor."""

import dataclasses

import numpy as np
import pytest

from chitta.model import Memory, memory_of

NAMES = [f.name for f in dataclasses.fields(Memory)]


def _values(i: int) -> tuple:
    emb = None if i % 2 else np.arange(4, dtype=np.float32) * i
    meta = {"speaker": f"s{i}"} if i % 3 == 0 else None
    return (
        (1 << 32) | i,
        f"text {i}",
        "decision" if i % 2 else "observation",
        "r" if i % 4 else None,
        None,
        "codex",
        None,
        ("a", f"t{i}"),
        0.5 + i / 100,
        1.0 + i,
        0.01 * i,
        i % 3,
        1000 + i,
        2000 + i,
        3000 + i,
        i,
        meta,
        emb,
        (f"/p/{i}",),
        4000 + i,
    )


@pytest.mark.parametrize("i", range(6))
def test_memory_of_equals_the_constructor(i):
    values = _values(i)
    built, reference = memory_of(values), Memory(**dict(zip(NAMES, values)))
    assert built == reference
    for name, value in zip(NAMES, values):
        assert getattr(built, name) is value  # the very objects, in the right slots
    assert repr(built) == repr(reference)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.text = "changed"  # type: ignore[misc]


def test_memory_of_refuses_a_wrong_arity():
    with pytest.raises(TypeError):
        memory_of(_values(1)[:-1])
