"""The keyword index as a checkpoint sidecar (bm25.idx, state version 3): a
field opened from a checkpoint loads it instead of re-tokenising every text,
answers keyword recall exactly like the field replayed from its log, keeps
indexing after the load, and refuses a sidecar that is not the state's.
Flipped bytes and truncation of bm25.idx are in test_checkpoint.py."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import store

NOW = 1_780_000_000.0
QUERIES = ["topic 3 memory", "tea ready", "item 42", "alpha beta", "nothing like this"]


def _open(root: Path, **kw: Any) -> chitta.Field:
    return chitta.open(root, clock=lambda: NOW, embedder="hashing", **kw)


def _keyword(f: chitta.Field) -> list[list[tuple[int, float]]]:
    return [
        [(h.id, h.score) for h in f.recall(q, k=10, lanes=["bm25"], touch=False)] for q in QUERIES
    ]


def _build(root: Path) -> list[int]:
    with _open(root) as f:
        ids = f.remember_many(
            [{"text": f"memory {i} about topic {i % 7} alpha"} for i in range(200)]
        )
        ids.append(f.remember("the answer is yes", meta={"recall_context": "is the tea ready"}))
        f.forget(ids[4])
        f.update(ids[5], text="item 42 beta")
    return ids


def test_open_loads_the_keyword_index_instead_of_the_texts(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root) as f:
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None and (live / "bm25.idx").exists()
    _version, state = fmt.read_state(live / "state")
    assert state["organs"]["recall_index"]["keyword_index"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(root, read_only=True) as f:
            assert f.checkpoint_loaded is not None
            assert not f.core.index._text_pending  # nothing left to tokenise
            assert len(f.core.index._bm25) == len(f)
            loaded = _keyword(f)
    with _open(root, read_only=True, load_checkpoint=False) as f:
        assert _keyword(f) == loaded
    # Writes after the load change the loaded index like any other.
    with _open(root) as f:
        f.forget(ids[7])
        f.update(ids[8], text="alpha beta gamma")
        f.update(ids[-1], text="the answer is no")  # keeps its recall context
        f.remember("alpha beta delta")
        after = _keyword(f)
    with _open(root, read_only=True, load_checkpoint=False) as f:
        assert _keyword(f) == after


def test_a_bm25_sidecar_from_another_checkpoint_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root) as f:
        f.checkpoint()
    first = store.current(root.absolute())
    assert first is not None
    saved = (first / "bm25.idx").read_bytes()
    with _open(root) as f:
        f.update(ids[0], text="something else entirely")
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None and live != first
    (live / "bm25.idx").write_bytes(saved)  # intact on its own, but not this state's
    with pytest.warns(CheckpointIgnored, match="bm25.idx"):
        f = _open(root, read_only=True)
    with f:
        assert f.checkpoint_loaded is None
        got = _keyword(f)
    with _open(root, read_only=True, load_checkpoint=False) as f:
        assert _keyword(f) == got


def test_a_checkpoint_without_the_sidecar_builds_from_the_texts(tmp_path: Path) -> None:
    # A state written without bm25.idx (as version 2 was): the texts are indexed on first use.
    root = tmp_path / "f"
    _build(root)
    with _open(root) as f:
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None
    _version, state = fmt.read_state(live / "state")
    state["organs"]["recall_index"]["keyword_index"] = False
    del state["sidecars"]["bm25.idx"]
    fmt.write_state(live / "state", state)
    (live / "bm25.idx").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(root, read_only=True) as f:
            assert f.checkpoint_loaded is not None and len(f.core.index._text_pending) == len(f)
            got = _keyword(f)
    with _open(root, read_only=True, load_checkpoint=False) as f:
        assert _keyword(f) == got
