"""Latency of ``chitta`` commands, process start included: ``stats``, ``get`` and
``forget`` answered by a running daemon through the light fast path
(chitta/cli/served.py), beside the same commands through the full command line talking
to the same daemon, and opening the field with no daemon (``CHITTA_NO_DAEMON=1``), with a
bare interpreter as the floor. Rounds interleave the variants; median and min per cell.

    python benchmarks/bench_cli.py [--runs 9] [--memories 1000]
    pytest benchmarks/bench_cli.py --benchmark-disable   # smoke
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FULL_CLI = "from chitta.cli.app import main; main(prog_name='chitta')"  # argv[0] -c: no fast path


def _chitta() -> str:
    exe = Path(sys.executable).with_name("chitta")
    return str(exe) if exe.exists() else shutil.which("chitta") or "chitta"


def _time(argv: list[str], env: dict[str, str], cwd: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - t0
    if r.returncode not in (0, 5):  # 5: forgetting an already forgotten id
        raise RuntimeError(f"{argv} failed: {r.stderr.decode()[-400:]}")
    return elapsed


class Served:
    """A field with ``memories`` memories and a ``chitta serve`` on its default socket."""

    def __init__(self, memories: int) -> None:
        import chitta
        from chitta.server.daemon import default_socket

        self.tmp = Path(tempfile.mkdtemp(prefix="cbc", dir="/tmp"))
        self.env = {**os.environ, "CHITTA_EMBEDDER": "none", "XDG_RUNTIME_DIR": str(self.tmp)}
        self.field = self.tmp / "f"
        with chitta.open(self.field, embedder=None) as f:
            self.ids = f.remember_many([f"note {i} about the build" for i in range(memories)])
        os.environ["XDG_RUNTIME_DIR"] = str(self.tmp)
        sock = default_socket(self.field)
        sock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [_chitta(), "--path", str(self.field), "serve"],
            env=self.env,
            cwd=str(self.tmp),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not sock.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chitta serve did not start")
            time.sleep(0.05)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        shutil.rmtree(self.tmp, ignore_errors=True)


def measure(runs: int, memories: int) -> dict[str, dict[str, list[float]]]:
    s = Served(memories)
    try:
        path = ["--path", str(s.field)]
        no_daemon = {**s.env, "CHITTA_NO_DAEMON": "1"}
        commands = {
            "stats": ["stats"],
            "get ID": ["get", str(s.ids[0])],
            "forget ID": ["forget", str(s.ids[1])],
        }
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "fast path (daemon)": ([_chitta()], s.env),
            "full CLI (daemon)": ([sys.executable, "-c", FULL_CLI], s.env),
            "full CLI (opens the field)": ([_chitta()], no_daemon),
        }
        out: dict[str, dict[str, list[float]]] = {c: {v: [] for v in variants} for c in commands}
        floor: list[float] = []
        for _ in range(runs):
            floor.append(_time([sys.executable, "-c", "pass"], s.env, str(s.tmp)))
            for c, args in commands.items():
                for v, (exe, env) in variants.items():
                    out[c][v].append(_time([*exe, *path, *args], env, str(s.tmp)))
        out["python -c pass"] = {"interpreter": floor}
        return out
    finally:
        s.close()


def report(results: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| command | variant | median ms | min ms |", "|---|---|---:|---:|"]
    for c, vs in results.items():
        for v, xs in vs.items():
            lines.append(
                f"| `{c}` | {v} | {statistics.median(xs) * 1e3:.0f} | {min(xs) * 1e3:.0f} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--memories", type=int, default=1000)
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(report(measure(a.runs, a.memories)))


def test_cli_latency_smoke(benchmark: Any) -> None:
    benchmark.pedantic(measure, args=(1, 10), rounds=1, iterations=1)


if __name__ == "__main__":
    main()
