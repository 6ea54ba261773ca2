"""`chitta operations` and `chitta call` run organ operations from the command line
(real `chitta` processes; the toy organ registered by CHITTA_ORGANS)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from daemontools import child_env, chitta_command

HELPERS = Path(__file__).resolve().parents[2] / "helpers"


def _run(field: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(HELPERS), os.environ.get("PYTHONPATH")]))
    env = child_env(CHITTA_ORGANS="toy_organ:SessionTally", PYTHONPATH=path)
    return subprocess.run(
        [*chitta_command(), "--path", str(field), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=field.parent,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_operations_are_listed_and_called(tmp_path: Path) -> None:
    field = tmp_path / "field"
    listed = _run(field, "operations", "--json")
    assert listed.returncode == 0, listed.stderr
    ops = json.loads(listed.stdout)
    assert ops["session_note"]["writes"] is True and ops["session_tally"]["schema"]["required"] == [
        "session"
    ]
    assert _run(field, "call", "session_note", "session=s1", "event=register").returncode == 0
    done = _run(field, "call", "session_tally", "--args", '{"session": "s1"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"session": "s1", "events": {"register": 1}, "total": 1}


def test_bad_calls_say_what_to_fix(tmp_path: Path) -> None:
    field = tmp_path / "field"
    unknown = _run(field, "call", "no_such_operation")
    assert unknown.returncode == 2 and "chitta operations" in unknown.stderr
    missing = _run(field, "call", "session_note")
    assert missing.returncode == 2 and "missing required argument" in missing.stderr
    not_pair = _run(field, "call", "session_tally", "session")
    assert not_pair.returncode == 2 and "key=value" in not_pair.stderr
    assert not field.exists()  # nothing was created by the failed calls
