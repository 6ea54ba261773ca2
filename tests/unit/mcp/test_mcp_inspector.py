"""The official MCP Inspector CLI (Node, TypeScript SDK) against a real ``chitta mcp
--no-host``: tools/list, a good call, a bad call (SEP-1303 isError) and an id above
2**53 that a JavaScript client must pass back exactly (D-038). Runs only from npm's
cache (``npm_config_offline``: nothing downloads at test time); skipped where npx or
the cached Inspector is missing (``npx -y @modelcontextprotocol/inspector --help``
once, with the registry reachable, fills the cache)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from daemontools import child_env, chitta_command

import chitta

INSTANCE = 0xDEADBEEF


def inspector(field: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = child_env(npm_config_offline="true", npm_config_update_notifier="false")
    return subprocess.run(
        ["npx", "-y", "@modelcontextprotocol/inspector", "--cli", *chitta_command()]
        + ["--path", str(field), "mcp", "--no-host", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=field.parent,
        check=False,
    )


def call(field: Path, tool: str, **args: str) -> dict[str, Any]:
    pairs = [a for k, v in args.items() for a in ("--tool-arg", f"{k}={v}")]
    r = inspector(field, "--method", "tools/call", "--tool-name", tool, *pairs)
    assert r.stdout.strip().startswith("{"), (r.stdout, r.stderr)
    result: dict[str, Any] = json.loads(r.stdout)
    return result


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
def test_inspector_cli_lists_calls_and_round_trips_a_big_id(tmp_path: Path) -> None:
    field = tmp_path / "field"
    with chitta.open(field, instance_id=INSTANCE, embedder=None) as f:
        big = f.remember("the staging database listens on port 5433")
    listed = inspector(field, "--method", "tools/list")
    if listed.returncode != 0 and "ENOTCACHED" in listed.stderr + listed.stdout:
        pytest.skip("the MCP Inspector is not in npm's cache (see the module docstring)")
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)["tools"]}
    assert {"remember", "recall", "get", "forget", "link"} <= set(tools)
    assert all("outputSchema" in t and "annotations" in t for t in tools.values())

    hit = call(field, "recall", query="staging database")["structuredContent"]["hits"][0]
    assert hit["id"] == str(big)  # exact in a JavaScript client
    got = call(field, "get", id=hit["id"])
    assert not got.get("isError") and got["structuredContent"]["text"].startswith("the staging")
    bad = call(field, "recall", query="x", k="many")
    assert bad["isError"] is True and "k" in bad["content"][0]["text"]
    gone = call(field, "forget", id=str(big))
    assert gone["structuredContent"] == {"forgotten": str(big)}
    with chitta.open(field, read_only=True, embedder=None) as f:
        assert big not in f and os.path.isdir(field)
