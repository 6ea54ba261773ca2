"""Field.remember's fast path appends natively and queues the put; the organs
take the queue before any other call of the handle, so every public read and
write sees the handle's own writes, in call order."""

from __future__ import annotations

import threading
from pathlib import Path

import chitta
from chitta.errors import NotFound


def test_every_read_sees_queued_puts(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("the deploy failed on host seven")
        assert len(f) == 1
        b = f.remember("the cache warmed in ten seconds")
        assert b in f
        c = f.remember("alpha")
        assert f.get(c).text == "alpha"
        d = f.remember("the deploy succeeded on host nine")
        assert [h.id for h in f.recall("deploy host", k=5, touch=False)] and d in {
            h.id for h in f.recall("deploy host", k=5, touch=False)
        }
        e = f.remember("beta")
        assert f.stats().memories == 5 and f.stats().records_applied >= 5
        assert f.ids() == [a, b, c, d, e]


def test_writes_after_queued_puts_keep_call_order(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a = f.remember("first")
        f.forget(a)  # names a queued put
        with_tags = f.remember("second", tags=["x"])  # the plain (not queued) path
        b = f.remember("third")
        f.update(b, text="third, edited")
        c = f.remember("fourth")
        assert f.ids() == [with_tags, b, c]
        assert f.get(b).text == "third, edited"
        try:
            f.get(a)
        except NotFound:
            pass
        else:
            raise AssertionError("a forgotten memory was returned")
    with chitta.open(tmp_path / "f", embedder=None, read_only=True) as g:  # the log agrees
        assert g.ids() == [with_tags, b, c] and g.get(b).text == "third, edited"


def test_a_long_write_only_run_applies_in_batches(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        ids = [f.remember(f"note {i}") for i in range(10_000)]
        assert len(f.core.pending_puts) < 4096  # bounded: the fast path applies every 4096
        assert f.ids() == ids and not f.core.pending_puts


def test_concurrent_fast_puts_are_all_applied(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        got: list[list[int]] = [[] for _ in range(4)]

        def work(slot: int) -> None:
            for i in range(2_000):
                got[slot].append(f.remember(f"thread {slot} note {i}"))
                if i % 500 == 0:
                    assert got[slot][-1] in f

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(f.ids()) == sorted(mid for ids in got for mid in ids)
        assert len(f) == 8_000


def test_repr_counts_queued_puts(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.remember("one")
        f.remember("two")
        assert "2 memories" in repr(f)
