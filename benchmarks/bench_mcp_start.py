"""Cold start of ``chitta mcp``: process spawn to the first tool answer, over stdio
with the SDK's own client; beside it, the same for a bare Python and for the
imports alone, so the share of each part shows.

    python benchmarks/bench_mcp_start.py [--runs 5] [--json]
    pytest benchmarks/bench_mcp_start.py --benchmark-disable   # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENV = {**os.environ, "CHITTA_EMBEDDER": "none"}  # no embedder: the field opens with none loaded


def _chitta() -> list[str]:
    exe = Path(sys.executable).with_name("chitta")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "chitta.cli"]


def first_answer_s(field: Path) -> float:
    """Seconds from spawning ``chitta mcp`` to the answer of a ``stats`` tool call."""
    import anyio
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    cmd = _chitta()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "--path", str(field), "mcp"],
                                   cwd=str(field.parent), env=ENV)
    out: list[float] = []

    async def main() -> None:
        t0 = time.perf_counter()
        info = types.Implementation(name="bench", version="1")
        async with stdio_client(params) as (r, w), ClientSession(r, w, client_info=info) as s:
            await s.initialize()
            res = await s.call_tool("stats", {})
            out.append(time.perf_counter() - t0)
            assert not res.is_error

    anyio.run(main)
    return out[0]


def import_s(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/", env=ENV)
    return time.perf_counter() - t0


def measure(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        field = Path(tmp) / "field"
        import chitta

        with chitta.open(field, embedder=None) as f:
            f.remember_many([f"note {i}" for i in range(1000)])
        rows = {
            "python -c pass": [import_s("pass") for _ in range(runs)],
            "import chitta": [import_s("import chitta") for _ in range(runs)],
            "import mcp.server.lowlevel": [import_s("import mcp.server.lowlevel") for _ in range(runs)],
            "chitta mcp: spawn -> first tool answer (1000 memories)": [first_answer_s(field) for _ in range(runs)],
        }
    return {k: {"min_s": min(v), "median_s": statistics.median(v), "runs": len(v)} for k, v in rows.items()}


def test_mcp_cold_start(benchmark: Any, tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("mcp")
    import chitta

    with chitta.open(tmp_path / "field", embedder=None) as f:
        f.remember("x")
    benchmark.pedantic(first_answer_s, args=(tmp_path / "field",), rounds=1, iterations=1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    result = measure(a.runs)
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table("what", "min", "median", "runs", title="chitta mcp cold start")
        for k, v in result.items():
            table.add_row(k, f"{v['min_s'] * 1000:.0f} ms", f"{v['median_s'] * 1000:.0f} ms", str(v["runs"]))
        Console().print(table)
