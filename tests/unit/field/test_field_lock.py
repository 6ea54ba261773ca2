"""The field's lock (chitta/field/field_lock.py): shared reads run together, a writer waits
for them and holds off new ones, lazy work happens only while no read runs, and a read that
meets lazy work inside a shared hold is run again exclusively with the same answer."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import chitta
from chitta.field.field_lock import EXCLUSIVE, READY, WORK, FieldLock
from chitta.organs import shared_reads
from chitta.organs.recall_index import RecallIndexOrgan


def _ready(may_work: bool) -> str:
    return READY


def test_two_reads_are_inside_at_once() -> None:
    lock = FieldLock()
    both = threading.Barrier(2, timeout=10)
    seen: list[bool] = []

    def read() -> None:
        with lock.reading(_ready) as shared:
            seen.append(shared)
            both.wait()  # only passes if the other read is inside too

    threads = [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [True, True]


def test_a_writer_waits_for_reads_and_holds_off_new_ones() -> None:
    lock = FieldLock()
    order: list[str] = []
    inside, writer_waiting = threading.Event(), threading.Event()
    release = threading.Event()

    def first_read() -> None:
        with lock.reading(_ready):
            inside.set()
            assert release.wait(10)
            order.append("read 1 ends")

    def writer() -> None:
        writer_waiting.set()
        with lock:
            order.append("write")

    def second_read() -> None:
        with lock.reading(_ready):
            order.append("read 2")

    r1 = threading.Thread(target=first_read)
    r1.start()
    assert inside.wait(10)
    w = threading.Thread(target=writer)
    w.start()
    assert writer_waiting.wait(10)
    time.sleep(0.05)  # the writer now holds the writer's lock, waiting for read 1
    r2 = threading.Thread(target=second_read)
    r2.start()
    time.sleep(0.05)
    assert order == []  # neither the writer nor the second read got in
    release.set()
    for t in (r1, w, r2):
        t.join(10)
    assert order == ["read 1 ends", "write", "read 2"]


def test_lazy_work_runs_only_while_no_read_runs() -> None:
    lock = FieldLock()
    inside, release = threading.Event(), threading.Event()
    calls: list[tuple[bool, bool]] = []  # (may_work, another read inside)
    other = [False]

    def long_read() -> None:
        with lock.reading(_ready):
            other[0] = True
            inside.set()
            assert release.wait(10)
            time.sleep(0.05)
            other[0] = False

    def prepare(may_work: bool) -> str:
        calls.append((may_work, other[0]))
        return READY if may_work else WORK

    t = threading.Thread(target=long_read)
    t.start()
    assert inside.wait(10)
    threading.Timer(0.05, release.set).start()
    with lock.reading(prepare) as shared:
        assert shared  # the work done, then a shared read
    t.join(10)
    assert calls[0] == (False, True)  # looked while the other read ran
    assert calls[1] == (True, False)  # worked once it had left


def test_reentry_and_misuse() -> None:
    lock = FieldLock()
    with lock, lock, lock.reading(_ready) as shared:  # reentrant, as the RLock it replaced
        assert not shared  # inside an exclusive hold: stays exclusive
    with lock.reading(lambda may_work: EXCLUSIVE) as shared:
        assert not shared
        assert not shared_reads.active()
    with lock.reading(_ready) as shared:
        assert shared and shared_reads.active() and lock.held_shared()
        with pytest.raises(RuntimeError):
            lock.__enter__()  # exclusive inside a shared read would wait for itself
        with pytest.raises(shared_reads.SharedReadNeedsWrite):
            shared_reads.refuse_work("anything")
    assert not shared_reads.active()
    shared_reads.refuse_work("outside a read: allowed")


def test_a_read_that_meets_lazy_work_reruns_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The organ says ready although texts wait to be indexed (a verdict that is wrong on
    purpose): the keyword lane refuses to index them inside the shared read, and the recall
    reruns exclusively, finding the new memory as an exclusive recall does."""
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        f.remember_many([f"note {i} about the build cache" for i in range(50)])
        f.recall("warm", k=3, touch=False)  # everything indexed
        mid = f.remember("the flaky linker test fails on tuesdays")
        assert f.core.index._text_pending  # not indexed yet
        monkeypatch.setattr(RecallIndexOrgan, "shared_read_verdict", lambda *a: READY)
        flushes: list[tuple[bool, bool]] = []  # (texts were pending, inside a shared read)
        real = RecallIndexOrgan._flush_text

        def flush(self: RecallIndexOrgan) -> None:
            flushes.append((bool(self._text_pending), shared_reads.active()))
            real(self)

        monkeypatch.setattr(RecallIndexOrgan, "_flush_text", flush)
        hits = f.recall("flaky linker", k=3, touch=False)
        assert hits and hits[0].id == mid
        assert not f.core.index._text_pending  # indexed, by the exclusive rerun
        assert flushes[0] == (True, True)  # refused inside the shared read ...
        assert (True, False) in flushes[1:]  # ... and done by the rerun


def test_recalls_from_threads_beside_a_writer(tmp_path: Path) -> None:
    """Four threads recall while a fifth remembers: every recall answers, and once the writer
    is done a recall from each thread equals one made alone."""
    errors: list[BaseException] = []
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        f.remember_many([f"service {i % 7} deploy {i % 5} owner {i % 3}" for i in range(600)])
        stop = threading.Event()

        def write() -> None:
            try:
                for i in range(300):
                    f.remember(f"incident {i}: service {i % 7} rollback")
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
            finally:
                stop.set()

        def read(seed: int) -> None:
            try:
                n = 0
                while not stop.is_set() or n < 20:
                    assert len(f.recall(f"service {seed} rollback", k=5, touch=False)) == 5
                    n += 1
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=read, args=(s,)) for s in range(4)]
        threads.append(threading.Thread(target=write))
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors
        alone = [
            [h.id for h in f.recall(f"service {s} rollback", k=5, touch=False)] for s in range(4)
        ]
        together: list[list[int]] = [[] for _ in range(4)]

        def again(s: int) -> None:
            together[s] = [h.id for h in f.recall(f"service {s} rollback", k=5, touch=False)]

        threads = [threading.Thread(target=again, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert together == alone
