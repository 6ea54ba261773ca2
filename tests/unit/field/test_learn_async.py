"""The encoder's learning step off the writer's thread (chitta/field/learn_async.py).

The oracle is the inline path: the same writes on a field that learns inline give the
same encoder (atoms, version) once the background step has committed.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.encode.sparse import SparseEncoder
from chitta.field import learn_async, maintain

TEXTS = [
    f"note {i}: service {i % 17} deploy {i % 5} owner {i % 11}" for i in range(maintain.LEARN_EVERY)
]


def _clock() -> float:
    return 1_780_000_000.0  # one fixed time: both fields stamp the step alike


def _write(field: chitta.Field) -> None:
    field.remember_many(TEXTS[:-1])  # one batch: quick; the last write makes a step due
    field.remember(TEXTS[-1])


def test_background_step_equals_the_inline_step(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "inline", embedder="hashing", clock=_clock) as inline:
        _write(inline)
        want = inline.core.encoder_organ.encoder
        want_atoms, want_version = want.atoms.copy(), want.version
    with chitta.open(tmp_path / "async", embedder="hashing", clock=_clock) as f:
        f.core.learn_async = True
        _write(f)
        learn_async.wait(f.core)
        enc = f.core.encoder_organ.encoder
        assert enc.version == want_version
        np.testing.assert_array_equal(enc.atoms, want_atoms)
    with chitta.open(tmp_path / "async", embedder="hashing", read_only=True) as again:
        np.testing.assert_array_equal(again.core.encoder_organ.encoder.atoms, want_atoms)  # logged


def test_a_step_computed_on_moved_atoms_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    real = SparseEncoder.learn

    def slow_learn(self: SparseEncoder, *args: object, **kwargs: object) -> object:
        if threading.current_thread().name == "chitta-learn":
            entered.set()
            assert release.wait(60)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SparseEncoder, "learn", slow_learn)
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        f.core.learn_async = True
        _write(f)  # the last write starts the background step, which now waits
        assert entered.wait(60)
        before = f.core.encoder_organ.encoder.version
        f.learn_encoder()  # an inline step moves the encoder meanwhile
        assert f.core.encoder_organ.encoder.version == before + 1
        release.set()
        learn_async.wait(f.core)
        assert f.core.encoder_organ.encoder.version == before + 1  # the stale step was dropped


def test_close_waits_for_a_running_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = SparseEncoder.learn

    def slow_learn(self: SparseEncoder, *args: object, **kwargs: object) -> object:
        time.sleep(0.3)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SparseEncoder, "learn", slow_learn)
    f = chitta.open(tmp_path / "f", embedder="hashing")
    f.core.learn_async = True
    _write(f)
    version = f.core.encoder_organ.encoder.version
    f.close()  # joins the step before the log closes
    with chitta.open(tmp_path / "f", embedder="hashing", read_only=True) as again:
        assert again.core.encoder_organ.encoder.version == version + 1


def test_the_daemon_learns_off_its_writer_thread(tmp_path: Path) -> None:
    from chitta.server.daemon import Daemon

    sock_dir = tmp_path / "s"
    sock_dir.mkdir(mode=0o700)
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        assert f.core.learn_async is False  # the library default: inline, the same log every run
        Daemon(f, sock_dir / "d.sock")
        assert f.core.learn_async is True


def test_background_steps_keep_to_their_cpu_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a step of c CPU seconds the next due step waits c * (1 / CPU_SHARE - 1)
    seconds (a fake clock here); the writes that made it due keep counting, so it starts
    with the first write once the pause is over."""
    now = [1000.0]
    monkeypatch.setattr(learn_async, "_clock", lambda: now[0])
    monkeypatch.setattr(learn_async, "CPU_SHARE", 0.25)
    with chitta.open(tmp_path / "f", embedder="hashing") as f:
        core = f.core
        core.learn_async = True
        _write(f)
        learn_async.wait(core)
        first = core.encoder_organ.encoder.version
        pause = core.learn_resume_at - now[0]
        assert pause > 0  # the step's own CPU time, times 3
        f.remember_many([f"more {i}" for i in range(maintain.LEARN_EVERY)])  # due again
        learn_async.wait(core)
        assert core.encoder_organ.encoder.version == first  # waited: within the pause
        assert core.since_learning >= maintain.LEARN_EVERY  # still due
        now[0] += pause * 0.9
        f.remember("one more")
        learn_async.wait(core)
        assert core.encoder_organ.encoder.version == first
        now[0] += pause * 0.2  # past the pause: the next write starts the step
        f.remember("and one more")
        learn_async.wait(core)
        assert core.encoder_organ.encoder.version == first + 1
        assert core.since_learning <= 1
