"""Checkpoints: opening from a checkpoint gives the same field as replaying the
whole log (the oracle), writers keep going while one is written, and a damaged,
foreign or unknown checkpoint is ignored with a warning, never trusted."""

from __future__ import annotations

import struct
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fieldtools import flip_byte, memory_dict, segment_files, truncate_by

import chitta
from chitta.errors import CheckpointIgnored, InvalidArgument, LockedError
from chitta.field.checkpoint import CheckpointPolicy, store
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint.run import write_checkpoint

pytestmark = (
    pytest.mark.slow
)  # ~45 s: many fields checkpointed and reopened; outside the fast subset (docs/CONTRIBUTING.md)

NOW = 1_780_000_000.0  # a fixed clock: recency factors are then equal on both sides
QUERIES = [
    "topic 3 memory",
    "changed text",
    "triplet tea",
    "nothing like this at all",
    "item 42",
    "tea ready",
]


def _open(root: Path, **kw: Any) -> chitta.Field:
    kw.setdefault("embedder", "hashing")
    return chitta.open(root, clock=lambda: NOW, **kw)


def _build(root: Path, n: int = 300) -> list[int]:
    """A field exercising every organ: puts with vectors and codes, updates,
    forgets, touches, typed edges, a triplet, demotion, settings."""
    with _open(root) as f:
        ids = f.remember_many(
            [
                {
                    "text": f"memory {i} about topic {i % 7}",
                    "realm": f"r{i % 3}",
                    "tags": [f"t{i % 5}"],
                }
                for i in range(n)
            ]
        )
        ids.append(f.remember("item 42 has a session", session="s1", kind="decision"))
        ids.append(f.remember("the answer is yes", meta={"recall_context": "is the tea ready"}))
        f.forget(ids[3])
        f.update(ids[5], text="changed text five", strength=0.5)
        f.update(ids[6], embedding=np.full(384, 0.25, np.float32))
        f.link(ids[1], ids[2], "RelatedTo", 0.7)
        f.supersede(ids[10], ids[11])
        f.remember_triplet("alice", "drinks", "tea")
        f.recall("topic 2", k=3)  # touches: promotes from staged, CoRetrieved edges
        f.demote_pass()
    return ids


def _observe(f: chitta.Field) -> dict[str, Any]:
    """Everything a user (and the recall path) can see of a field."""
    out: dict[str, Any] = {"ids": f.ids()}
    out["memories"] = [memory_dict(m) for m in f.memories()]
    out["graph"] = {mid: f.core.graph.neighbours(mid) for mid in f.core.memories.all_ids()}
    out["gate"] = f.write_gate_stats()
    stats = f.stats().as_dict()
    out["stats"] = {
        k: stats[k] for k in ("memories", "forgotten", "records_applied", "embedding_dim")
    }
    enc = f.core.encoder_organ.encoder
    out["encoder"] = (
        None
        if enc is None
        else (enc.version, enc.atoms.tobytes(), enc.updates.tobytes(), enc.thresholds.tobytes())
    )
    out["codes"] = {mid: f.core.index.code_features(mid) for mid in f.core.index.coded_ids()}
    out["code_versions"] = {mid: f.core.index.code_version(mid) for mid in f.core.index.coded_ids()}
    out["recall"] = [
        [
            (h.id, h.score, dict(h.lanes), h.factors)
            for h in f.recall(q, k=8, explain=True, touch=False)
        ]
        for q in QUERIES
    ]
    out["filtered"] = [h.id for h in f.recall("memory", k=20, realm="r1", touch=False)]
    return out


def _replayed(root: Path) -> dict[str, Any]:
    with _open(root, read_only=True, load_checkpoint=False) as f:
        assert f.checkpoint_loaded is None
        return _observe(f)


def _from_checkpoint(root: Path) -> tuple[dict[str, Any], chitta.FieldStats]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(root, read_only=True) as f:
            assert f.checkpoint_loaded is not None
            return _observe(f), f.stats()


