"""Freed memory goes back to the system after bulk passes (D-089). Oracle: the process's
resident set as the kernel reports it (/proc/self/statm), around blocks freed in the
middle of the heap, which glibc keeps until ``malloc_trim``."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta import free_memory

glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@glibc
def test_give_back_returns_blocks_freed_in_the_middle_of_the_heap() -> None:
    free_memory.give_back()
    blocks = [b"x" * 65_536 for _ in range(2_000)]  # 125 MiB, below the mmap threshold: heap
    del blocks[::2]  # holes between live blocks: never trimmed from the heap's top
    held = _rss_mb()
    assert free_memory.give_back()
    assert held - _rss_mb() >= 30  # ~62 MiB of holes; the kernel's count, not ours
    del blocks


def test_bulk_passes_give_memory_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = free_memory.give_back
    monkeypatch.setattr(free_memory, "give_back", lambda: calls.append(1) or real())
    vecs = np.random.default_rng(0).standard_normal((5_000, 8)).astype(np.float32)
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        f.remember_many([{"text": f"memory {i}", "embedding": v} for i, v in enumerate(vecs)])
        f.core.index.keyword_flush()  # 5,000 documents into the keyword index
        assert len(calls) == 1
        f.wait_embedded()  # the background coder gives back after each step
        coder = f.core.code_backlog.thread
        if coder is not None:
            coder.join(timeout=60)  # its last step's give-back may follow the wait
        assert len(calls) >= 2
        before = len(calls)
        f.core.index._flush_codes()  # 5,000 codes into the posting index
        assert len(calls) == before + 1
        f.checkpoint()
        assert len(calls) >= before + 2  # the view's replay (and flushes), then the view closed
    calls.clear()
    with chitta.open(root, embedder=None, load_checkpoint=False):  # a replay of 5,000 puts
        assert calls
    calls.clear()
    with chitta.open(tmp_path / "small", embedder=None) as f:  # small passes do not
        f.remember_many([{"text": "one", "embedding": vecs[0]}])
        f.core.index.keyword_flush()
        assert not calls
