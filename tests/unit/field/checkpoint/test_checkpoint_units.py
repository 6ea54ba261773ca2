"""Unit vectors across checkpoints. State 8 writes no units.emb: the recall index
normalises vectors.emb at open. States 3-7 wrote units.emb, which a reader still maps
copy-on-write instead of normalising. The oracle is the same field replayed from its
log: every unit vector, every dense result bit for bit; writes after the open grow the
matrix; a units.emb that does not belong to its state is refused."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import store, vector_refs
from chitta.field.checkpoint.mapped_vectors import MappedVectors

DIM = 24
NOW = 1_780_000_000.0  # a fixed clock: recency factors are then equal on both sides


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def _build(root: Path) -> list[int]:
    vecs = _vectors(120)
    vecs[4] = 0.0  # a zero vector: the recall index keeps no unit row for it
    with chitta.open(root, clock=lambda: NOW, embedder=None) as f:
        ids = f.remember_many([{"text": f"memory {i}", "embedding": v} for i, v in enumerate(vecs)])
        f.forget(ids[9])
        f.update(ids[10], embedding=_vectors(1, 5)[0])
        f.checkpoint()
    return ids


def _dense_view(f: chitta.Field) -> tuple[dict[int, bytes], list[list[tuple[int, float]]]]:
    units = {}
    for mid in f.ids():
        v = f.core.index.vector(mid)
        units[mid] = b"" if v is None else v.tobytes()
    hits = [
        [(h.id, h.score) for h in f.recall(vector=q, k=7, lanes=("dense",), touch=False)]
        for q in _vectors(6, 3)
    ]
    return units, hits


def _from_checkpoint(root: Path) -> chitta.Field:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        f = chitta.open(root, clock=lambda: NOW, read_only=True, embedder=None)
    assert f.checkpoint_loaded is not None
    return f


def _as_state7(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the live (state 8) checkpoint into what a state-7 writer wrote: units.emb
    (the replayed field's unit rows in vectors.emb's order, zeros where it has none)
    recorded in the state, and the state file framed as version 7."""
    live = store.current(root.absolute())
    assert live is not None and not (live / "units.emb").exists()
    _version, state = fmt.read_state(live / "state")
    refs = state["organs"]["memories"].pop("vector_refs", None)
    if refs is not None:  # state 10 references the log: a state-7 writer copied the vectors
        loaded, dim = vector_refs.read_refs(live / "vectors.ref", refs["segments"], [])
        mapped = MappedVectors(root, loaded.segments, loaded.seg, loaded.offsets, dim)
        ids, vecs = loaded.ids, mapped[np.arange(len(loaded.ids))]
        emb = fmt.write_emb(live / "vectors.emb", ids, vecs)
        state["sidecars"]["vectors.emb"] = {**emb, "crc": fmt.tail_crc(live / "vectors.emb")}
        del state["sidecars"]["vectors.ref"]
        (live / "vectors.ref").unlink()
    ids, vecs = fmt.read_emb(live / "vectors.emb")
    with chitta.open(root, read_only=True, embedder=None, load_checkpoint=False) as f:
        rows = [f.core.index.vector(int(mid)) for mid in ids]
    units = np.stack([np.zeros(vecs.shape[1], np.float32) if r is None else r for r in rows])
    info = fmt.write_emb(live / "units.emb", ids, units)
    state["sidecars"]["units.emb"] = {**info, "crc": fmt.tail_crc(live / "units.emb")}
    missing = [int(mid) for mid, r in zip(ids, rows) if r is None]
    state["organs"]["recall_index"]["units_missing"] = np.array(missing, "<u8").tobytes()
    monkeypatch.setattr(fmt, "STATE_VERSION", 7)
    fmt.write_state(live / "state", state)
    monkeypatch.undo()


def test_state8_writes_no_units_and_normalises_as_replay_does(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    live = store.current(root.absolute())
    assert live is not None and not (live / "units.emb").exists()
    assert fmt.read_state(live / "state")[0] == fmt.STATE_VERSION >= 8  # state 8 on: no units.emb
    with _from_checkpoint(root) as f:
        assert f.core.index._vecs.flags.owndata  # normalised at open, no map
        observed = _dense_view(f)
        assert f.core.index.vector(ids[4]) is None
    with chitta.open(
        root, clock=lambda: NOW, read_only=True, embedder=None, load_checkpoint=False
    ) as f:
        assert observed == _dense_view(f)


def test_state7_unit_rows_are_mapped_and_equal_the_replayed_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    _as_state7(root, monkeypatch)
    live = store.current(root.absolute())
    assert live is not None and fmt.read_state(live / "state")[0] == 7
    _version, state = fmt.read_state(live / "state")
    assert np.frombuffer(state["organs"]["recall_index"]["units_missing"], "<u8").tolist() == [
        ids[4]
    ]
    with _from_checkpoint(root) as f:
        assert not f.core.index._vecs.flags.owndata  # a view of the map, not a normalised copy
        observed = _dense_view(f)
        assert f.core.index.vector(ids[4]) is None
    with chitta.open(
        root, clock=lambda: NOW, read_only=True, embedder=None, load_checkpoint=False
    ) as f:
        assert observed == _dense_view(f)


@pytest.mark.parametrize("state", [7, 8])
def test_writes_after_the_open_grow_the_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: int
) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    if state == 7:
        _as_state7(root, monkeypatch)
    extra = _vectors(300, 8)  # more rows than the map holds
    with chitta.open(root, clock=lambda: NOW, embedder=None) as f:
        assert f.checkpoint_loaded is not None
        new = f.remember_many([{"text": f"later {i}", "embedding": v} for i, v in enumerate(extra)])
        f.update(ids[4], embedding=extra[0] * 2)  # the memory without a unit row gets one
        f.forget(ids[11])
        top = f.recall(vector=extra[17], k=1, lanes=("dense",), touch=False)
        assert top[0].id == new[17]
        observed = _dense_view(f)
    with chitta.open(
        root, clock=lambda: NOW, read_only=True, embedder=None, load_checkpoint=False
    ) as f:
        assert observed == _dense_view(f)
    # The file under the copy-on-write map is unchanged: the checkpoint still loads.
    with _from_checkpoint(root) as f:
        assert len(f) == len(ids) - 1 + len(extra) - 1


def test_units_of_other_ids_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "f"
    _build(root)
    _as_state7(root, monkeypatch)
    live = store.current(root.absolute())
    assert live is not None
    ids, rows = fmt.read_emb(live / "units.emb")
    ids, rows = ids[::-1].copy(), rows[::-1].copy()
    (live / "units.emb").unlink()
    info = fmt.write_emb(live / "units.emb", ids, rows)
    _version, state = fmt.read_state(live / "state")
    state["sidecars"]["units.emb"] = {
        **info,
        "crc": int.from_bytes((live / "units.emb").read_bytes()[-4:], "little"),
    }
    monkeypatch.setattr(fmt, "STATE_VERSION", 7)
    fmt.write_state(live / "state", state)
    monkeypatch.undo()
    with pytest.warns(CheckpointIgnored, match="units.emb"):
        f = chitta.open(root, clock=lambda: NOW, read_only=True, embedder=None)
    with f:
        assert f.checkpoint_loaded is None
