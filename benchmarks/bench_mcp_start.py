"""Cold start of ``chitta mcp``: process spawn to the first tool answer, with the
SDK's own clients (stdio ``ClientSession``; streamable HTTP), in-process
(``--no-host``) and forwarded to a warm ``chitta mcp-host``, beside the parts:
a bare Python, ``import chitta``, what opening a field imports, the SDK's imports
and the open itself, so the share of each shows. No embedder is loaded.

    python benchmarks/bench_mcp_start.py [--runs 5] [--json]
    pytest benchmarks/bench_mcp_start.py --benchmark-disable   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV = {**os.environ, "CHITTA_EMBEDDER": "none"}  # no embedder: the field opens with none loaded
OPEN_CODE = """
import sys, time
t0 = time.perf_counter()
import chitta.field
t1 = time.perf_counter()
f = chitta.field.Field(sys.argv[1], embedder="auto")
f.stats()
t2 = time.perf_counter()
f.close()
print(t1 - t0, t2 - t1)
"""


SERIAL_CODE = (
    "import chitta.cli, chitta.cli.serve, chitta.field, mcp.server.lowlevel, mcp.server.stdio"
)


def _chitta() -> list[str]:
    exe = Path(sys.executable).with_name("chitta")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "chitta.cli"]


def stdio_start_s(field: Path, *extra: str, env: dict[str, str] = ENV) -> tuple[float, float]:
    """Seconds from spawning ``chitta mcp`` to the initialize answer, and to a ``stats`` answer."""
    import anyio
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cmd = _chitta()
    params = StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "--path", str(field), "mcp", *extra],
        cwd=str(field.parent),
        env=env,
    )
    out: list[float] = []

    async def main() -> None:
        t0 = time.perf_counter()
        info = types.Implementation(name="bench", version="1")
        async with stdio_client(params) as (r, w), ClientSession(r, w, client_info=info) as s:
            await s.initialize()
            out.append(time.perf_counter() - t0)
            res = await s.call_tool("stats", {})
            out.append(time.perf_counter() - t0)
            assert not res.is_error

    anyio.run(main)
    return out[0], out[1]


def http_start_s(field: Path) -> float:
    """Seconds from spawning ``chitta mcp --http --port 0`` to a ``stats`` answer over streamable HTTP."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*_chitta(), "--path", str(field), "mcp", "--http", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        cwd=field.parent,
        env=ENV,
    )
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            assert sel.select(120), "chitta mcp --http did not start"
        url = json.loads(proc.stdout.readline())["url"]

        async def main() -> None:
            async with streamable_http_client(url) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                assert not (await s.call_tool("stats", {})).is_error

        anyio.run(main)
        return time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=60)


class WarmHost:
    """``chitta mcp-host`` on its own runtime directory, ready to forward to."""

    def __init__(self, field: Path, runtime: Path, env: dict[str, str] | None = None) -> None:
        self.env = {**(ENV if env is None else env), "XDG_RUNTIME_DIR": str(runtime)}
        self.proc = subprocess.Popen(
            [*_chitta(), "--path", str(field), "mcp-host", "--json"],
            stdout=subprocess.PIPE,
            cwd="/",
            env=self.env,
        )
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            assert sel.select(120), "chitta mcp-host did not start"
        assert self.proc.stdout.readline(), "chitta mcp-host failed"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def run_s(code: str, *args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True, cwd="/", env=ENV)
    return time.perf_counter() - t0


def open_parts_s(field: Path) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", OPEN_CODE, str(field)],
        check=True,
        cwd="/",
        env=ENV,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


def measure(runs: int, progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    with (
        tempfile.TemporaryDirectory() as tmp,
        tempfile.TemporaryDirectory(prefix="cmb", dir="/tmp") as run,
    ):
        field = Path(tmp) / "field"
        import chitta

        with chitta.open(field, embedder=None) as f:
            f.remember_many([f"note {i}" for i in range(1000)])
        host = WarmHost(field, Path(run))
        try:
            _measure_runs(field, runs, host, add, progress)
        finally:
            host.stop()
    return {
        k: {"min_s": min(v), "median_s": statistics.median(v), "runs": len(v)}
        for k, v in rows.items()
    }


def _measure_runs(
    field: Path,
    runs: int,
    host: WarmHost,
    add: Callable[[str, float], None],
    progress: Callable[[str], None],
) -> None:
    for i in range(runs):  # interleaved, so a burst of load spreads over every row
        progress(f"run {i + 1}/{runs}")
        add("python -c pass", run_s("pass"))
        add("import chitta", run_s("import chitta"))
        imp, opened = open_parts_s(field)
        add("in-process: import chitta.field (what an open needs)", imp)
        add("in-process: open the field (1,000 memories) + stats", opened)
        add("import mcp_types (the SDK's wire types alone)", run_s("import mcp_types"))
        add("import mcp.server.lowlevel (the SDK as served)", run_s("import mcp.server.lowlevel"))
        add("serial: import chitta.cli, chitta.field, then the SDK", run_s(SERIAL_CODE))
        add(
            "import chitta.mcp.forward (all the forwarder imports)",
            run_s("import chitta.mcp.forward"),
        )
        init, first = stdio_start_s(field, "--no-host")
        add("chitta mcp --no-host (stdio, SDK in-process): spawn -> initialize answered", init)
        add("chitta mcp --no-host (stdio, SDK in-process): spawn -> first tool answer", first)
        init, first = stdio_start_s(field, env=host.env)
        add("chitta mcp (stdio, warm mcp-host): spawn -> initialize answered", init)
        add("chitta mcp (stdio, warm mcp-host): spawn -> first tool answer", first)
        add("chitta mcp --http: spawn -> first tool answer", http_start_s(field))


def test_mcp_cold_start(benchmark: Any, tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("mcp")
    import chitta

    with chitta.open(tmp_path / "field", embedder=None) as f:
        f.remember("x")
    benchmark.pedantic(
        stdio_start_s, args=(tmp_path / "field", "--no-host"), rounds=1, iterations=1
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from rich.console import Console

    err = Console(stderr=True)
    with err.status("measuring") as status:
        result = measure(a.runs, lambda text: status.update(f"measuring: {text}"))
    result["_machine"] = {
        "loadavg_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        from rich.table import Table

        table = Table("what", "min", "median", "runs", title="chitta mcp cold start")
        for k, v in result.items():
            if not k.startswith("_"):
                table.add_row(
                    k,
                    f"{v['min_s'] * 1000:,.0f} ms",
                    f"{v['median_s'] * 1000:,.0f} ms",
                    str(v["runs"]),
                )
        Console().print(table)
        err.print(f"load average after: {result['_machine']['loadavg_after']}")
