"""A local power loss after shipping (simulated by cutting the segment back to a
record boundary, as the owner's recovery would): a shorter copy is completed
from the bucket; a copy written on after the loss is reported, never shipped,
and repaired into quarantine/ (real SeaweedFS)."""

from __future__ import annotations

import os
from pathlib import Path

from test_remote_field import open_, replay, wait_for

import chitta
from chitta import _core
from chitta.remote import diverge, layout
from chitta.remote.local import local_segments, segment_name
from chitta.remote.store import ObjectStore
from chitta.remote.url import parse_url

INST = 0x5EED0001


def _cut_to_record(path: Path, k: int) -> bytes:
    """Cut INST's segment back to the start of its k-th record; returns the bytes before."""
    log = _core.SegmentLog(str(path), read_only=True)
    result = log.read_new()
    offsets = [int(o) for o, i in zip(result.offsets, result.instances) if int(i) == INST]
    log.close()
    ((first, _size),) = local_segments(path)[INST]
    seg = path / "segments" / segment_name(INST, first)
    data = seg.read_bytes()
    os.truncate(seg, offsets[k])
    return data


def test_power_loss_shorter_copy_is_completed_rewritten_copy_is_reported_and_repaired(
    tmp_path: Path, remote_url: str
) -> None:
    a = tmp_path / "a"
    with open_(a, remote_url, instance_id=INST) as f:
        for i in range(30):
            f.remember(f"shipped before the power loss {i}")
        wait_for(lambda: f.remote_status()["lag_bytes"] == 0)
    store = ObjectStore(parse_url(remote_url))
    keys_before = store.list(layout.instance_prefix(INST)).keys
    whole = _cut_to_record(a, 20)  # the last 10 records' bytes are gone locally
    with open_(a, remote_url) as f:  # a new instance; the shorter copy of INST is completed
        assert len(f) == 30 and not f.remote_status()["diverged"]
    ((first, _),) = local_segments(a)[INST]
    assert (a / "segments" / segment_name(INST, first)).read_bytes() == whole

    _cut_to_record(a, 20)
    with chitta.open(a, embedder=None, instance_id=INST) as f:  # reopened offline, writes on
        for i in range(5):
            f.remember(f"written after the power loss {i}")
    local = (a / "segments" / segment_name(INST, first)).read_bytes()
    with open_(a, remote_url) as f:
        wait_for(lambda: f"{INST:08x}" in f.remote_status()["diverged"])
        why = f.remote_status()["diverged"][f"{INST:08x}"]
        assert "repair" in why and "quarantine" in why
    assert store.list(layout.instance_prefix(INST)).keys == keys_before  # nothing of it was shipped

    report = diverge.repair(a, remote_url)
    assert list(report) == [f"{INST:08x}"]
    (moved,) = report[f"{INST:08x}"]["quarantined"]
    assert Path(moved).read_bytes() == local  # the local bytes are kept, in quarantine/
    assert (a / "segments" / segment_name(INST, first)).read_bytes() == whole  # the bucket's bytes
    with open_(a, remote_url) as f:
        texts = {m.text for m in f.memories()}
        assert texts >= {f"shipped before the power loss {i}" for i in range(30)}
        assert (
            not any(t.startswith("written after") for t in texts)
            and not f.remote_status()["diverged"]
        )
        f.remember("after the repair")
        wait_for(lambda: f.remote_status()["lag_bytes"] == 0)
    with open_(tmp_path / "b", remote_url) as b:
        assert len(b) == 31
    assert replay(a) == replay(tmp_path / "b")
