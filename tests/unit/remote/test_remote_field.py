"""Fields sharing a bucket prefix on a real SeaweedFS (handles in this process,
each with its own directory: separate machines as far as the log knows)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chitta
from chitta.errors import RemoteError, RemoteUnavailable
from chitta.remote import layout
from chitta.remote.local import local_segments, segment_name
from chitta.remote.store import ObjectStore
from chitta.remote.url import parse_url


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def replay(path: Path) -> list[tuple[int, str]]:
    """The field's memories in replay order, from its log alone (no remote, no checkpoint)."""
    with chitta.open(path, embedder=None, read_only=True, load_checkpoint=False) as f:
        return [(m.id, m.text) for m in f.memories()]


def open_(path: Path, url: str, **kw: Any) -> chitta.Field:
    return chitta.open(path, remote=url, embedder=None, **kw)


def test_two_machines_see_each_other_and_replay_identically(
    tmp_path: Path, remote_url: str
) -> None:
    a = open_(tmp_path / "a", remote_url)
    b = open_(tmp_path / "b", remote_url)
    ids_a = [a.remember(f"from a {i}") for i in range(200)]
    wait_for(lambda: (b.refresh(), len(b))[1] == 200)
    assert [b.get(i).text for i in ids_a] == [f"from a {i}" for i in range(200)]
    ids_b = [b.remember(f"from b {i}") for i in range(50)]
    b.forget(ids_a[0])
    wait_for(lambda: (a.refresh(), len(a))[1] == 249)
    assert ids_a[0] not in a and all(i in a for i in ids_b)
    status = b.stats().remote
    assert status is not None and status["chunks_fetched"] >= 1 and status["field_id"]
    wait_for(lambda: a.remote_status()["lag_bytes"] == 0 and b.remote_status()["lag_bytes"] == 0)
    a.close()
    b.close()
    assert replay(tmp_path / "a") == replay(tmp_path / "b")
    # byte-identical segments on both machines
    for inst, segs in local_segments(tmp_path / "a").items():
        for first, _size in segs:
            name = segment_name(inst, first)
            assert (tmp_path / "a/segments" / name).read_bytes() == (
                tmp_path / "b/segments" / name
            ).read_bytes()


def test_order_follows_the_log_not_wall_clocks(tmp_path: Path, remote_url: str) -> None:
    """b's clock is an hour behind a's; b writes after reading a: it replays after a's."""
    a = open_(tmp_path / "a", remote_url, clock=lambda: time.time() + 3600)
    b = open_(tmp_path / "b", remote_url, clock=lambda: time.time() - 3600)
    first = a.remember("written first, clock ahead")
    wait_for(lambda: (b.refresh(), first in b)[1])
    second = b.remember("written second, clock behind")
    wait_for(lambda: (a.refresh(), second in a)[1])
    a.close()
    b.close()
    from chitta import _core

    for path in (tmp_path / "a", tmp_path / "b"):
        log = _core.SegmentLog(str(path), read_only=True)
        result = log.read_new()
        seqnos, insts = [int(x) for x in result.seqnos], [int(x) for x in result.instances]
        log.close()
        assert len(seqnos) == 2 and seqnos == sorted(seqnos)
        assert insts == [a.instance_id, b.instance_id]  # a's record replays first on both machines
    assert (
        replay(tmp_path / "a")
        == replay(tmp_path / "b")
        == [(first, "written first, clock ahead"), (second, "written second, clock behind")]
    )


def test_a_prefix_holding_another_field_is_refused(tmp_path: Path, remote_url: str) -> None:
    with open_(tmp_path / "a", remote_url) as a:
        a.remember("field one")
    with chitta.open(tmp_path / "other", embedder=None) as o:
        o.remember("a field of its own")
    with pytest.raises(RemoteError, match="another field"):
        open_(tmp_path / "other", remote_url)
    with open_(
        tmp_path / "b", remote_url + "-elsewhere"
    ) as b:  # b is now attached to another prefix
        b.remember("b")
    with pytest.raises(RemoteError, match="holds another field"):
        open_(tmp_path / "b", remote_url)
    assert len(chitta.open(tmp_path / "other", embedder=None)) == 1  # nothing changed locally