def test_open_from_checkpoint_equals_full_replay(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _build(root)
    with _open(root) as f:
        info = f.checkpoint()
        assert info.memories == len(f) and info.vectors == len(
            f
        )  # hashing: every memory has a vector
        assert info.clock == f.stats().max_seqno
    observed, stats = _from_checkpoint(root)
    assert observed == _replayed(root)
    assert stats.records_since_checkpoint == 0 and stats.bytes_since_checkpoint == 0
    # Records written after the watermark, by this and by another instance, replay on top of it.
    with _open(root) as f, _open(root) as g:
        f.remember("after the checkpoint, from f")
        g.forget(ids[20])
        g.update(ids[21], text="updated after the checkpoint")
        g.link(ids[30], ids[31], "Supports")
    observed, stats = _from_checkpoint(root)
    replayed = _replayed(root)
    assert observed == replayed
    # remember and update also log sparse codes: 6 records in all
    assert (
        stats.records_since_checkpoint == replayed["stats"]["records_applied"] - info.records == 6
    )
    assert stats.bytes_since_checkpoint > 0


def test_learned_encoder_state_survives_a_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with _open(root) as f:
        f.remember_many(
            [f"sentence number {i} on subject {i % 31}" for i in range(1100)]
        )  # > one learning step
        assert f.core.encoder_organ.version >= 1 and f.core.encoder_organ.encoder.thresholds.any()
        f.checkpoint()
        f.remember_many([f"late sentence {i}" for i in range(20)])
    observed, _ = _from_checkpoint(root)
    assert observed["encoder"][0] >= 1
    assert observed == _replayed(root)


def test_a_field_without_vectors_checkpoints_and_loads(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        ids = [f.remember(f"plain note {i}") for i in range(5)]
        info = f.checkpoint()
        assert info.vectors == 0 and info.memories == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        g = chitta.open(root, embedder=None)
    with g:
        assert g.checkpoint_loaded is not None
        assert [g.get(i).text for i in ids] == [f"plain note {i}" for i in range(5)]
        assert g.recall("plain note 3", k=1)[0].id == ids[3]


def test_second_checkpoint_builds_on_the_first_and_old_ones_are_pruned(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root, n=60)
    names = []
    for round_ in range(4):
        with _open(root) as f:
            f.remember(f"round {round_}")
            f.forget(f.ids()[round_])
            names.append(Path(f.checkpoint().path).name)
        observed, _ = _from_checkpoint(root)
        assert observed == _replayed(root)
    kept = sorted(p.name for p in store.checkpoint_dir(root).glob("ckpt-*"))
    assert kept == sorted(names[-store.KEEP :])
    assert (store.checkpoint_dir(root) / "CURRENT").read_text().strip() == names[-1]


def test_writers_keep_appending_while_a_checkpoint_is_written(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root, n=2000)
    acked: list[int] = []
    stop = threading.Event()

    def writer() -> None:
        with chitta.open(root, embedder=None) as w:
            while not stop.is_set():
                acked.append(w.remember(f"concurrent {len(acked)}"))

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(3):
            write_checkpoint(root)
    finally:
        stop.set()
        t.join()
    assert len(acked) > 10
    observed, _ = _from_checkpoint(root)
    assert observed == _replayed(root)
    assert set(acked) <= set(observed["ids"]) and len(observed["ids"]) == len(set(observed["ids"]))


def test_a_second_checkpoint_writer_is_refused_not_queued(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root, n=20)
    with store.writer_lock(root.absolute()), pytest.raises(LockedError):
        write_checkpoint(root)


# ---- damage: the log stays the truth --------------------------------------------------------
def _checkpointed(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "f"
    _build(root, n=120)
    with _open(root) as f:
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None
    return root, live


def _assert_ignored(root: Path, match: str) -> None:
    with pytest.warns(CheckpointIgnored, match=match):
        f = _open(root, read_only=True)
    with f:
        assert f.checkpoint_loaded is None
        observed = _observe(f)
    assert observed == _replayed(root)


@pytest.mark.parametrize("name", ["state", "vectors.ref", "codes.bin", "posting.idx", "bm25.idx"])
@pytest.mark.parametrize("where", ["head", "middle", "tail"])
def test_a_flipped_byte_in_any_file_rebuilds_from_the_log(
    tmp_path: Path, name: str, where: str
) -> None:
    root, live = _checkpointed(tmp_path)
    path = live / name
    size = path.stat().st_size
    flip_byte(path, {"head": 9, "middle": size // 2, "tail": size - 2}[where])
    _assert_ignored(root, "checkpoint")


@pytest.mark.parametrize("name", ["state", "vectors.ref", "codes.bin", "posting.idx", "bm25.idx"])
def test_a_truncated_or_missing_file_rebuilds_from_the_log(tmp_path: Path, name: str) -> None:
    root, live = _checkpointed(tmp_path)
    truncate_by(live / name, 7)
    _assert_ignored(root, "checkpoint")
    (live / name).unlink()
    _assert_ignored(root, "checkpoint")


def test_a_sidecar_from_another_checkpoint_is_refused(tmp_path: Path) -> None:
    root, first = _checkpointed(tmp_path)
    saved = (first / "vectors.ref").read_bytes()
    with _open(root) as f:
        f.update(f.ids()[0], embedding=np.full(384, -1.0, np.float32))
        f.checkpoint()
    live = store.current(root.absolute())
    assert live is not None and live != first
    (live / "vectors.ref").write_bytes(saved)  # intact on its own, but not this state's
    _assert_ignored(root, "vectors.ref")


@pytest.mark.parametrize(
    "content", [b"", b"garbage\n", b"ckpt-0000000000000001-deadbeef\n", b"x" * 200]
)
def test_a_bad_current_pointer_rebuilds_from_the_log(tmp_path: Path, content: bytes) -> None:
    root, _ = _checkpointed(tmp_path)
    (store.checkpoint_dir(root) / "CURRENT").write_bytes(content)
    _assert_ignored(root, "CURRENT")


def test_an_unknown_state_version_is_ignored_with_a_warning(tmp_path: Path) -> None:
    root, live = _checkpointed(tmp_path)
    data = bytearray((live / "state").read_bytes()[:-4])
    struct.pack_into("<I", data, 8, fmt.STATE_VERSION + 1)
    (live / "state").write_bytes(bytes(data) + struct.pack("<I", fmt.crc32c(bytes(data))))
    _assert_ignored(root, "version")


def test_a_checkpoint_that_does_not_match_the_log_is_ignored(tmp_path: Path) -> None:
    root, _ = _checkpointed(tmp_path)
    # The log lost its tail after the checkpoint was taken (e.g. restored from an older copy).
    seg = segment_files(root)[-1]
    truncate_by(seg, seg.stat().st_size // 2)
    # the watermark past the log's end, or (state 10) a vector reference past a segment's end
    with pytest.warns(CheckpointIgnored, match="past the end|shorter"):
        f = _open(root, read_only=True, salvage=True)
    with f:
        assert f.checkpoint_loaded is None


def test_a_malformed_state_map_is_ignored_not_half_applied(tmp_path: Path) -> None:
    root, live = _checkpointed(tmp_path)
    _version, state = fmt.read_state(live / "state")
    state["organs"]["graph"] = {"edges": [[1, 2]]}  # wrong arity, valid checksum
    fmt.write_state(live / "state", state)
    _assert_ignored(root, "ValueError")


# ---- policy and CLI ------------------------------------------------------------------------
def test_policy_thresholds() -> None:
    p = CheckpointPolicy(records=100, log_bytes=1000, max_age_s=60, min_records=10)
    assert p.due(99, 999, None) is None
    assert "records" in (p.due(100, 0, None) or "")
    assert "bytes" in (p.due(0, 1000, None) or "")
    assert p.due(9, 0, 3600) is None
    assert "old" in (p.due(10, 0, 61) or "")
    for bad in ({"records": 0}, {"log_bytes": -1}, {"max_age_s": 0}, {"min_records": True}):
        with pytest.raises(InvalidArgument):
            CheckpointPolicy(**bad)  # type: ignore[arg-type]


def test_if_needed_writes_only_when_due(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _build(root, n=50)
    assert write_checkpoint(root, policy=CheckpointPolicy(records=10_000)) is None
    assert store.current(root.absolute()) is None
    first = write_checkpoint(root, policy=CheckpointPolicy(records=50))
    assert first is not None
    assert write_checkpoint(root, policy=CheckpointPolicy(records=50)) is None  # nothing new since
    with _open(root) as f:
        f.remember_many([f"new {i}" for i in range(60)])
    again = write_checkpoint(root, policy=CheckpointPolicy(records=50))
    assert again is not None and again.clock > first.clock
