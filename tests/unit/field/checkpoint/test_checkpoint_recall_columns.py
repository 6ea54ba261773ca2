"""The recall index's packed columns in a checkpoint (state 4): a field opened
from the checkpoint answers every organ query as the replayed field does,
staged memories keep their arrival order, and a state without the columns
(state 3) still restores them from the live puts."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _recall_index_state import organ_state

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt

NOW = 1_780_000_000.0
LABELS = {
    "kind": {"observation", "decision", "lesson"},
    "realm": {None, "r0", "r1", "r2"},
    "session": {None, "s1", "\u00fc"},
    "harness": {None},
}


def _open(root: Path, **kw: Any) -> chitta.Field:
    return chitta.open(root, clock=lambda: NOW, embedder="hashing", **kw)


def _build(root: Path) -> list[int]:
    with _open(root) as f:
        ids = f.remember_many(
            [
                {
                    "text": f"m\u00e9moire {i} topic {i % 7}",
                    "realm": f"r{i % 3}",
                    "kind": ("observation", "lesson")[i % 2],
                    "session": (None, "s1", "\u00fc")[i % 3],
                    "at": NOW - 1000 * i,
                    **(
                        {"meta": {"recall_context": "tea time", "speaker": "Ana"}}
                        if i % 11 == 0
                        else {}
                    ),
                }
                for i in range(200)
            ]
        )
        ids.append(f.remember("a decision late", kind="decision", session="s1"))
        for mid in ids[5:40:3]:
            f.forget(mid)
        f.update(ids[7], text="changed text")
        f.recall("topic 2", k=5)  # touches: some leave the write gate
        ids += f.remember_many([{"text": f"late {i}"} for i in range(20)])
        f.forget(ids[-3])
    return ids


def _state(f: chitta.Field, ids: list[int]) -> dict[str, Any]:
    out = organ_state(f.core.index, ids, LABELS, ("Ana",))
    # The exact scan's matrix product may round the last bit differently for a
    # matrix of another capacity (restored vs grown): compare its cosines to 1e-6.
    out["dense"] = [(i, np.round(c, 6).tolist()) for i, c in out["dense"]]
    return out


def test_columns_round_trip(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root, read_only=True, load_checkpoint=False) as f:
        want = _state(f, ids)
    with _open(root) as f:
        f.checkpoint()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(root, read_only=True) as f:
            assert f.checkpoint_loaded is not None
            assert _state(f, ids) == want
    assert len(want["staged_order"]) > 100


def test_state_without_columns_restores_from_the_puts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root, read_only=True, load_checkpoint=False) as f:
        want = _state(f, ids)
    from chitta.organs.recall_index_snapshot import IndexSnapshot

    real = IndexSnapshot.snapshot_files

    def without_columns(self: Any, *a: Any, **kw: Any) -> dict[str, Any]:
        out = real(self, *a, **kw)
        del out["columns"]
        staged = np.frombuffer(out["staged"], "<u8").copy()
        np.random.default_rng(0).shuffle(staged)  # state 3 wrote them in any order
        out["staged"] = staged.tobytes()
        return out

    monkeypatch.setattr(IndexSnapshot, "snapshot_files", without_columns)
    with _open(root) as f:
        f.checkpoint()
    monkeypatch.undo()
    with _open(root, read_only=True) as f:
        assert f.checkpoint_loaded is not None
        got = _state(f, ids)
    # without columns the staged memories arrive in the memories' order, the rest is equal
    assert sorted(got.pop("staged_order")) == sorted(want.pop("staged_order"))
    assert got == want


def test_columns_that_do_not_match_the_memories_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    _build(root)
    real = fmt.write_state

    def broken(path: Path, state: dict[str, Any]) -> int:
        cols = state["organs"]["recall_index"]["columns"]
        cols["ids"] = cols["ids"][:-8]
        cols["created_ms"] = cols["created_ms"][:-8]
        for f in cols["labels"].values():
            f[1] = f[1][:-4]
        return real(path, state)

    monkeypatch.setattr(fmt, "write_state", broken)
    with _open(root) as f:
        f.checkpoint()
    monkeypatch.undo()
    with pytest.warns(CheckpointIgnored, match="columns"), _open(root, read_only=True) as f:
        assert f.checkpoint_loaded is None
