"""A failed flush under ``durability="buffered"`` names exactly the acknowledged memories
it lost, and the handle refuses every later call until the field is reopened.

A child process limits its file size (``RLIMIT_FSIZE`` with ``SIGXFSZ`` ignored, so
``write(2)`` fails with EFBIG, as a full disk fails it with ENOSPC) and remembers through
every write path (the native plain put, tagged puts, ``remember_many`` batches), flushing
every few calls, until a flush fails. The oracle is the disk: reopened without the limit,
the field holds exactly the acknowledged memories minus ``lost_ids``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chitta

CHILD = r"""
import json, resource, signal, sys
import chitta
from chitta.errors import ChittaIOError, LostWritesError
root = sys.argv[1]
f = chitta.open(root, durability="buffered", embedder=None)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, hard))
acked, first = [], None
for i in range(2000):
    try:
        if i % 3 == 0:
            acked.append(f.remember(f"plain note {i} " + "p" * 120))
        elif i % 3 == 1:
            acked.append(f.remember(f"tagged note {i} " + "t" * 120, tags=["t"]))
        else:
            acked.extend(f.remember_many([f"batch {i} a " + "b" * 80, f"batch {i} b " + "b" * 80]))
        if i % 7 == 6:
            f.flush()
    except ChittaIOError as exc:
        first = exc
        break
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
later = {}
for name, call in [("get", lambda: f.get(acked[0])), ("recall", lambda: f.recall("note")),
                   ("remember_tagged", lambda: f.remember("after", tags=["t"])),
                   ("flush", f.flush), ("stats", f.stats)]:
    try:
        call()
        later[name] = "ok"
    except LostWritesError as exc:
        later[name] = list(exc.lost_ids)
try:
    f.remember("after, plain")
    later["remember_plain"] = "ok"
except ChittaIOError as exc:
    later["remember_plain"] = type(exc).__name__ + ": " + str(exc)
try:
    f.close()
    closed = "ok"
except LostWritesError as exc:
    closed = list(exc.lost_ids)
print(json.dumps({"acked": acked, "first_type": type(first).__name__ if first else None,
                  "first_message": str(first), "lost": list(getattr(first, "lost_ids", [])),
                  "seqnos": len(getattr(first, "lost_seqnos", [])),
                  "later": later, "closed": closed}))
"""


def test_failed_buffered_flush_names_exactly_the_lost_acknowledged_ids(tmp_path: Path) -> None:
    root = tmp_path / "f"
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["first_type"] == "LostWritesError", res["first_message"]
    assert "File too large" in res["first_message"] and "reopen" in res["first_message"]
    acked, lost = set(res["acked"]), res["lost"]
    assert lost == sorted(lost) and set(lost) <= acked and len(lost) > 0
    assert res["seqnos"] >= 1
    with chitta.open(root, read_only=True, embedder=None) as f:
        on_disk = set(f.ids())
    assert on_disk == acked - set(lost)  # the disk: everything acknowledged but the named loss
    assert set(lost) == acked - on_disk
    later = res["later"]
    for name in ("get", "recall", "remember_tagged", "flush", "stats"):
        assert later[name] == lost, name  # every later call refuses, naming the same loss
    assert "lost" in later["remember_plain"] and "reopen" in later["remember_plain"]
    assert res["closed"] == lost


def test_reopened_after_the_loss_the_field_takes_writes_again(tmp_path: Path) -> None:
    root = tmp_path / "f"
    subprocess.run(
        [sys.executable, "-c", CHILD, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=True,
    )
    with chitta.open(root, durability="buffered", embedder=None) as f:
        before = len(f.ids())
        mid = f.remember("written after the reopen")
        f.flush()
    with chitta.open(root, read_only=True, embedder=None) as f:
        assert len(f.ids()) == before + 1 and f.get(mid).text == "written after the reopen"
