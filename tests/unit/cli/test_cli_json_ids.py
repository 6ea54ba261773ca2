"""``chitta ... --json`` with ids above 2**53, read the way a JavaScript client or jq
reads JSON (numbers as doubles): ids come out as decimal strings and go back in
(D-038). Real subprocesses; jq when installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from clitools import run

import chitta

INSTANCE = 0xDEADBEEF  # this writer's ids are above 2**53


def as_js(text: str) -> object:
    """JSON read as a double-only reader would (the oracle of a JS client); and no
    number in it is an integer that such a reader would round."""

    def exact(digits: str) -> float:
        assert abs(int(digits)) <= 2**53, f"{digits} would be rounded by a double reader"
        return float(digits)

    return json.loads(text, parse_int=exact)


def test_ids_survive_a_double_reading_json_parser(tmp_path: Path) -> None:
    field = tmp_path / "field"
    with chitta.open(field, instance_id=INSTANCE, embedder=None) as f:
        a = f.remember("the staging database listens on port 5433")
        b = f.remember("deploys need the VPN")
    assert a > 2**53 and float(a) != a  # a double would round it
    p = ("--path", str(field))

    hits = as_js(run(*p, "recall", "staging database port", "--json").stdout)["hits"]  # type: ignore[index]
    assert hits[0]["id"] == str(a)
    got = run(*p, "get", hits[0]["id"], "--json")  # the string goes back in as it came out
    assert got.returncode == 0 and as_js(got.stdout)["id"] == str(a)  # type: ignore[index]
    stats = as_js(run(*p, "stats", "--json").stdout)
    assert stats["memories"] == 2.0  # type: ignore[index]
    new = as_js(run(*p, "remember", "a third note", "--json").stdout)["id"]  # type: ignore[index]
    assert isinstance(new, str) and int(new) > 0
    gone = run(*p, "forget", str(b), "--json")
    assert gone.returncode == 0 and as_js(gone.stdout) == {"forgotten": str(b)}
    dumped = [as_js(line) for line in run(*p, "dump", "--json").stdout.splitlines()]
    assert str(a) in json.dumps(dumped)  # the log's ids as strings too
    with chitta.open(field, read_only=True, embedder=None) as f:
        assert a in f and b not in f and int(new) in f


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed (apt-get install jq)")
def test_jq_reads_recall_ids_exactly(tmp_path: Path) -> None:
    field = tmp_path / "field"
    with chitta.open(field, instance_id=INSTANCE, embedder=None) as f:
        a = f.remember("the staging database listens on port 5433")
    out = run("--path", str(field), "recall", "staging", "--json").stdout
    jq = subprocess.run(
        ["jq", "-r", ".hits[0].id"], input=out, capture_output=True, text=True, check=True
    )
    assert jq.stdout.strip() == str(a)
    # the oracle that the test is meaningful: jq rounds the same id as a bare number
    rounded = subprocess.run(
        ["jq", ".x"], input=json.dumps({"x": a}), capture_output=True, text=True, check=True
    )
    if rounded.stdout.strip() == str(a):
        pytest.skip("this jq keeps big integers exact (jq >= 1.7); the string check above held")
