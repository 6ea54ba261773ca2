"""Load on one ``chitta serve``: N client processes, each remember + recall in a loop
for a few seconds (issue 16, finding 13). Prints ops/s and p50/p99 latency (ms) side
by side for recall that touches (it logs its accesses: a write) and recall with
``touch=False`` (a read: served beside the writer and beside other reads), each with
the daemon's group commit on and off (``--no-group-commit``: one writing call at a
time, as before; chitta/server/group.py), in the same run.

``--embedder hashing`` (default) or ``default`` (the field's default model, MiniLM
ONNX: remembers get their vectors in the background, chitta/field/deferred.py).
``--baseline CMD`` runs each row a second time, right after, with the daemon started
by ``CMD`` instead of this install's ``chitta`` (e.g. a wrapper serving an older
checkout: the old and new daemon side by side under the same load).

By default the loop is closed: every client sends its next call as soon as the last one
returns, so with N clients the mean latency is N / throughput (Little's law) whatever the
daemon does. ``--rate R`` opens it: the clients together offer R calls a second (each its
share, at exponentially spaced moments: Poisson arrivals), and a call's latency counts from
the moment it was due, so a daemon that falls behind shows its queueing in p99 instead of
slowing the senders (no coordinated omission).

    python benchmarks/bench_daemon_load.py [--clients 8] [--seconds 5] [--embedder default]
        [--group on,off] [--touch on,off] [--baseline CMD] [--rate R]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = [
    "ninja",
    "cache",
    "build",
    "linker",
    "test",
    "flaky",
    "deploy",
    "rollback",
    "schema",
    "index",
    "query",
    "latency",
]


def client(
    sock: str,
    seconds: float,
    touch: bool,
    seed: int,
    out: mp.Queue,  # type: ignore[type-arg]
    ready: mp.Queue,  # type: ignore[type-arg]
    start: Any,
    rate: float = 0.0,
) -> None:
    import random

    import chitta

    rng = random.Random(seed)
    lat: list[float] = []
    with chitta.connect(sock, timeout=60) as r:
        r.remember(f"warm-up {seed}")  # untimed: the model loaded, the connection warm
        r.recall("warm-up", k=5, touch=touch)
        ready.put(seed)
        start.wait()  # every client connected: the clock starts together (imports excluded)
        cpu0 = time.process_time()
        if rate > 0:  # open loop: this client's share of the offered calls, Poisson arrivals
            due = time.perf_counter()
            end = due + seconds
            k = 0
            while True:
                due += rng.expovariate(rate)
                if due >= end:
                    break
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                if k % 2 == 0:
                    r.remember(" ".join(rng.choice(WORDS) for _ in range(8)))
                else:
                    r.recall(" ".join(rng.choice(WORDS) for _ in range(3)), k=5, touch=touch)
                lat.append(time.perf_counter() - due)  # from when it was due: queueing included
                k += 1
        else:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                text = " ".join(rng.choice(WORDS) for _ in range(8))
                t0 = time.perf_counter()
                r.remember(text)
                t1 = time.perf_counter()
                r.recall(" ".join(rng.choice(WORDS) for _ in range(3)), k=5, touch=touch)
                t2 = time.perf_counter()
                lat += [t1 - t0, t2 - t1]
        cpu = time.process_time() - cpu0
    out.put((lat, cpu))


def run(
    clients: int,
    seconds: float,
    touch: bool,
    embedder: str = "hashing",
    group: bool = True,
    daemon_cmd: list[str] | None = None,
    profile: str | None = None,
    rate: float = 0.0,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir(mode=0o700)
        sock = run_dir / "d.sock"
        env = dict(os.environ)
        if embedder == "default":
            env.pop("CHITTA_EMBEDDER", None)
        else:
            env["CHITTA_EMBEDDER"] = embedder
        daemon = subprocess.Popen(
            [
                *(daemon_cmd or [str(Path(sys.executable).with_name("chitta"))]),
                "--path",
                f"{tmp}/field",
                "serve",
                "--socket",
                str(sock),
                "--json",
                "--maintain-every",
                "0",
                "--group-commit" if group else "--no-group-commit",
            ],
            stdout=subprocess.PIPE,
            env=env,
            cwd=tmp,  # outside the checkout: the source tree would shadow the installed chitta
        )
        assert daemon.stdout is not None
        json.loads(daemon.stdout.readline())
        try:
            out: mp.Queue = mp.Queue()  # type: ignore[type-arg]
            ready: mp.Queue = mp.Queue()  # type: ignore[type-arg]
            start = mp.Event()
            procs = [
                mp.Process(
                    target=client,
                    args=(str(sock), seconds, touch, i, out, ready, start, rate / clients),
                )
                for i in range(clients)
            ]
            for p in procs:
                p.start()
            for _ in procs:
                ready.get(timeout=300)
            spy = (
                None
                if profile is None
                else subprocess.Popen(  # py-spy's collapsed stacks of the daemon, this window
                    [
                        "py-spy",
                        "record",
                        "--pid",
                        str(daemon.pid),
                        "--duration",
                        str(int(seconds)),
                        "--rate",
                        "200",
                        "--format",
                        "raw",
                        "--output",
                        profile,
                        "--nonblocking",
                        *os.environ.get("PY_SPY_ARGS", "").split(),  # e.g. --gil, --idle
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            cpu0 = _cpu_s(daemon.pid)
            t0 = time.perf_counter()
            start.set()
            got = [out.get() for _ in procs]
            wall = max(seconds, time.perf_counter() - t0)  # the last call may end past `seconds`
            daemon_cpu = _cpu_s(daemon.pid) - cpu0
            daemon_cores = daemon_cpu / (time.perf_counter() - t0)
            lat = sorted(x for one, _ in got for x in one)
            client_cpu = sum(c for _, c in got)
            for p in procs:
                p.join()
            if spy is not None:
                spy.wait(60)
            backlog, drain_s = _backlog(str(sock))
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(60)
    return {
        "ops_s": len(lat) / wall,
        "p50_ms": lat[len(lat) // 2] * 1e3,
        "p99_ms": lat[int(len(lat) * 0.99)] * 1e3,
        "daemon_cores": daemon_cores,
        "client_cores": client_cpu / wall,
        "daemon_ms_op": daemon_cpu / len(lat) * 1e3,
        "client_ms_op": client_cpu / len(lat) * 1e3,
        "backlog": backlog,
        "drain_s": drain_s,
    }


def _backlog(sock: str, limit: float = 120.0) -> tuple[int, float]:
    """Remembers still waiting for their vectors when the window ends (the daemon embeds
    them in the background, so ops/s alone would hide a model that falls behind), and the
    seconds until none are left (capped at ``limit``)."""
    import chitta

    with chitta.connect(sock, timeout=60) as r:
        first = int(r.stats().embed_backlog)
        t0 = time.perf_counter()
        left = first
        while left and time.perf_counter() - t0 < limit:
            time.sleep(0.1)
            left = int(r.stats().embed_backlog)
        return first, time.perf_counter() - t0


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--embedder", default="hashing", help="hashing, default (MiniLM ONNX), none")
    ap.add_argument("--group", default="on,off", help="group commit settings to run: on,off")
    ap.add_argument("--touch", default="on,off", help="recall touch settings to run: on,off")
    ap.add_argument("--baseline", default=None, help="a second daemon command, run after each row")
    ap.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="offered calls/s of all clients together (open loop; latency from when each was due)",
    )
    ap.add_argument(
        "--py-spy", default=None, help="a prefix: each row's py-spy stacks to PREFIX-<row>.txt"
    )
    a = ap.parse_args()
    daemons: list[tuple[str, list[str] | None]] = [("this", None)]
    if a.baseline:
        daemons.append(("baseline", a.baseline.split()))
    loop = f"open loop, {a.rate:g} calls/s offered" if a.rate > 0 else "closed loop"
    print(
        f"{a.clients} client processes x {a.seconds:g} s, remember + recall, {loop}, "
        f"{a.embedder} embedder, load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'daemon':<10}{'recall':<22}{'group':>7}{'ops/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'daemon CPU':>12}"
        f"{'clients CPU':>13}{'daemon ms/op':>14}{'client ms/op':>14}{'backlog':>9}{'drain s':>9}"
    )
    for touch in (t == "on" for t in a.touch.split(",")):
        name = "touch=True (writes)" if touch else "touch=False (reads)"
        for group in (g == "on" for g in a.group.split(",")):
            for label, cmd in daemons:
                tag = f"{label}-{'touch' if touch else 'read'}-{'group' if group else 'alone'}"
                spy = None if a.py_spy is None else f"{a.py_spy}-{tag}.txt"
                r = run(a.clients, a.seconds, touch, a.embedder, group, cmd, spy, a.rate)
                print(
                    f"{label:<10}{name:<22}{'on' if group else 'off':>7}{r['ops_s']:>10.0f}"
                    f"{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}{r['daemon_cores']:>11.2f}c"
                    f"{r['client_cores']:>12.2f}c{r['daemon_ms_op']:>14.2f}"
                    f"{r['client_ms_op']:>14.2f}{r['backlog']:>9d}{r['drain_s']:>9.1f}"
                    f"  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
