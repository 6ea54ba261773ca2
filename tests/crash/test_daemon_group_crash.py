"""kill -9 of a grouping daemon mid-load (chitta/server/group.py): every remember it
acknowledged is in the log with its text, whatever group it was in; what it did not
acknowledge may or may not be there, but nothing else is."""

from __future__ import annotations

import random
import signal
import threading
import time
from pathlib import Path

import pytest
from daemontools import DaemonProcess, child_env

import chitta
from chitta.errors import ChittaError


def _writer(sock: Path, seed: int, acked: list[tuple[int, str]], sent: set[str]) -> None:
    rng = random.Random(seed)
    try:
        with chitta.connect(sock, timeout=30) as remote:
            for i in range(10_000):
                text = f"writer {seed} note {i}: {rng.choice(['cache', 'linker', 'deploy'])}"
                sent.add(text)
                acked.append((remote.remember(text), text))  # only once the daemon answered
                if i % 2:
                    remote.recall("cache linker", k=3)  # touches, grouped too
    except (ChittaError, OSError):
        return  # the daemon was killed


@pytest.mark.parametrize("durability", ["flush", "fsync"])
def test_sigkill_mid_load_loses_no_acknowledged_grouped_remember(
    tmp_path: Path, durability: str
) -> None:
    daemon = DaemonProcess(
        tmp_path / "field",
        tmp_path / "run" / "d.sock",
        durability=durability,
        env=child_env(CHITTA_EMBEDDER="hashing"),
    )
    acked: list[list[tuple[int, str]]] = [[] for _ in range(10)]
    sent: set[str] = set()
    threads = [
        threading.Thread(target=_writer, args=(daemon.sock, s, acked[s], sent)) for s in range(10)
    ]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while sum(map(len, acked)) < 150 and time.monotonic() < deadline:
            time.sleep(0.02)
        daemon.proc.send_signal(signal.SIGKILL)  # mid-load: groups in flight
        daemon.proc.wait(timeout=60)
    finally:
        for t in threads:
            t.join(timeout=60)
        daemon.close()
    total = sum(map(len, acked))
    assert total >= 150
    with chitta.open(tmp_path / "field", embedder="hashing") as field:
        texts = {m.id: m.text for m in field.memories()}
        for mine in acked:
            for mid, text in mine:
                assert texts.get(mid) == text
        assert set(texts.values()) <= sent  # nothing but what was sent
        assert len(texts) >= total
