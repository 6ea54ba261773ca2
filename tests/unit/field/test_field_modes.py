"""Fields and everything in them are private to their owner whatever the
umask (0700 directories, 0600 files), or shared with the group under
CHITTA_SHARED_GROUP=1 (issue 16, finding 6). Run in child processes, so the
umask and the environment are the test's own."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import os, sys
    os.umask(0)  # as permissive as it gets
    import chitta
    from chitta import _core
    root = sys.argv[1]
    with chitta.open(root, segment_bytes=1024) as f:
        for i in range(40):
            f.remember(f"secret number {i} " * 3)
        f.checkpoint()
    log = _core.SegmentLog(root, instance_id=5)
    log.append(0, b"\\x90")  # a torn tail for the owner to quarantine
    log.close()
    seg = sorted(p for p in os.listdir(root + "/segments") if p.startswith("00000005"))[-1]
    path = root + "/segments/" + seg
    os.truncate(path, os.path.getsize(path) - 1)
    _core.SegmentLog(root, instance_id=5).close()
    """
)


def _modes(root: Path) -> dict[str, int]:
    out = {str(root): stat.S_IMODE(root.stat().st_mode)}
    for p in root.rglob("*"):
        out[str(p.relative_to(root))] = stat.S_IMODE(p.stat().st_mode)
    return out


@pytest.mark.parametrize("shared", [False, True])
def test_everything_in_a_field_is_private_whatever_the_umask(tmp_path: Path, shared: bool) -> None:
    root = tmp_path / "deep" / "field"
    env = dict(os.environ)
    env.pop("CHITTA_SHARED_GROUP", None)
    if shared:
        env["CHITTA_SHARED_GROUP"] = "1"
    subprocess.run(  # cwd outside the repository: the installed package, not the source tree
        [sys.executable, "-c", SCRIPT, str(root)], check=True, env=env, timeout=120, cwd=tmp_path
    )
    modes = _modes(root)
    names = set(modes)
    for wanted in (
        "segments",
        "MANIFEST",
        "checkpoint",
        "checkpoint/CURRENT",
        "checkpoint/LOCK",
        "quarantine",
    ):
        assert wanted in names, f"{wanted} was not created: {sorted(names)}"
    assert any(n.startswith("checkpoint/ckpt-") and n.endswith("/state") for n in names)
    assert any(n.startswith("quarantine/") and n.endswith(".json") for n in names)
    file_mode, dir_mode = (0o660, 0o2770) if shared else (0o600, 0o700)
    wrong = {}
    for name, mode in modes.items():
        path = root if name == str(root) else root / name
        want = dir_mode if path.is_dir() else file_mode
        if mode != want:
            wrong[name] = oct(mode)
    assert wrong == {}
    assert stat.S_IMODE((tmp_path / "deep").stat().st_mode) == dir_mode  # parents chitta made too
