"""The store going away and coming back (a SeaweedFS of this test's own), sync
mode's typed error, and a new machine bootstrapping from a published checkpoint."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from seaweed import Seaweed
from test_remote_field import replay, wait_for

import chitta
from chitta.errors import RemoteUnavailable


def test_outage_async_goes_on_sync_raises_then_everything_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Seaweed(tmp_path / "weed")
    server.start()
    try:
        server.make_bucket("outage")
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        url = "s3://outage/f"
        a = chitta.open(tmp_path / "a", remote=url, embedder=None)
        s = chitta.open(
            tmp_path / "s", remote=url, embedder=None, remote_durability="sync", remote_timeout=2
        )
        acked = [s.remember(f"sync ok {i}") for i in range(20)]
        server.stop()
        before = [a.remember(f"offline {i}") for i in range(100)]  # local writes go on
        wait_for(
            lambda: (
                a.remote_status()["lag_bytes"] > 0 and a.remote_status()["last_error"] is not None
            )
        )
        t0 = time.monotonic()
        with pytest.raises(RemoteUnavailable, match="not acknowledged"):
            s.remember("never acknowledged")
        assert 1.5 < time.monotonic() - t0 < 10
        assert a.stats().remote["lag_seconds"] > 0  # type: ignore[index]
        server.start()
        server.make_bucket("outage")  # waits until the volume servers take writes again
        acked.append(s.remember("sync after the outage"))
        wait_for(lambda: a.remote_status()["lag_bytes"] == 0, timeout=30)
        b = chitta.open(tmp_path / "b", remote=url, embedder=None)
        wait_for(
            lambda: (b.refresh(), len(b))[1] == 122, timeout=30
        )  # the unacknowledged one arrives too
        assert all(i in b for i in acked + before)
        for f in (a, s, b):
            f.refresh()
        wait_for(lambda: all((f.refresh(), len(f))[1] == 122 for f in (a, s, b)), timeout=30)
        for f in (a, s, b):
            f.close()
        assert replay(tmp_path / "a") == replay(tmp_path / "b") == replay(tmp_path / "s")
    finally:
        server.stop()


def test_a_new_machine_bootstraps_from_the_published_checkpoint(
    tmp_path: Path, remote_url: str
) -> None:
    with chitta.open(tmp_path / "a", remote=remote_url, embedder=None) as a:
        a.remember_many([f"before the checkpoint {i}" for i in range(500)])
        name = a.remote.publish_checkpoint()
        assert name.startswith("ckpt-")
        a.remember("after the checkpoint")
        wait_for(lambda: a.remote_status()["lag_bytes"] == 0)
    with chitta.open(tmp_path / "c", remote=remote_url, embedder=None) as c:
        assert c.checkpoint_loaded is not None  # opened from the bucket's checkpoint
        assert c.stats().records_since_checkpoint == 1  # only the tail was replayed
        assert len(c) == 501
    assert replay(tmp_path / "a") == replay(tmp_path / "c")
