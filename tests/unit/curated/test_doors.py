"""The curated operations at every door: the method table (so MCP offers the
model-facing ones and never the vocabulary's writes), a real ``chitta serve``
and its ``connect()`` handle (the reviewer's refusal arrives as RoleRefused), and
the ``chitta memory`` command group in real processes (export with its progress
bar, import)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from daemontools import DaemonProcess, child_env, chitta_command

import chitta
from chitta.errors import RoleRefused
from chitta.mcp.tools import tool_methods
from chitta.server.methods import table

MODEL_FACING = {"memory_remember", "memory_recall", "memory_catalog", "memory_pin", "memory_pinned",
                "memory_channel", "memory_fact", "memory_supersede", "memory_resolve",
                "memory_export", "vocabulary_show"}  # fmt: skip
CLOSED = {
    "vocabulary_declare",
    "vocabulary_amend",
    "vocabulary_limits",
    "memory_import",
    "memory_sweep",
}


def test_the_method_table_offers_the_operations_and_closes_the_vocabulary_to_mcp() -> None:
    methods = table()
    assert MODEL_FACING | CLOSED <= set(methods)
    tools = set(tool_methods())
    assert MODEL_FACING <= tools and not CLOSED & tools
    assert all("daemon" in methods[n].doors for n in CLOSED)


def test_the_daemon_handle_runs_them(tmp_path: Path) -> None:
    field, sock = tmp_path / "field", tmp_path / "d.sock"
    daemon = DaemonProcess(field, sock)
    try:
        with chitta.connect(sock, timeout=30) as remote:
            remote.call("vocabulary_declare", path="build", descriptor="how it builds")
            remote.call("vocabulary_declare", path="build/cache", descriptor="the build cache")
            got = remote.call("memory_remember", body="ccache in ~/.ccache", paths=["build/cache"])
            pinned = remote.call("memory_pin", task="t1", paths=["build/cache"])
            assert got["fact"] in pinned["text"]
            assert (
                remote.call("memory_channel", task="t1", role="implementer")["text"]
                == pinned["text"]
            )
            with pytest.raises(RoleRefused, match="reviewer"):
                remote.call("memory_channel", task="t1", role="reviewer")
            remote.flush()
    finally:
        daemon.close()
    with chitta.open(field, read_only=True) as f:
        assert f.call("memory_pinned", task="t1")["text"] == pinned["text"]


def _cli(field: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*chitta_command(), "--path", str(field), "memory", *args],
        capture_output=True, text=True, env=child_env(), cwd=field.parent, timeout=120,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def test_the_memory_command_group(tmp_path: Path) -> None:
    field = tmp_path / "field"
    for args in (("build", "how it builds"), ("build/cache", "the build cache")):
        assert _cli(field, "vocabulary", "declare", *args).returncode == 0
    assert (
        _cli(field, "vocabulary", "amend", "build/cache", "the build cache, ccache").returncode == 0
    )
    shown = json.loads(_cli(field, "vocabulary", "show").stdout)
    assert shown["topics"][0]["descriptor"] == "the build cache, ccache"
    got = _cli(field, "remember", "ccache in ~/.ccache", "--path", "build/cache", "--json")
    assert got.returncode == 0, got.stderr
    fact = json.loads(got.stdout)["fact"]
    bad = _cli(field, "remember", "ccache in ~/.ccache", "--path", "build/cache")
    assert bad.returncode != 0 and "DuplicateFact" in bad.stderr
    assert "build/cache (1 facts)" in _cli(field, "catalog").stdout
    assert fact in _cli(field, "recall", "build/cache", "--query", "ccache").stdout
    new = _cli(field, "supersede", fact, "ccache in /var/cache/ccache", "--json")
    assert new.returncode == 0, new.stderr
    assert _cli(field, "pin", "t1", "--path", "build/cache").returncode == 0
    pinned = _cli(field, "pin", "t1", "--show").stdout
    assert "/var/cache/ccache" in pinned
    tree = tmp_path / "tree"
    out = _cli(field, "export", str(tree))
    assert out.returncode == 0 and "exported 1 facts" in out.stdout, out.stderr
    assert (tree / "MANIFEST.json").is_file()
    imported = _cli(field, "import", str(tree))
    assert json.loads(imported.stdout)["unchanged"] == 1
