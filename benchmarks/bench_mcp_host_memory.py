"""Memory of the warm MCP host (``chitta mcp-host``) as agent windows join it.

Each session is a real ``chitta mcp`` forwarder driven by the official SDK client; it
remembers and recalls once, so its field handle embeds with the default model. The
host's resident memory (``VmRSS``) is read after each session joins, all sessions held
open at once. Beside it, in the same run: what one more loaded model costs in a fresh
process (the price every session paid when each handle loaded its own), so the per-session
increment can be read against it.

    python benchmarks/bench_mcp_host_memory.py [--sessions 4] [--json]
    pytest benchmarks/bench_mcp_host_memory.py --benchmark-disable   # smoke (2 sessions)
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_mcp_start import WarmHost, _chitta

MODEL_CODE = """
import sys
from chitta.encode import OnnxMiniLM, onnx_minilm
def rss(): return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])
if not onnx_minilm.is_available(): print('null'); sys.exit()
first = OnnxMiniLM(); first.embed(['warm up'])
before = rss()
second = OnnxMiniLM(); second.embed(['warm up'])
print((rss() - before) / 1024)
"""


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def one_model_mb() -> float | None:
    """MB one more OnnxMiniLM instance adds to a process that already holds one."""
    out = subprocess.run(  # outside the checkout: its chitta/ would shadow the installed one
        [sys.executable, "-c", MODEL_CODE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tempfile.gettempdir(),
    )
    if out.returncode != 0:
        raise RuntimeError(f"measuring one model instance failed: {out.stderr[-2000:]}")
    value = json.loads(out.stdout)
    return None if value is None else float(value)


def host_rss_by_sessions(field: Path, runtime: Path, sessions: int) -> list[float]:
    """The host's RSS (MB) with 0, 1, ..., sessions windows connected and used."""
    import anyio
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k != "CHITTA_EMBEDDER"}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    host = WarmHost(field, runtime, env=env)
    cmd = _chitta()
    out = [rss_mb(host.proc.pid)]

    async def main() -> None:
        async with contextlib.AsyncExitStack() as stack:
            for i in range(sessions):
                params = StdioServerParameters(
                    command=cmd[0],
                    args=[*cmd[1:], "--path", str(field), "mcp"],
                    cwd=str(field.parent),
                    env=env,
                )
                r, w = await stack.enter_async_context(stdio_client(params))
                info = types.Implementation(name=f"window-{i}", version="1")
                s = await stack.enter_async_context(ClientSession(r, w, client_info=info))
                await s.initialize()
                assert not (
                    await s.call_tool("remember", {"text": f"window {i} was here"})
                ).is_error
                assert not (await s.call_tool("recall", {"query": "which window?"})).is_error
                out.append(rss_mb(host.proc.pid))

    try:
        anyio.run(main)
    finally:
        host.stop()
    return out


def measure(sessions: int) -> dict[str, Any]:
    import chitta

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        with chitta.open(root / "field", embedder="default") as f:
            f.remember("the host serves every window from one process")
        by_sessions = host_rss_by_sessions(root / "field", runtime, sessions)
    model = one_model_mb()
    steps = [b - a for a, b in itertools.pairwise(by_sessions[1:])]
    return {
        "host_rss_mb_by_sessions": [round(x, 1) for x in by_sessions],
        "mb_per_extra_session": round(sum(steps) / len(steps), 1) if steps else None,
        "mb_one_more_model_instance": None if model is None else round(model, 1),
    }


def test_mcp_host_memory(benchmark: Any) -> None:
    import pytest

    pytest.importorskip("mcp")
    result = benchmark.pedantic(measure, args=(2,), rounds=1, iterations=1)
    assert len(result["host_rss_mb_by_sessions"]) == 3


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from rich.console import Console

    with Console(stderr=True).status(f"opening {a.sessions} sessions on a warm host"):
        result = measure(a.sessions)
    result["_machine"] = {"loadavg_after": os.getloadavg(), "cpus": os.cpu_count()}
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        for k, v in result.items():
            print(f"{k:>30}: {v}")
