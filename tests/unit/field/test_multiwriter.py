"""Several writers on one field: separate processes, each its own instance."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fieldtools import snapshot

import chitta

WRITER = r"""
import sys, chitta
root, w, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with chitta.open(root, segment_bytes=8192) as f:
    print(f.instance_id, flush=True)
    for i in range(n):
        f.remember(f"writer {w} memory {i}", meta={"writer": w, "i": i})
"""


def test_four_processes_append_concurrently_and_a_reader_sees_all(tmp_path: Path) -> None:
    root = tmp_path / "field"
    n = 300
    with chitta.open(root, read_only=False) as reader:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(root), str(w), str(n)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=tmp_path,
            )  # not the repo root: `python -c` would import the source tree
            for w in range(4)
        ]
        seen_while_running = 0
        while any(p.poll() is None for p in procs):
            seen_while_running += reader.refresh()
        outs = [p.communicate(timeout=60) for p in procs]
        assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
        reader.refresh()
        assert len(reader) == 4 * n
        instances = {int(o[0].split()[0]) for o in outs}
        assert len(instances) == 4
        by_writer: dict[int, list[int]] = {}
        for m in reader.memories():
            assert m.instance_id in instances
            by_writer.setdefault(m.meta["writer"], []).append(m.meta["i"])  # type: ignore[index]
        assert {w: sorted(v) for w, v in by_writer.items()} == {w: list(range(n)) for w in range(4)}
    # Two independent replays of the same segments give identical state.
    assert snapshot(root) == snapshot(root)
    with chitta.open(root, read_only=True) as a, chitta.open(root, read_only=True) as b:
        assert a.ids() == b.ids()  # same application order, not just the same set


def test_delete_written_after_reading_the_put_replays_after_it(tmp_path: Path) -> None:
    root = tmp_path / "field"
    with chitta.open(root) as busy, chitta.open(root) as quiet:
        for i in range(500):  # busy's Lamport clock races far ahead of quiet's
            busy.remember(f"noise {i}")
        x = busy.remember("the fact")
        quiet.refresh()
        quiet.forget(x)  # quiet saw x, so its delete gets a later seqno than x's put
    records = list(chitta.field.inspect.iter_records(root))
    put = next(r for r in records if r["op"] == "PutPayload" and r["fields"]["id"] == x)
    delete = next(r for r in records if r["op"] == "DeleteMemory")
    assert delete["seqno"] > put["seqno"]
    with chitta.open(root, read_only=True) as f:
        assert x not in f and len(f) == 500


def test_replay_order_is_seqno_then_instance(tmp_path: Path) -> None:
    root = tmp_path / "field"
    with chitta.open(root) as a, chitta.open(root) as b:
        for i in range(50):
            a.remember(f"a{i}")
            b.remember(f"b{i}")
    keys = [(r["seqno"], r["instance"]) for r in chitta.field.inspect.iter_records(root)]
    assert keys == sorted(keys) and len(set(keys)) == 100
