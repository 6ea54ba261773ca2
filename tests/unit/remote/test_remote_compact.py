"""Compaction of sealed segments' small chunks, on a real SeaweedFS: the bytes
never change (oracle: the writer's files), new and half-caught-up readers both
end byte-identical, the open segment is left alone."""

from __future__ import annotations

from pathlib import Path

from test_remote_field import open_, replay, wait_for

from chitta.remote import cover, layout
from chitta.remote.local import local_segments, read_range, segment_name
from chitta.remote.store import ObjectStore
from chitta.remote.url import parse_url


def _same_segments(x: Path, y: Path) -> None:
    segs = local_segments(x)
    assert segs == local_segments(y)
    for inst, items in segs.items():
        for first, _size in items:
            name = segment_name(inst, first)
            assert (x / "segments" / name).read_bytes() == (y / "segments" / name).read_bytes()


def test_compaction_merges_sealed_chunks_and_readers_take_either_form(
    tmp_path: Path, remote_url: str
) -> None:
    a = open_(tmp_path / "a", remote_url, remote_durability="sync", segment_bytes=4096)
    for i in range(24):  # sync, one writer: one chunk per record
        a.remember(f"compaction record {i} " + "w" * 150)
    with open_(tmp_path / "c", remote_url) as c:  # c stops in the middle of a segment
        assert len(c) == 24
    for i in range(24, 60):
        a.remember(f"compaction record {i} " + "w" * 150)
    inst = a.instance_id
    assert inst is not None
    store = ObjectStore(parse_url(remote_url))
    before = cover.by_segment(cover.pieces(store.list(layout.instance_prefix(inst)).keys))
    assert len(before) >= 3 and all(len(ps) > 3 for ps in before.values())
    done = a.remote.compact()
    after = cover.by_segment(cover.pieces(store.list(layout.instance_prefix(inst)).keys))
    last = max(after)
    assert after[last] == before[last]  # the open segment is untouched
    for seg, ps in after.items():
        if seg != last:  # every sealed segment is one compacted chunk now
            assert len(ps) == 1 and ps[0].ck.compacted and ps[0].ck.offset == 0
            blob = store.get(ps[0].key)
            assert blob is not None
            payload = layout.decode_chunk(bytes.fromhex(a.remote.field_id), ps[0].ck, blob[0])
            path = tmp_path / "a/segments" / segment_name(*seg)
            assert payload == path.read_bytes() == read_range(path, 0, ps[0].end)  # bytes unchanged
    assert done["objects_written"] == len(after) - 1
    assert done["chunks_deleted"] == sum(len(before[s]) for s in before if s != last)
    assert a.remote.compact()["objects_written"] == 0  # nothing left to merge
    a.remember("after compaction")
    wait_for(lambda: a.remote_status()["lag_bytes"] == 0)
    a.close()
    with open_(tmp_path / "b", remote_url) as b:  # a new machine: compacted objects only
        assert len(b) == 61
    with open_(
        tmp_path / "c", remote_url
    ) as c:  # half caught up: the rest out of compacted objects
        assert len(c) == 61 and not c.remote_status()["rejected"]
    _same_segments(tmp_path / "a", tmp_path / "b")
    _same_segments(tmp_path / "a", tmp_path / "c")
    assert replay(tmp_path / "a") == replay(tmp_path / "b") == replay(tmp_path / "c")
