"""A failed write under ``durability="fsync"`` fails the field's writer for good.

A child process limits its file size (``RLIMIT_FSIZE``, with ``SIGXFSZ``
ignored, so ``write(2)`` fails with EFBIG) and remembers from several threads
until the group commit's write fails. Every ``remember`` from then on raises
``ChittaIOError``, also after the limit is lifted (the writer cannot know what
the failed group left behind). Reopened, the field holds exactly the
acknowledged memories: none of a failed group turns up later.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chitta

CHILD = r"""
import json, resource, signal, sys, threading
import chitta
from chitta.errors import ChittaIOError
root = sys.argv[1]
f = chitta.open(root, durability="fsync", embedder=None)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (48 << 10, hard))
lock = threading.Lock()
acked, errors, ok_after_error = {}, [], []

def work(t):
    failed = False
    for i in range(300):
        text = f"thread {t} note {i}: " + "x" * 150
        try:
            mid = f.remember(text)
        except ChittaIOError as exc:
            failed = True
            with lock:
                errors.append(str(exc))
            continue
        with lock:
            acked[mid] = text
            if failed:
                ok_after_error.append(mid)

pool = [threading.Thread(target=work, args=(t,)) for t in range(8)]
for th in pool:
    th.start()
for th in pool:
    th.join()
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
try:
    f.remember("after the limit was lifted")
    sticky = False
except ChittaIOError as exc:
    sticky = "reopen" in str(exc)
f.close()
print(json.dumps({"acked": {str(k): v for k, v in acked.items()}, "errors": len(errors),
                  "first_error": errors[0] if errors else "", "ok_after_error": ok_after_error,
                  "sticky": sticky}))
"""


def test_failed_group_write_fails_the_writer_and_loses_only_unacknowledged(tmp_path: Path) -> None:
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
    assert res["errors"] > 0
    assert "File too large" in res["first_error"] or "EFBIG" in res["first_error"], res[
        "first_error"
    ]
    assert res["ok_after_error"] == []
    assert res["sticky"] is True
    acked = {int(k): v for k, v in res["acked"].items()}
    assert 0 < len(acked) < 48 * 1024 // 150
    with chitta.open(root, read_only=True, embedder=None) as f:
        assert set(f.ids()) == set(acked)
        for mid, text in acked.items():
            assert f.get(mid).text == text
