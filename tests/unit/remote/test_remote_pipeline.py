"""Several uploads in flight: acknowledged in order, readers stop at gaps and
accept overlapping objects (real SeaweedFS; the first upload held back by a
wrapper around the real store, so the second lands first)."""

from __future__ import annotations

import threading
from pathlib import Path

from test_remote_field import open_, replay, wait_for

import chitta
from chitta.remote import cover, layout
from chitta.remote.fetch import Fetcher
from chitta.remote.local import local_segments, segment_name
from chitta.remote.ship import Progress, Shipper
from chitta.remote.store import ObjectStore
from chitta.remote.url import parse_url


class HeldFirst(ObjectStore):
    """The real store, but the put of the chunk at offset 0 waits for ``release``."""

    def __init__(self, url: str) -> None:
        super().__init__(parse_url(url))
        self.release = threading.Event()

    def put_new(self, key: str, data: bytes) -> bool:
        ck = layout.parse_chunk_key(key)
        if ck is not None and ck.offset == 0:
            assert self.release.wait(20)
        return super().put_new(key, data)


def _field_id(path: Path) -> bytes:
    return bytes.fromhex((path / "remote/FIELD_ID").read_text().strip())


def test_a_later_chunk_landing_first_is_not_acknowledged_nor_applied(
    tmp_path: Path, remote_url: str
) -> None:
    with open_(tmp_path / "a", remote_url):
        pass  # the prefix's field id
    fid = _field_id(tmp_path / "a")
    with chitta.open(tmp_path / "w", embedder=None) as w:
        w.remember("first record " + "x" * 300)
        inst = w.instance_id
        assert inst is not None
        store = HeldFirst(remote_url)
        progress = Progress()
        shipper = Shipper(tmp_path / "w", store, fid, inst, progress, inflight=4)
        assert shipper.ship_once() == 1  # the chunk at 0 goes out (and is held)
        ((first, size1),) = local_segments(tmp_path / "w")[inst]
        for i in range(3):
            w.remember(f"later record {i} " + "y" * 300)
        ((_, size2),) = local_segments(tmp_path / "w")[inst]
        assert shipper.ship_once() >= 1  # the later records: a second upload while the first waits
        listed = lambda: {k for k, _ in store.list(layout.instance_prefix(inst)).keys}
        wait_for(lambda: layout.chunk_key(inst, first, size1) in listed())
        assert layout.chunk_key(inst, first, 0) not in listed()
        with progress.lock:
            assert (
                progress.remote_end.get((inst, first), 0) == 0
            )  # nothing acknowledged past the gap
        reader = Fetcher(tmp_path / "b", store, fid, 0, Progress())
        (tmp_path / "b/segments").mkdir(parents=True)
        assert reader.pull_once() == 0  # the gap stops the reader too
        store.release.set()
        wait_for(
            lambda: (shipper.ship_once(), progress.remote_end.get((inst, first), 0))[1] == size2
        )
        assert reader.pull_once() == 2
        shipper.close()
    name = segment_name(inst, first)
    assert (tmp_path / "b/segments" / name).read_bytes() == (
        tmp_path / "w/segments" / name
    ).read_bytes()


def test_overlapping_objects_give_the_same_bytes(tmp_path: Path, remote_url: str) -> None:
    """A chunk cut again after a crash overlaps the ones that landed: readers take the
    cover and append only what they lack (oracle: the writer's file)."""
    with open_(tmp_path / "a", remote_url):
        pass
    fid = _field_id(tmp_path / "a")
    with chitta.open(tmp_path / "w", embedder=None) as w:
        for i in range(40):
            w.remember(f"record {i} " + "z" * (i * 5))
        inst = w.instance_id
        assert inst is not None
    log = chitta._core.SegmentLog(str(tmp_path / "w"), read_only=True)
    offsets = [int(o) for o in log.read_new().offsets]
    log.close()
    ((first, size),) = local_segments(tmp_path / "w")[inst]
    data = (tmp_path / "w/segments" / segment_name(inst, first)).read_bytes()
    store = ObjectStore(parse_url(remote_url))
    a, b, c = offsets[10], offsets[20], offsets[30]
    for off, end in ((0, b), (a, c), (c, size)):  # [0,b) [a,c) [c,size): [a,b) held twice
        at = layout.ChunkKey(inst, first, off)
        assert store.put_new(at.key(), layout.encode_chunk(fid, at, data[off:end]))
    found = cover.pieces(store.list(layout.instance_prefix(inst)).keys)
    assert cover.contiguous_ends(found) == {(inst, first): size}
    with open_(tmp_path / "r", remote_url) as r:
        assert len(r) == 40
    assert (tmp_path / "r/segments" / segment_name(inst, first)).read_bytes() == data
    assert replay(tmp_path / "r") == replay(tmp_path / "w")
