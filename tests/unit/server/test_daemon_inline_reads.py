"""Cheap reads on the daemon's I/O loop (D-085): with the hashing embedder a plain recall
runs on the loop's own thread; other reads go to a reader thread; while maintenance holds
the daemon's lock a recall waits on a reader, and the loop meanwhile answers other calls.
With inline reads off every read goes to a reader, with the same answers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import chitta
from chitta.server.daemon import Daemon

LOOP = "chitta-test-loop"


def _serve(root: Path, sock: Path, **kw: object) -> tuple[Daemon, threading.Thread, list[str]]:
    field = chitta.open(root, embedder="hashing")
    daemon = Daemon(field, sock, **kw)  # type: ignore[arg-type]
    ran_on: list[str] = []
    real = daemon._read_call

    def recorded(call: object, held: bool = False) -> None:
        ran_on.append(f"{call.method.name}@{threading.current_thread().name}")  # type: ignore[attr-defined]
        real(call, held)  # type: ignore[arg-type]

    daemon._read_call = recorded  # type: ignore[method-assign]
    daemon.bind()
    thread = threading.Thread(target=daemon.serve_forever, name=LOOP)
    thread.start()
    return daemon, thread, ran_on


def test_plain_recalls_run_on_the_loop_and_other_reads_on_readers(tmp_path: Path) -> None:
    daemon, thread, ran_on = _serve(tmp_path / "f", tmp_path / "s.sock")
    try:
        with chitta.connect(tmp_path / "s.sock") as remote:
            mid = remote.remember("the build cache lives on the ninja host")
            hits = remote.recall("ninja build cache", k=3, touch=False)
            assert [h.id for h in hits] == [mid]
            assert remote.get(mid).text == "the build cache lives on the ninja host"
            assert remote.ids() == [mid]
            remote.recall("ninja", k=3)  # touching: a reader, its touches join a group
    finally:
        daemon.shutdown()
        thread.join()
    assert f"recall@{LOOP}" in ran_on and f"get@{LOOP}" in ran_on
    assert any(r.startswith("ids@chitta-reader-") for r in ran_on)
    assert any(r.startswith("recall@chitta-reader-") for r in ran_on)  # the touching one


def test_during_maintenance_a_recall_waits_on_a_reader_not_on_the_loop(tmp_path: Path) -> None:
    daemon, thread, ran_on = _serve(tmp_path / "f", tmp_path / "s.sock")
    try:
        with chitta.connect(tmp_path / "s.sock") as remote:
            mid = remote.remember("rollback the schema migration")
            got: list[object] = []
            with daemon._lock.exclusive:  # what maintenance holds
                waiting = threading.Thread(
                    target=lambda: got.append(remote.recall("schema", k=2, touch=False))
                )
                waiting.start()
                time.sleep(0.2)
                assert not got  # waiting for the lock ...
                with chitta.connect(tmp_path / "s.sock") as other:
                    assert other.call("_info")["pid"] > 0  # ... while the loop still answers
            waiting.join(30)
            assert [h.id for h in got[0]] == [mid]  # type: ignore[attr-defined]
    finally:
        daemon.shutdown()
        thread.join()
    assert any(r.startswith("recall@chitta-reader-") for r in ran_on)


def test_with_inline_reads_off_every_read_goes_to_a_reader(tmp_path: Path) -> None:
    daemon, thread, ran_on = _serve(tmp_path / "f", tmp_path / "s.sock", inline_reads=False)
    try:
        with chitta.connect(tmp_path / "s.sock") as remote:
            mid = remote.remember("flaky deploy on friday")
            assert [h.id for h in remote.recall("flaky deploy", k=2, touch=False)] == [mid]
    finally:
        daemon.shutdown()
        thread.join()
    assert ran_on and all("@chitta-reader-" in r for r in ran_on)
