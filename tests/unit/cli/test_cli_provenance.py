"""Provenance from the command line (real `chitta` processes): remember --provenance,
recall --provenance, and witness_memory / reconcile_all through `chitta call`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from daemontools import child_env, chitta_command

import chitta


def _run(field: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*chitta_command(), "--path", str(field), *args],
        capture_output=True,
        text=True,
        env=child_env(CHITTA_NO_DAEMON="1"),
        cwd=field.parent,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_cli_provenance_write_filter_and_witness(tmp_path: Path) -> None:
    field = tmp_path / "field"
    made = _run(
        field, "remember", "the queue drops messages", "--provenance", "open_weight_generated"
    )
    assert made.returncode == 0, made.stderr
    cand = int(made.stdout)
    human = int(_run(field, "remember", "the queue is rabbitmq", "--provenance", "human").stdout)
    bad = _run(field, "remember", "x", "--provenance", "robot")
    assert bad.returncode != 0 and "robot" in bad.stderr
    refused = _run(
        field, "remember", "x", "--kind", "decision", "--provenance", "open_weight_generated"
    )
    assert refused.returncode != 0 and "can_write_kind" in refused.stderr
    got = _run(field, "recall", "queue", "--provenance", "human", "--json", "--no-touch")
    assert got.returncode == 0, got.stderr
    assert [int(h["id"]) for h in json.loads(got.stdout)["hits"]] == [human]
    bad_signal = _run(field, "call", "witness_memory", f"id={cand}", "signal=vibes")
    assert bad_signal.returncode != 0 and "signal" in bad_signal.stderr
    ok = _run(field, "call", "witness_memory", f"id={cand}", "signal=user_correction")
    assert ok.returncode == 0, ok.stderr
    rec = _run(field, "call", "reconcile_all")
    assert rec.returncode == 0 and json.loads(rec.stdout)["unresolved"] == 0
    with chitta.open(field, read_only=True) as f:
        assert len(f) == 2
        assert f.call("provenance_of", id=cand)["candidate"] is False
        assert f.call("provenance_of", id=human)["provenance"] == "human"
