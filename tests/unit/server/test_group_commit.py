"""The daemon's group commit (chitta/server/group.py): merged writes answer each caller
with its own result, bad input fails only its own call, the log replays to the live
state. In-process groups are built by hand (deterministic); the daemon tests drive a
real ``chitta serve`` from many connections at once."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from daemontools import DaemonProcess, child_env

import chitta
from chitta import ops
from chitta.errors import InvalidArgument
from chitta.server.group import CALL, OPS, REMEMBER, GroupCommit, Job, mergeable


def _field(tmp_path: Path) -> chitta.Field:
    return chitta.open(tmp_path / "f", embedder="hashing")


def _memories(field: Any) -> list[tuple[int, str, int, float, int, int]]:
    return sorted(
        (m.id, m.text, m.tier, m.strength, m.last_access_ms, m.access_count)
        for m in field.memories()
    )


def test_a_group_of_remembers_answers_each_job_with_its_own_record(tmp_path: Path) -> None:
    with _field(tmp_path) as field:
        group = GroupCommit(field, threading.Lock())
        texts = [f"note {i} about the flaky linker" for i in range(10)]
        jobs = [Job(REMEMBER, params={"text": t, "tags": [f"t{i}"]}) for i, t in enumerate(texts)]
        assert all(mergeable(field, j.params or {}) for j in jobs)
        records = field.stats().max_seqno
        group._run(jobs)
        ids = [j.outcome() for j in jobs]
        assert ids == sorted(ids) and len(set(ids)) == 10  # ids in arrival order
        for i, (mid, text) in enumerate(zip(ids, texts)):
            memory = field.get(mid)
            assert memory.text == text and memory.tags == (f"t{i}",)
        assert field.stats().max_seqno == records + 1  # one Batch record for the group


def test_bad_input_in_a_group_fails_only_that_call_and_writes_nothing_of_it(
    tmp_path: Path,
) -> None:
    with _field(tmp_path) as field:
        group = GroupCommit(field, threading.Lock())
        params: list[dict[str, Any]] = [
            {"text": "the deploy needs the VPN"},
            {"text": "   "},  # blank
            {"text": "rollback takes ten minutes", "confidence": 2.0},  # out of range
            {"text": "schema changes go through review", "kind": "decision"},
            {"text": "tagged wrongly", "tags": {"a": 1}},
        ]
        jobs = [Job(REMEMBER, params=p) for p in params]
        group._run(jobs)
        ok = [jobs[0].outcome(), jobs[3].outcome()]
        for bad in (jobs[1], jobs[2], jobs[4]):
            with pytest.raises(InvalidArgument):
                bad.outcome()
            # the same error as the call alone gives (the oracle: remember itself)
            with pytest.raises(type(bad.error)) as alone:
                field.remember(**(bad.params or {}))
            assert str(alone.value) == str(bad.error)
        assert sorted(m.text for m in field.memories()) == sorted(
            [params[0]["text"], params[3]["text"]]
        )
        assert field.get(ok[1]).kind == "decision"


def test_touch_groups_and_calls_in_one_group(tmp_path: Path) -> None:
    with _field(tmp_path) as field:
        a = field.remember("alpha linker cache")
        b = field.remember("beta deploy rollback")
        group = GroupCommit(field, threading.Lock())
        touches = [
            [ops.UpdateState(id=a, at_ms=1_000_000, touch=True)],
            [ops.Batch.of(ops.UpdateState(id=b, at_ms=2_000_000, touch=True))],
        ]
        forgotten: list[Any] = []
        jobs = [
            Job(OPS, ops=touches[0]),
            Job(CALL, run=lambda: forgotten.append(field.forget(a))),
            Job(OPS, ops=touches[1]),
        ]
        group._run(jobs)
        assert [j.outcome() for j in jobs] == [None, None, None] and forgotten == [None]
        assert field.get(b).last_access_ms == 2_000_000 and a not in field
        with chitta.open(tmp_path / "f", read_only=True, embedder="hashing") as replayed:
            assert _memories(replayed) == _memories(field)


def _load(sock: Path, n: int, seed: int, out: dict[int, list[tuple[int, str]]]) -> None:
    mine: list[tuple[int, str]] = []
    with chitta.connect(sock, timeout=60) as remote:
        for i in range(n):
            text = f"client {seed} note {i} on the ninja cache"
            mine.append((remote.remember(text), text))
            remote.recall(f"ninja cache {i % 3}", k=3)  # touches: a write, grouped
    out[seed] = mine


def test_many_connections_get_their_own_records_in_their_order(tmp_path: Path) -> None:
    daemon = DaemonProcess(
        tmp_path / "field", tmp_path / "run" / "d.sock", env=child_env(CHITTA_EMBEDDER="hashing")
    )
    try:
        out: dict[int, list[tuple[int, str]]] = {}
        threads = [
            threading.Thread(target=_load, args=(daemon.sock, 15, s, out)) for s in range(12)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with chitta.connect(daemon.sock) as remote:
            info = remote._call("_info", {})
            live = _memories(remote)
            for mine in out.values():
                ids = [mid for mid, _ in mine]
                assert ids == sorted(ids)  # each connection's calls applied in its order
                for mid, text in mine:
                    assert remote.get(mid).text == text
        assert len(out) == 12 and len(live) == 12 * 15
        assert info["groups"]["jobs"] > info["groups"]["groups"]  # some groups held several
    finally:
        daemon.close()
    # the daemon's log replays to the state it served (touches included), twice alike
    with chitta.open(tmp_path / "field", read_only=True, embedder="hashing") as first:
        assert _memories(first) == live
    with chitta.open(tmp_path / "field", read_only=True, embedder="hashing") as second:
        assert _memories(second) == live
