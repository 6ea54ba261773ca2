"""A checkpoint's posting index is checked at open and read on first use
(chitta/organs/recall_posting.py): until a posting query, an open holds only
the file's descriptor; the lane then answers exactly like a field replayed
from its log, even if a later checkpoint has removed the file meanwhile, and
writes after the open (a forget, a re-encoded memory) reach the loaded index."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import store

NOW = 1_780_000_000.0
QUERIES = ["memory about topic 3", "alpha gamma", "topic 6 delta", "item 42"]


def _open(root: Path, **kw: Any) -> chitta.Field:
    return chitta.open(root, clock=lambda: NOW, embedder="hashing", **kw)


def _posting(f: chitta.Field) -> list[list[int]]:
    return [[h.id for h in f.recall(q, k=10, lanes=["posting"], touch=False)] for q in QUERIES]


def _build(root: Path) -> list[int]:
    with _open(root) as f:
        ids = f.remember_many(
            [{"text": f"memory {i} about topic {i % 7} alpha"} for i in range(120)]
        )
        f.checkpoint()
    return ids


def _replayed(root: Path, tmp: Path) -> list[list[int]]:
    """The same field opened from its log alone (the checkpoint directory removed)."""
    copy = tmp / "log-only"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("checkpoint", "LOCK", "locks"))
    with _open(copy, read_only=True) as f:
        assert f.stats().checkpoint is None
        return _posting(f)


def test_posting_index_is_read_on_first_posting_query(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root)
    with _open(root, read_only=True) as f:
        assert f.stats().checkpoint is not None
        assert f.core.index._posting_now is None  # only the checked descriptor so far
        f.recall("memory about topic 3", k=5, lanes=["bm25"], touch=False)
        assert f.core.index._posting_now is None  # other lanes do not read it
        got = _posting(f)
        assert f.core.index._posting_now is not None
    assert got == _replayed(root, tmp_path) and any(got)


def test_a_pruned_checkpoint_file_is_still_read_through_the_descriptor(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root)
    with _open(root, read_only=True) as f:
        live = store.current(root)
        assert live is not None
        os.unlink(live / "posting.idx")  # as if a later checkpoint had pruned this one
        got = _posting(f)
    assert got == _replayed(root, tmp_path)


def test_writes_after_open_reach_the_lazily_read_index(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root) as f:
        f.forget(ids[3])  # a coded memory: the index is read to remove it
        f.update(ids[10], text="item 42 delta gamma")  # re-embedded and re-encoded
        new = f.remember("alpha gamma item 42")
        got = _posting(f)
    assert ids[3] not in {i for hits in got for i in hits}
    assert new in got[1] or new in got[3]
    with _open(root, read_only=True) as g:  # and a second open replays those writes the same way
        assert _posting(g) == got


def test_a_damaged_posting_file_fails_the_open_not_the_query(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root)
    live = store.current(root)
    assert live is not None
    path = live / "posting.idx"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _open(root, read_only=True) as f:
            assert f.stats().checkpoint is None  # ignored: rebuilt from the log
            assert _posting(f) == _replayed(root, tmp_path)
    assert any(issubclass(w.category, CheckpointIgnored) for w in caught)


def test_without_proc_the_index_is_read_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chitta.organs import recall_posting

    root = tmp_path / "f"
    _build(root)
    monkeypatch.setattr(recall_posting, "_FD_DIR", str(tmp_path / "no-proc"))
    with _open(root, read_only=True) as f:
        assert f.core.index._posting_now is not None
        assert _posting(f) == _replayed(root, tmp_path)


def test_a_failed_lazy_read_is_not_retried_through_a_stale_descriptor(tmp_path: Path) -> None:
    from chitta.errors import CorruptionError
    from chitta.organs import recall_posting

    root = tmp_path / "f"
    _build(root)
    with _open(root, read_only=True) as f:
        held = f.core.index._posting_file
        assert held is not None
        real = recall_posting.PostingIndex.load
        try:

            def broken(path: str) -> Any:
                raise CorruptionError("simulated read failure")

            recall_posting.PostingIndex.load = broken  # type: ignore[method-assign]
            with pytest.raises(CorruptionError, match="simulated"):
                f.recall("alpha", k=5, lanes=["posting"], touch=False)
        finally:
            recall_posting.PostingIndex.load = real  # type: ignore[method-assign]
        with pytest.raises(CorruptionError, match="could not be read earlier"):
            f.recall("alpha", k=5, lanes=["posting"], touch=False)
        with pytest.raises(CorruptionError, match="already read"):
            held.read()  # the descriptor was closed after the failed read
