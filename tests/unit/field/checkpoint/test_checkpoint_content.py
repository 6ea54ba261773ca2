"""A checkpoint whose CRCs hold but whose content cannot be its log's is
refused with CheckpointIgnored and the field is rebuilt from the log (issue
16, finding 11). The states are rewritten through the state file's own
writer, so every CRC is valid; the oracle is a log-only open."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt


def _forge(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    name = (root / "checkpoint" / "CURRENT").read_text().strip()
    path = root / "checkpoint" / name / "state"
    _, state = fmt.read_state(path)
    change(state)
    fmt.write_state(path, state)


def _bad_utf8(state: dict[str, Any]) -> None:
    mem = state["organs"]["memories"]
    text = bytearray(mem["text"])
    text[0] = 0xFF
    mem["text"] = bytes(text)


def _split_char(state: dict[str, Any]) -> None:
    mem = state["organs"]["memories"]
    mem["text"] = "é".encode() + bytes(mem["text"])[2:]  # first row starts "é" (2 bytes)...
    import numpy as np

    off = np.frombuffer(mem["text_offsets"], "<i8").copy()
    off[1] = 1  # ...and the first row ends inside it
    mem["text_offsets"] = off.tobytes()


FORGERIES: dict[str, Callable[[dict[str, Any]], None]] = {
    "invalid_utf8": _bad_utf8,
    "offset_inside_a_character": _split_char,
    "applied_beyond_the_log": lambda s: s.__setitem__(
        "applied", 9223372036854775824 - 2**63 + 2**62
    ),
    "negative_unrouted": lambda s: s.__setitem__("unrouted", -1),
    "more_memories_than_applied": lambda s: s.__setitem__("applied", 1),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_forged_checkpoint_is_ignored_and_the_log_wins(tmp_path: Path, name: str) -> None:
    root = tmp_path / "field"
    with chitta.open(root) as f:
        for text in ("ébauche first", "second memory", "third memory"):
            f.remember(text)
        f.checkpoint()
    with chitta.open(root, read_only=True, load_checkpoint=False) as f:
        truth = sorted((m.id, m.text) for m in (f.get(i) for i in f.ids()))
    _forge(root, FORGERIES[name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with chitta.open(root, read_only=True) as f:
            assert f.checkpoint_loaded is None
            assert sorted((m.id, m.text) for m in (f.get(i) for i in f.ids())) == truth
    assert any(issubclass(w.category, CheckpointIgnored) for w in caught)