def test_missing_bucket_bad_credentials_and_no_server(
    tmp_path: Path, s3env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(RemoteError, match="does not exist"):
        open_(tmp_path / "a", "s3://no-such-bucket-here/p")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
    with pytest.raises(RemoteError, match="credentials"):
        open_(tmp_path / "a", "s3://chitta-tests/p")
    monkeypatch.setenv(
        "AWS_ENDPOINT_URL", "http://127.0.0.1:9"
    )  # nothing listens on the discard port
    with pytest.raises(RemoteUnavailable, match="cannot be reached"):
        chitta.open(tmp_path / "a", remote="s3://chitta-tests/p", embedder=None, remote_timeout=1)
    assert not (tmp_path / "a" / "segments").exists()


def _put_raw(url: str, key: str, data: bytes) -> None:
    ObjectStore(parse_url(url)).put_new(key, data)


def test_corrupt_and_foreign_chunks_are_reported_never_applied(
    tmp_path: Path, remote_url: str
) -> None:
    with open_(tmp_path / "a", remote_url) as a:
        a.remember("good record")
        inst = a.instance_id
        assert inst is not None
        wait_for(lambda: a.remote_status()["lag_bytes"] == 0)
    ((first, size),) = local_segments(tmp_path / "a")[inst]
    fid = bytes.fromhex((tmp_path / "a/remote/FIELD_ID").read_text().strip())
    good = (tmp_path / "a/segments" / segment_name(inst, first)).read_bytes()
    # a chunk with a bad checksum at the next offset, and a chunk of another field after it
    at = layout.ChunkKey(inst, first, size)
    blob = bytearray(layout.encode_chunk(fid, at, good[32:]))
    blob[-3] ^= 0x10
    _put_raw(remote_url, at.key(), bytes(blob))
    with open_(tmp_path / "b", remote_url) as b:
        assert len(b) == 1
        status = b.remote_status()
        assert at.key() in status["rejected"] and "checksum" in status["rejected"][at.key()]
        seg_b = (tmp_path / "b/segments" / segment_name(inst, first)).read_bytes()
        assert seg_b == good  # the damaged chunk was not appended
    other = layout.ChunkKey(0x0BADF00D, 1, 0)
    _put_raw(remote_url, other.key(), layout.encode_chunk(b"\x01" * 16, other, good))
    with open_(tmp_path / "c", remote_url) as c:
        assert len(c) == 1
        assert "another field" in c.remote_status()["rejected"][other.key()]
        assert not (tmp_path / "c/segments" / segment_name(0x0BADF00D, 1)).exists()


def test_a_chunk_shipped_twice_after_a_crash_is_idempotent(tmp_path: Path, remote_url: str) -> None:
    """A new process that does not know what was shipped (fresh progress) ships the
    same bytes again: the create-only put finds them, accepts them, nothing doubles."""
    from chitta.remote.ship import Progress, Shipper

    with open_(tmp_path / "a", remote_url) as a:
        for i in range(30):
            a.remember(f"m {i}")
        inst = a.instance_id
        assert inst is not None
        wait_for(lambda: a.remote_status()["lag_bytes"] == 0)
    store = ObjectStore(parse_url(remote_url))
    before = store.list(layout.LOG).keys
    fid = bytes.fromhex((tmp_path / "a/remote/FIELD_ID").read_text().strip())
    shipper = Shipper(tmp_path / "a", store, fid, inst, Progress())
    shipper.progress.listed.add(inst)  # as if the listing had been lost: it re-sends from 0
    shipper.ship_once()
    assert shipper.chunks == 0 and not shipper.diverged
    assert store.list(layout.LOG).keys == before
    with open_(tmp_path / "b", remote_url) as b:
        assert sorted(m.text for m in b.memories()) == sorted(f"m {i}" for i in range(30))


def test_listing_pages_beyond_a_thousand_chunks(tmp_path: Path, remote_url: str) -> None:
    """1,100 one-record chunks (uploaded in parallel) reach another machine complete."""
    from concurrent.futures import ThreadPoolExecutor

    from chitta.remote.local import RECORD_HEAD, whole_records

    with open_(tmp_path / "a", remote_url):  # makes the prefix's field id
        fid = bytes.fromhex((tmp_path / "a/remote/FIELD_ID").read_text().strip())
    with chitta.open(tmp_path / "w", embedder=None) as w:  # written locally, shipped by hand
        texts = [f"paged {i}" for i in range(1100)]
        for t in texts:
            w.remember(t)
        inst = w.instance_id
        assert inst is not None
    ((first, size),) = local_segments(tmp_path / "w")[inst]
    data = (tmp_path / "w/segments" / segment_name(inst, first)).read_bytes()
    cuts, pos = [], 0
    while pos < size:
        n, _, _ = whole_records(
            data[
                pos : pos
                + (32 if pos == 0 else 0)
                + RECORD_HEAD
                + int.from_bytes(
                    data[pos + (32 if pos == 0 else 0) : pos + (36 if pos == 0 else 4)], "little"
                )
            ],
            pos,
            0,
        )
        cuts.append((pos, n))
        pos += n
    assert len(cuts) == 1100
    store = ObjectStore(parse_url(remote_url))

    def put(cut: tuple[int, int]) -> None:
        at = layout.ChunkKey(inst, first, cut[0])
        assert store.put_new(at.key(), layout.encode_chunk(fid, at, data[cut[0] : cut[0] + cut[1]]))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, cuts))
    with open_(tmp_path / "b", remote_url) as b:
        assert len(b) == 1100
        assert (tmp_path / "b/segments" / segment_name(inst, first)).read_bytes() == data
