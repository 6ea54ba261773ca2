"""The daemon's maintenance thread writes checkpoints when the policy says so,
and a client can ask for one through the same protocol as every Field method."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.field.checkpoint import CheckpointInfo, CheckpointPolicy, store
from chitta.server.daemon import Daemon


def _serve(root: Path, sock: Path, **kw: object) -> tuple[Daemon, threading.Thread]:
    field = chitta.open(root, embedder="hashing")
    daemon = Daemon(field, sock, **kw)  # type: ignore[arg-type]
    daemon.bind()
    thread = threading.Thread(target=daemon.serve_forever)
    thread.start()
    return daemon, thread


def _wait(cond: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)
    assert cond(), "timed out"  # type: ignore[operator]


def test_maintenance_thread_checkpoints_when_due(tmp_path: Path) -> None:
    root, sock = tmp_path / "f", tmp_path / "s.sock"
    daemon, thread = _serve(
        root, sock, maintain_every=0.2, checkpoint_policy=CheckpointPolicy(records=1000)
    )
    try:
        with chitta.connect(sock) as remote:
            ids = remote.remember_many(
                [f"fact {i}" for i in range(10)]
            )  # ~20 records (+ maintenance's): not due
            assert daemon.maintainer is not None
            _wait(lambda: daemon.maintainer.runs >= 2)  # type: ignore[union-attr]
            assert store.current(root) is None and daemon.maintainer.checkpoints == 0
            ids += remote.remember_many([f"more {i}" for i in range(500)])  # ~1,000 records: due
            _wait(lambda: daemon.maintainer.checkpoints > 0)  # type: ignore[union-attr]
            assert daemon.maintainer.checkpoints == 1
            assert remote.stats().records_since_checkpoint < 1000
    finally:
        daemon.shutdown()
        thread.join()
    with chitta.open(root, read_only=True, embedder="hashing") as f:
        assert f.checkpoint_loaded is not None
        assert set(ids) <= set(f.ids())


def test_a_client_asks_for_a_checkpoint(tmp_path: Path) -> None:
    root, sock = tmp_path / "f", tmp_path / "s.sock"
    daemon, thread = _serve(root, sock)
    try:
        with chitta.connect(sock) as remote:
            remote.remember_many([f"fact {i}" for i in range(5)])
            info = remote.checkpoint()
            assert isinstance(info, CheckpointInfo) and info.memories == 5
            assert remote.stats().checkpoint == Path(info.path).name
    finally:
        daemon.shutdown()
        thread.join()


def test_maintain_every_must_be_positive(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field, pytest.raises(InvalidArgument):
        Daemon(field, tmp_path / "s.sock", maintain_every=0)


def test_maintenance_says_what_the_write_gate_pruned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import contextlib

    from chitta.server.maintenance import Maintainer

    with chitta.open(tmp_path / "f", embedder=None, clock=lambda: 1_600_000_000.0) as old:
        gone = old.remember("an aside nobody recalled")
        kept = old.remember("we deploy on fridays", kind="decision")
    with chitta.open(tmp_path / "f", embedder=None) as field:
        out = Maintainer(field, contextlib.nullcontext(), 60.0, CheckpointPolicy()).run_once()
        assert out["passes"]["pruned_staged"] == 1
        assert [r["id"] for r in field.pruned()] == [str(gone)] and kept in field
    assert "pruned 1 never-recalled memories" in capsys.readouterr().err
