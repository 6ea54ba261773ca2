"""Field behaviour: the write path, reading back, reopening, instances."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fieldtools import segment_files, snapshot

import chitta
from chitta import errors


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "field"


def test_remember_get_round_trip(root: Path) -> None:
    with chitta.open(root) as f:
        mid = f.remember(
            "ninja builds the core",
            kind="decision",
            realm="build",
            session="s1",
            source_tool="claude-code-cli",
            tags=["build", "ninja", "build"],
            confidence=0.75,
            embedding=[0.5, -0.25, 1.0],
            meta={"pr": 12, "files": ["a.cc"]},
        )
        m = f.get(mid)
    assert m.text == "ninja builds the core"
    assert (m.kind, m.realm, m.session, m.source_tool) == (
        "decision",
        "build",
        "s1",
        "claude-code-cli",
    )
    assert m.harness == "claude-code"
    assert m.tags == ("build", "ninja")  # duplicates dropped, order kept
    assert m.confidence == 0.75 and m.strength == 1.0
    assert m.meta == {"pr": 12, "files": ["a.cc"]}
    assert m.embedding is not None and m.embedding.dtype == np.float32
    assert m.embedding.tolist() == [0.5, -0.25, 1.0]
    assert m.instance_id == mid >> 32


def test_harness_is_inferred_from_source_tool(root: Path) -> None:
    with chitta.open(root) as f:
        assert f.get(f.remember("a", source_tool="codex-exec")).harness == "codex"
        assert f.get(f.remember("b", source_tool="Codex")).harness == "codex"
        assert f.get(f.remember("c", source_tool="claude")).harness == "claude-code"
        assert f.get(f.remember("d")).harness is None


def test_ids_are_unique_across_instances_and_stable_across_reopen(root: Path) -> None:
    with chitta.open(root) as a, chitta.open(root) as b:
        ids = [a.remember(f"a{i}") for i in range(50)] + [b.remember(f"b{i}") for i in range(50)]
    assert len(set(ids)) == 100
    with chitta.open(root) as f:
        assert sorted(f.ids()) == sorted(ids)
        assert all(f.get(i).text[0] in "ab" for i in ids)


def test_forget_hides_memory_but_keeps_log(root: Path) -> None:
    with chitta.open(root) as f:
        keep, gone = f.remember("keep"), f.remember("gone")
        f.forget(gone)
        assert gone not in f and keep in f and len(f) == 1
        with pytest.raises(errors.NotFound):
            f.get(gone)
        with pytest.raises(errors.NotFound):
            f.forget(gone)  # already forgotten
    with chitta.open(root) as f:
        assert f.ids() == [keep]
        assert f.stats().forgotten == 1


def test_update_content_and_state_as_one_group(root: Path) -> None:
    with chitta.open(root) as f:
        mid = f.remember("port 8080", tags=["net"])
        f.update(mid, text="port 8081", tags=["net", "fixed"], confidence=0.5, strength=2.0)
        m = f.get(mid)
    assert (m.text, m.tags, m.confidence, m.strength) == ("port 8081", ("net", "fixed"), 0.5, 2.0)
    with chitta.open(root, read_only=True) as f:
        assert f.get(mid) == m
    ops_seen = [rec["op"] for rec in chitta.field.inspect.iter_records(root)]
    assert ops_seen == ["PutPayload", "Batch"]


def test_remember_many_is_one_batch_record(root: Path) -> None:
    with chitta.open(root) as f:
        ids = f.remember_many(["one", {"text": "two", "kind": "thought", "tags": ["x"]}, "three"])
        assert [f.get(i).text for i in ids] == ["one", "two", "three"]
        assert f.get(ids[1]).kind == "thought"
    records = list(chitta.field.inspect.iter_records(root))
    assert [r["op"] for r in records] == ["Batch"]
    assert len(records[0]["fields"]["ops"]) == 3


def test_reopen_reproduces_identical_state(root: Path) -> None:
    with chitta.open(root) as f:
        ids = [
            f.remember(f"memory {i}", tags=[str(i % 3)], embedding=np.full(4, i, np.float32))
            for i in range(30)
        ]
        f.forget(ids[3])
        f.update(ids[4], text="changed", confidence=0.1)
        before = sorted((m for m in f.memories()), key=lambda m: m.id)
    first, second = snapshot(root), snapshot(root)
    assert first == second
    with chitta.open(root, read_only=True) as f:
        after = sorted(f.memories(), key=lambda m: m.id)
    assert before == after


def test_refresh_sees_other_instances(root: Path) -> None:
    with chitta.open(root) as a, chitta.open(root) as b:
        x = a.remember("written by a")
        assert x not in b
        assert b.refresh() == 1
        assert b.get(x).text == "written by a"
        assert b.refresh() == 0
        y = b.remember("written by b")
        assert a.refresh() == 1 and y in a


def test_a_refresh_with_nothing_new_takes_no_lock_and_misses_nothing(root: Path) -> None:
    """The fast path (SegmentLog.may_have_new false): no exclusive lock, yet every record
    another handle appends is seen by the next refresh, across segment rotations."""
    with chitta.open(root, segment_bytes=4096) as a, chitta.open(root) as b:
        b.refresh()
        taken = 0
        real = type(b.core.lock).__enter__

        def counted(lock: object) -> None:
            nonlocal taken
            taken += 1
            real(lock)  # type: ignore[arg-type]

        type(b.core.lock).__enter__ = counted  # type: ignore[method-assign]
        try:
            assert b.refresh() == 0 and taken == 0  # nothing new: the lock was not taken
            written: list[int] = []
            for i in range(40):  # 4 KiB segments: a rotates several times
                written.append(a.remember(f"memory {i} " + "x" * 300))
                if i % 7 == 0:
                    assert b.refresh() >= 1
            b.refresh()
            assert all(x in b for x in written)
            taken = 0
            assert b.refresh() == 0 and taken == 0
        finally:
            type(b.core.lock).__enter__ = real  # type: ignore[method-assign]
        assert len(segment_files(root)) > 3


def test_named_instance_continues_its_segment(root: Path) -> None:
    with chitta.open(root, instance_id=7) as f:
        first = f.remember("first")
        assert f.instance_id == 7 and first >> 32 == 7
    with chitta.open(root, instance_id=7) as f:
        second = f.remember("second")
        assert second == first + 1  # the id counter continues too
    assert len(segment_files(root)) == 1


def test_second_open_of_live_named_instance_is_locked(root: Path) -> None:
    with chitta.open(root, instance_id=9), pytest.raises(errors.LockedError):
        chitta.open(root, instance_id=9)
    with chitta.open(root, instance_id=9) as f:  # released on close
        assert f.instance_id == 9


def test_rotation_at_small_segment_size(root: Path) -> None:
    with chitta.open(root, segment_bytes=2048) as f:
        ids = [f.remember(f"memory number {i} " + "x" * 40) for i in range(200)]
    files = segment_files(root)
    assert len(files) > 5
    assert all(p.stat().st_size <= 2048 for p in files)
    with chitta.open(root, read_only=True) as f:
        assert sorted(f.ids()) == sorted(ids)


@pytest.mark.parametrize("durability", ["flush", "fsync", "buffered"])
def test_durability_modes_round_trip(root: Path, durability: str) -> None:
    with chitta.open(root, durability=durability) as f:
        ids = [f.remember(f"m{i}") for i in range(20)]
        assert f.durability == durability
    with chitta.open(root, read_only=True) as f:
        assert sorted(f.ids()) == sorted(ids)


def test_buffered_records_reach_other_readers_after_flush(root: Path) -> None:
    with chitta.open(root, durability="buffered") as w, chitta.open(root, read_only=True) as r:
        mid = w.remember("bulk")
        assert r.refresh() == 0  # still in the writer's buffer
        w.flush()
        assert r.refresh() == 1 and mid in r


def test_default_path_from_chitta_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHITTA_HOME", str(tmp_path / "home-field"))
    assert chitta.default_path() == tmp_path / "home-field"
    with chitta.open() as f:
        f.remember("at home")
    assert (tmp_path / "home-field" / "segments").is_dir()
    monkeypatch.delenv("CHITTA_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert chitta.default_path() == tmp_path / "xdg" / "chitta" / "default"


def test_stats_counts(root: Path) -> None:
    with chitta.open(root) as a:
        a.remember("x", embedding=[1.0, 0.0])
        gone = a.remember("y")
        a.forget(gone)
        with chitta.open(root) as b:
            b.remember("z")
        s = a.stats()
        # x's embedding brings the embedder record, the encoder's creation and x's code: 4 ops.
        assert (s.memories, s.forgotten, s.records_applied) == (1, 1, 6)
        a.refresh()
        s = a.stats()
    assert s.memories == 2 and s.instances == 2 and s.segments == 2
    assert s.embedding_dim == 2 and s.bytes == sum(p.stat().st_size for p in segment_files(root))
    assert s.max_seqno >= 4


def test_concurrent_threads_share_one_field(root: Path) -> None:
    import threading

    with chitta.open(root, durability="fsync") as f:
        out: list[int] = []
        lock = threading.Lock()

        def work(t: int) -> None:
            mine = [f.remember(f"t{t}-{i}") for i in range(40)]
            with lock:
                out.extend(mine)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(f) == 240
    with chitta.open(root, read_only=True) as f:
        assert sorted(f.ids()) == sorted(out)
