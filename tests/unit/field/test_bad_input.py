"""Bad input at every public Field entry point: the documented error, and the
field unchanged (checked by reopening and comparing every memory and byte)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fieldtools import snapshot

import chitta
from chitta import errors

HUGE = "x" * ((1 << 20) + 1)

Case = tuple[str, Callable[[chitta.Field, int], Any], type[BaseException]]

CASES: list[Case] = [
    ("text not str", lambda f, i: f.remember(b"bytes"), errors.InvalidArgument),
    ("text None", lambda f, i: f.remember(None), errors.InvalidArgument),  # type: ignore[arg-type]
    ("text empty", lambda f, i: f.remember(""), errors.InvalidArgument),
    ("text whitespace", lambda f, i: f.remember(" \n\t"), errors.InvalidArgument),
    ("text huge", lambda f, i: f.remember(HUGE), errors.InvalidArgument),
    ("text lone surrogate", lambda f, i: f.remember("bad \ud800 text"), errors.InvalidArgument),
    ("unknown kind", lambda f, i: f.remember("t", kind="gossip"), errors.InvalidArgument),
    ("kind not str", lambda f, i: f.remember("t", kind=3), errors.InvalidArgument),  # type: ignore[arg-type]
    ("realm empty", lambda f, i: f.remember("t", realm=""), errors.InvalidArgument),
    ("realm control char", lambda f, i: f.remember("t", realm="a\x00b"), errors.InvalidArgument),
    ("session too long", lambda f, i: f.remember("t", session="s" * 300), errors.InvalidArgument),
    ("source_tool not str", lambda f, i: f.remember("t", source_tool=5), errors.InvalidArgument),  # type: ignore[arg-type]
    ("tags as str", lambda f, i: f.remember("t", tags="oops"), errors.InvalidArgument),
    ("tag not str", lambda f, i: f.remember("t", tags=["ok", 3]), errors.InvalidArgument),  # type: ignore[list-item]
    ("tag empty", lambda f, i: f.remember("t", tags=[""]), errors.InvalidArgument),
    (
        "too many tags",
        lambda f, i: f.remember("t", tags=[f"t{k}" for k in range(65)]),
        errors.InvalidArgument,
    ),
    ("confidence > 1", lambda f, i: f.remember("t", confidence=1.5), errors.InvalidArgument),
    (
        "confidence NaN",
        lambda f, i: f.remember("t", confidence=float("nan")),
        errors.InvalidArgument,
    ),
    ("confidence bool", lambda f, i: f.remember("t", confidence=True), errors.InvalidArgument),
    ("confidence str", lambda f, i: f.remember("t", confidence="high"), errors.InvalidArgument),  # type: ignore[arg-type]
    (
        "embedding NaN",
        lambda f, i: f.remember("t", embedding=[1.0, float("nan"), 0.0]),
        errors.InvalidArgument,
    ),
    (
        "embedding inf",
        lambda f, i: f.remember("t", embedding=[1.0, float("inf"), 0.0]),
        errors.InvalidArgument,
    ),
    (
        "embedding wrong dim",
        lambda f, i: f.remember("t", embedding=[1.0, 2.0]),
        errors.InvalidArgument,
    ),
    (
        "embedding 2-D",
        lambda f, i: f.remember("t", embedding=np.ones((2, 3))),
        errors.InvalidArgument,
    ),
    ("embedding str", lambda f, i: f.remember("t", embedding="1,2,3"), errors.InvalidArgument),
    (
        "embedding objects",
        lambda f, i: f.remember("t", embedding=[object()]),
        errors.InvalidArgument,
    ),
    ("meta not dict", lambda f, i: f.remember("t", meta=[1, 2]), errors.InvalidArgument),  # type: ignore[arg-type]
    ("meta non-str key", lambda f, i: f.remember("t", meta={1: "x"}), errors.InvalidArgument),  # type: ignore[dict-item]
    (
        "meta object value",
        lambda f, i: f.remember("t", meta={"x": object()}),
        errors.InvalidArgument,
    ),
    ("meta too big", lambda f, i: f.remember("t", meta={"x": "y" * 70000}), errors.InvalidArgument),
    ("get unknown id", lambda f, i: f.get(12345), errors.NotFound),
    ("get id str not digits", lambda f, i: f.get("0x1"), errors.InvalidArgument),  # type: ignore[arg-type]
    ("get id str signed", lambda f, i: f.get("+1"), errors.InvalidArgument),  # type: ignore[arg-type]
    ("get id str too long", lambda f, i: f.get("1" * 21), errors.InvalidArgument),  # type: ignore[arg-type]
    ("get id str unknown", lambda f, i: f.get("12345"), errors.NotFound),  # type: ignore[arg-type]
    ("get id zero", lambda f, i: f.get(0), errors.InvalidArgument),
    ("get id negative", lambda f, i: f.get(-5), errors.InvalidArgument),
    ("get id too big", lambda f, i: f.get(2**64), errors.InvalidArgument),
    ("get id float", lambda f, i: f.get(1.0), errors.InvalidArgument),  # type: ignore[arg-type]
    ("forget unknown id", lambda f, i: f.forget(12345), errors.NotFound),
    ("forget id bool", lambda f, i: f.forget(True), errors.InvalidArgument),
    ("update nothing", lambda f, i: f.update(i), errors.InvalidArgument),
    ("update unknown id", lambda f, i: f.update(999, text="x"), errors.NotFound),
    ("update empty text", lambda f, i: f.update(i, text=""), errors.InvalidArgument),
    (
        "update bad confidence",
        lambda f, i: f.update(i, text="ok", confidence=-0.1),
        errors.InvalidArgument,
    ),
    ("update negative strength", lambda f, i: f.update(i, strength=-1.0), errors.InvalidArgument),
    (
        "update wrong embedding dim",
        lambda f, i: f.update(i, embedding=[1.0]),
        errors.InvalidArgument,
    ),
    ("remember_many str", lambda f, i: f.remember_many("abc"), errors.InvalidArgument),
    (
        "remember_many one bad item",
        lambda f, i: f.remember_many(["ok", ""]),
        errors.InvalidArgument,
    ),
    (
        "remember_many bad dict",
        lambda f, i: f.remember_many([{"txt": "x"}]),
        errors.InvalidArgument,
    ),
    ("remember_many non-item", lambda f, i: f.remember_many([3]), errors.InvalidArgument),  # type: ignore[list-item]
]


@pytest.fixture
def field_with_one(tmp_path: Path) -> tuple[Path, int]:
    root = tmp_path / "field"
    with chitta.open(root) as f:
        mid = f.remember("the one memory", embedding=[0.0, 1.0, 0.0], tags=["t"])
    return root, mid


@pytest.mark.parametrize("name,call,exc", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_and_leaves_field_unchanged(
    field_with_one: tuple[Path, int],
    name: str,
    call: Callable[[chitta.Field, int], Any],
    exc: type[BaseException],
) -> None:
    root, mid = field_with_one
    before = snapshot(root)
    with chitta.open(root) as f:
        with pytest.raises(exc):
            call(f, mid)
        assert len(f) == 1 and f.get(mid).text == "the one memory"
    assert snapshot(root) == before


def test_invalid_argument_is_also_value_error_and_not_found_key_error(
    field_with_one: tuple[Path, int],
) -> None:
    root, _ = field_with_one
    with chitta.open(root) as f:
        with pytest.raises(ValueError):
            f.remember("")
        with pytest.raises(KeyError):
            f.get(424242)


def test_closed_field_refuses_everything(field_with_one: tuple[Path, int]) -> None:
    root, mid = field_with_one
    before = snapshot(root)
    f = chitta.open(root)
    f.close()
    f.close()  # idempotent
    for call in (
        lambda: f.remember("x"),
        lambda: f.get(mid),
        lambda: f.forget(mid),
        lambda: f.update(mid, text="y"),
        lambda: f.refresh(),
        lambda: f.stats(),
        lambda: len(f),
        lambda: f.flush(),
    ):
        with pytest.raises(errors.ClosedError):
            call()
    assert snapshot(root) == before


def test_read_only_field_refuses_writes(field_with_one: tuple[Path, int]) -> None:
    root, mid = field_with_one
    before = snapshot(root)
    with chitta.open(root, read_only=True) as f:
        assert f.instance_id is None
        with pytest.raises(errors.InvalidArgument):
            f.remember("x")
        with pytest.raises(errors.InvalidArgument):
            f.forget(mid)
    assert snapshot(root) == before


def test_path_that_is_not_a_field(tmp_path: Path) -> None:
    with pytest.raises(errors.NotAFieldError):
        chitta.open(tmp_path / "missing", create=False)
    with pytest.raises(errors.NotAFieldError):
        chitta.open(tmp_path / "missing", read_only=True)
    assert not (tmp_path / "missing").exists()
    a_file = tmp_path / "file.txt"
    a_file.write_text("hello")
    with pytest.raises(errors.NotAFieldError):
        chitta.open(a_file)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(errors.NotAFieldError):
        chitta.open(busy)
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"durability": "sometimes"},
        {"instance_id": 0},
        {"instance_id": 2**32},
        {"instance_id": "7"},
        {"segment_bytes": 10},
        {"create": "yes"},
    ],
)
def test_bad_open_arguments(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    with pytest.raises(errors.InvalidArgument):
        chitta.open(tmp_path / "f", **kwargs)
    assert not (tmp_path / "f").exists()


def test_path_wrong_type(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidArgument):
        chitta.open(42)  # type: ignore[arg-type]
