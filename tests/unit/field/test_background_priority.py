"""Background threads (the process's embedder, the sparse coder, learning steps, the
daemon's maintenance) lower their own scheduling priority, callers' threads keep theirs;
the daemon's writer (woken by the I/O loop's hand-offs) runs SCHED_BATCH. Oracles: the
kernel's per-thread nice value and policy (os.getpriority, os.sched_getscheduler)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from _deferred_embedders import Gated

import chitta
from chitta.field import background_priority, deferred_codes, embed_worker

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread nice: Linux"
)


def _nice(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


def test_a_thread_lowers_only_itself() -> None:
    main = _nice(threading.get_native_id())
    seen: dict[str, int] = {}

    def body() -> None:
        seen["ok"] = int(background_priority.lower_this_thread())
        seen["nice"] = _nice(threading.get_native_id())

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == {"ok": 1, "nice": min(19, main + background_priority.NICE)}
    assert _nice(threading.get_native_id()) == main  # the caller's thread is untouched


def test_the_background_embedder_runs_lowered(tmp_path: Path) -> None:
    main = _nice(threading.get_native_id())
    with chitta.open(tmp_path / "f", embedder=Gated(16)) as f:  # type: ignore[arg-type]
        f.remember("embedded off the caller's thread")
        assert f.wait_embedded(timeout=30)
        thread = embed_worker._thread  # one per process, long-lived
        assert thread is not None and thread.native_id is not None and thread.is_alive()
        assert _nice(thread.native_id) == min(19, main + background_priority.NICE)
    assert _nice(threading.get_native_id()) == main


def test_the_sparse_coder_lowers_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = _nice(threading.get_native_id())
    seen: list[tuple[str, int]] = []
    lower = background_priority.lower_this_thread

    def recorded() -> bool:
        ok = lower()
        seen.append((threading.current_thread().name, _nice(threading.get_native_id())))
        return ok

    monkeypatch.setattr(deferred_codes, "lower_this_thread", recorded)
    rng = np.random.default_rng(0)
    n = deferred_codes.CODE_INLINE_MAX  # a group this large of caller vectors: codes deferred
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.remember_many(
            [{"text": f"m {i}", "embedding": v} for i, v in enumerate(rng.standard_normal((n, 16)))]
        )
        assert f.wait_embedded(timeout=60)
    assert seen == [("chitta-coder", min(19, main + background_priority.NICE))]
    assert _nice(threading.get_native_id()) == main


def _policy(tid: int) -> int:
    return os.sched_getscheduler(tid)


def test_yield_on_wakeup_sets_only_the_calling_thread_to_batch() -> None:
    main = _policy(threading.get_native_id())
    seen: dict[str, int] = {}

    def body() -> None:
        seen["ok"] = int(background_priority.yield_on_wakeup())
        seen["policy"] = _policy(threading.get_native_id())
        seen["nice"] = _nice(threading.get_native_id())

    t = threading.Thread(target=body)
    t.start()
    t.join()
    # the same priority (nice) as before, only the policy changes
    assert seen == {"ok": 1, "policy": os.SCHED_BATCH, "nice": _nice(threading.get_native_id())}
    assert _policy(threading.get_native_id()) == main == os.SCHED_OTHER


@pytest.mark.parametrize(
    ("embedder", "inline", "want"),
    [
        ("hashing", True, "batch"),  # the loop serves reads: the writer waits for its slice
        ("hashing", False, "other"),  # reads on reader threads
        ("gated", True, "other"),  # a model: the writer must preempt the background embedder
    ],
)
def test_the_daemons_writer_yields_on_wakeup_only_beside_a_loop_serving_reads(
    tmp_path: Path, embedder: str, inline: bool, want: str
) -> None:
    from chitta.server.daemon import Daemon

    chosen: object = Gated(16) if embedder == "gated" else embedder
    field = chitta.open(tmp_path / "f", embedder=chosen)  # type: ignore[arg-type]
    daemon = Daemon(field, tmp_path / "s.sock", inline_reads=inline)
    daemon.bind()
    loop = threading.Thread(target=daemon.serve_forever, name="chitta-test-loop")
    loop.start()
    try:
        with chitta.connect(tmp_path / "s.sock") as remote:
            remote.remember("the writer thread commits this")  # the writer has started
            writer = daemon.group._thread
            assert writer is not None and writer.native_id is not None and writer.is_alive()
            policy = os.SCHED_BATCH if want == "batch" else os.SCHED_OTHER
            assert _policy(writer.native_id) == policy
            assert loop.native_id is not None and _policy(loop.native_id) == os.SCHED_OTHER
            for reader in daemon._reader_threads:
                assert reader.native_id is not None
                assert _policy(reader.native_id) == os.SCHED_OTHER
    finally:
        daemon.shutdown()
        loop.join()
