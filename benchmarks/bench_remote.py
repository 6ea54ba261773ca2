"""Remote (S3) benchmarks against a local SeaweedFS (tests/unit/remote/seaweed.py).

python benchmarks/bench_remote.py clients        # boto3 vs minio: put/get/list, side by side
python benchmarks/bench_remote.py sync  [WRITERS] [SECONDS]   # sync-mode acknowledged records/s
python benchmarks/bench_remote.py async [MACHINES] [WRITERS] [N] [KILLS]  # processes: lag p50/p99, kill -9
python benchmarks/bench_remote.py bootstrap [N]  # open from bucket checkpoint vs local checkpoint
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "unit" / "remote"))
from seaweed import ACCESS_KEY, SECRET_KEY, Seaweed

import chitta


def clients(sw: Seaweed, n: int = 300) -> None:
    import minio

    b3 = sw.client()
    mc = minio.Minio(
        sw.endpoint.split("//")[1], access_key=ACCESS_KEY, secret_key=SECRET_KEY, secure=False
    )
    body = os.urandom(4096)
    import io

    def run(name: str, put, get, lst) -> None:  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        for i in range(n):
            put(f"{name}/{i:06}")
        tp = (time.perf_counter() - t) / n
        t = time.perf_counter()
        for i in range(n):
            get(f"{name}/{i:06}")
        tg = (time.perf_counter() - t) / n
        t = time.perf_counter()
        for _ in range(20):
            lst(f"{name}/")
        tl = (time.perf_counter() - t) / 20
        print(
            f"{name:6} put 4KiB {tp * 1e3:6.2f} ms  get {tg * 1e3:6.2f} ms  list {n} keys {tl * 1e3:6.2f} ms"
        )

    for _round in range(2):  # A/B twice, interleaved
        run(
            "boto3",
            lambda k: b3.put_object(Bucket="bench", Key=k, Body=body, IfNoneMatch="*"),
            lambda k: b3.get_object(Bucket="bench", Key=k)["Body"].read(),
            lambda p: b3.list_objects_v2(Bucket="bench", Prefix=p),
        )
        run(
            "minio",
            lambda k: mc.put_object("bench", k, io.BytesIO(body), len(body)),
            lambda k: mc.get_object("bench", k).read(),
            lambda p: list(mc.list_objects("bench", prefix=p)),
        )
        b3.delete_objects(
            Bucket="bench", Delete={"Objects": [{"Key": f"boto3/{i:06}"} for i in range(n)]}
        )
        b3.delete_objects(
            Bucket="bench", Delete={"Objects": [{"Key": f"minio/{i:06}"} for i in range(n)]}
        )


def _sync_round(writers: int, seconds: float, inflight: int) -> tuple[float, float]:
    d = Path(tempfile.mkdtemp())
    f = chitta.open(
        d / "s", remote=f"s3://bench/sync-{time.time_ns()}", embedder=None, remote_durability="sync"
    )
    if hasattr(f.remote.shipper, "max_inflight"):
        f.remote.shipper.max_inflight = inflight
    stop = time.monotonic() + seconds
    counts = [0] * writers

    def work(k: int) -> None:
        while time.monotonic() < stop:
            f.remember(f"writer {k} record {counts[k]}")
            counts[k] += 1

    threads = [threading.Thread(target=work, args=(k,)) for k in range(writers)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    el = time.perf_counter() - t
    chunks = f.remote_status()["chunks_shipped"]
    f.close()
    return sum(counts) / el, sum(counts) / max(1, chunks)


BEFORE = "11c5a02"  # main before the upload pipeline (the first implementation of issue 24)


def _load_remote_from(commit: str) -> None:
    """Replace chitta.remote's modules in this process by those of ``commit`` (git show)."""
    import importlib.util
    import subprocess

    root = Path(__file__).resolve().parent.parent
    tmp = Path(tempfile.mkdtemp())
    for name in (
        "url",
        "store",
        "layout",
        "local",
        "ship",
        "fetch",
        "replicator",
        "checkpoints",
        "attach",
    ):
        src = subprocess.run(
            ["git", "show", f"{commit}:chitta/remote/{name}.py"],
            cwd=root,
            check=True,
            capture_output=True,
        ).stdout
        (tmp / f"{name}.py").write_bytes(src)
        spec = importlib.util.spec_from_file_location(f"chitta.remote.{name}", tmp / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)


def sync(sw: Seaweed, writers: int = 16, seconds: float = 5.0, rounds: int = 2) -> None:
    """Acknowledged records/s in sync mode: the code before the pipeline (a subprocess
    running BEFORE's chitta/remote) vs uploads in flight 1/2/4/8, interleaved rounds."""
    import subprocess

    results: dict[str, list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for variant in ("before", "1", "4", "2", "8"):
            out = subprocess.run(
                [sys.executable, __file__, "sync-one", variant, str(writers), f"{seconds}"],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, **sw.env()},
            )
            rate, per_chunk = out.stdout.split()[-2:]
            what = f"before ({BEFORE})" if variant == "before" else f"{variant} in flight"
            results.setdefault(what, []).append((float(rate), float(per_chunk)))
    base = statistics.mean(r for r, _ in results[f"before ({BEFORE})"])
    for what, rs in results.items():
        rate = statistics.mean(r for r, _ in rs)
        print(
            f"sync: {writers} writers, {what:>17}: {' / '.join(f'{r:.0f}' for r, _ in rs)} acknowledged "
            f"records/s (mean {rate:.0f}, x{rate / base:.2f} vs before), "
            f"{statistics.mean(c for _, c in rs):.1f} records/chunk"
        )


def sync_one(variant: str, writers: int, seconds: float) -> None:
    """One round in this process against the running store ($AWS_ENDPOINT_URL)."""
    if variant == "before":
        _load_remote_from(BEFORE)
    rate, per_chunk = _sync_round(writers, seconds, 1 if variant == "before" else int(variant))
    print(f"{rate} {per_chunk}")


_TOKEN = __import__("re").compile(rb"\|m([0-9]+)\|w([0-9]+)\|([0-9]+)\|t=([0-9.]+)\|")


def _scan_log(
    root: Path, pos: dict[str, int], seen: dict[bytes, float], skip: set[str], since: float = 0.0
) -> None:
    """Tokens of records newly in the local segment files (other than ``skip``'s), with
    their lag; records written before ``since`` (the observer's start) have none."""
    now = time.time()
    for seg in (root / "segments").glob("*.seg"):
        if seg.name[:8] in skip:
            continue
        at = pos.get(seg.name, 0)
        with open(seg, "rb") as fh:
            fh.seek(max(0, at - 80))
            data = fh.read()
        for m in _TOKEN.finditer(data):
            tok = m.group(0)
            if tok not in seen:
                seen[tok] = now - float(m.group(4)) if float(m.group(4)) >= since else -1.0
        pos[seg.name] = at + len(data) - min(at, 80)


def async_machine(path: str, url: str, name: int, writers: int, n: int, start: int) -> None:
    """One machine (a child process): ``writers`` threads writing ``n`` records each from
    ``start``, printing each acknowledged token; an observer notes when other machines'
    records reach this machine's local log, written to PATH.lags at the end."""
    f = chitta.open(path, remote=url, embedder=None)
    own = f"{f.instance_id:08x}"
    out_lock = threading.Lock()
    done = threading.Event()

    def work(k: int) -> None:
        for i in range(start, n):
            tok = f"|m{name}|w{k}|{i}|t={time.time():.6f}|"
            f.remember(tok)
            with out_lock:
                sys.stdout.write(f"ack {tok}\n")

    seen: dict[bytes, float] = {}

    def observe() -> None:
        pos: dict[str, int] = {}
        since = time.time()
        while not done.is_set():
            _scan_log(Path(path), pos, seen, {own}, since)
            time.sleep(0.02)

    obs = threading.Thread(target=observe, daemon=True)
    obs.start()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(writers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    sys.stdout.flush()
    time.sleep(float(os.environ.get("BENCH_LINGER", "8")))  # keep observing the others' tails
    done.set()
    obs.join()
    Path(path + ".lags").write_text("\n".join(f"{v:.4f}" for v in seen.values() if v >= 0))
    f.close()
    print("done", flush=True)


def async_lag(
    sw: Seaweed, machines: int = 3, writers: int = 4, n: int = 10_000, kills: int = 2
) -> None:
    """Machines as real processes, each its own directory; ``kills`` rounds of kill -9
    of one machine mid-run, restarted on the same directory (a new instance; the dead
    one's tail shipped by the restart). Afterwards every acknowledged record must be on
    every machine and every machine's replay the same."""
    import signal
    import subprocess

    d = Path(tempfile.mkdtemp())
    url = f"s3://bench/async-{time.time_ns()}"
    env = {**os.environ, **sw.env()}

    def launch(m: int, start: int) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                sys.executable,
                __file__,
                "async-machine",
                str(d / f"m{m}"),
                url,
                str(m),
                str(writers),
                str(n),
                str(start),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    acked: set[bytes] = set()
    t0 = time.monotonic()
    procs = {m: launch(m, 0) for m in range(machines)}
    for r in range(kills):  # kill -9 the last machine once it has written a share, restart it
        victim = machines - 1
        p = procs[victim]
        assert p.stdout is not None
        mine = 0
        while mine < (r + 1) * n * writers // (kills + 2):
            line = p.stdout.readline()
            if not line:
                break
            if line.startswith("ack "):
                acked.add(line.split()[1].encode())
                mine += 1
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        done_i = max(int(t.split(b"|")[3]) for t in acked if t.startswith(f"|m{victim}|".encode()))
        procs[victim] = launch(
            victim, done_i + 1
        )  # restart: go on after the last acknowledged index
    for p in procs.values():
        out, _ = p.communicate(timeout=1800)
        acked.update(
            line.split()[1].encode() for line in out.splitlines() if line.startswith("ack ")
        )
    wrote = time.monotonic() - t0
    lags = sorted(float(x) for m in range(machines) for x in (d / f"m{m}.lags").read_text().split())
    missing = {}
    for m in range(machines):
        with chitta.open(d / f"m{m}", remote=url, embedder=None) as f:
            f.remote.wait_shipped(60)
        seen: dict[bytes, float] = {}
        _scan_log(d / f"m{m}", {}, seen, set())
        missing[m] = len(acked - set(seen))
    replays = []
    for m in range(machines):
        with chitta.open(d / f"m{m}", embedder=None, read_only=True, load_checkpoint=False) as f:
            replays.append([(x.id, x.text) for x in f.memories()])
    print(
        f"async, {machines} processes x {writers} writers x {n} ({kills} kill -9 rounds), "
        f"{len(acked)} acknowledged in {wrote:.0f} s: visibility lag over {len(lags)} (record, other machine) "
        f"pairs p50 {statistics.median(lags):.3f} s, p99 {lags[int(len(lags) * 0.99)]:.3f} s, "
        f"max {lags[-1]:.3f} s; acknowledged missing per machine {missing}; "
        f"replays identical: {all(r == replays[0] for r in replays)} ({len(replays[0])} memories)"
    )


def bootstrap(sw: Seaweed, n: int = 100_000) -> None:
    d = Path(tempfile.mkdtemp())
    url = f"s3://bench/boot-{time.time_ns()}"
    with chitta.open(d / "a", remote=url, embedder=None) as a:
        for start in range(0, n, 10_000):
            a.remember_many(
                [f"memory {i} of the bootstrap benchmark" for i in range(start, start + 10_000)]
            )
        a.remote.publish_checkpoint()
        a.remote.wait_shipped(120)
    t = time.perf_counter()
    with chitta.open(d / "a", embedder=None) as f:
        assert len(f) == n
    local = time.perf_counter() - t
    from concurrent.futures import ThreadPoolExecutor

    from chitta.remote.store import ObjectStore
    from chitta.remote.url import parse_url

    store = ObjectStore(parse_url(url))
    t = time.perf_counter()
    keys = [k for k, _ in store.list("").keys]
    with ThreadPoolExecutor(8) as pool:  # the transfer alone: every object of the prefix, 8 at once
        moved = sum(len(g[0]) for g in pool.map(store.get, keys) if g is not None)
    transfer = time.perf_counter() - t
    print(f"transfer of {len(keys)} objects, {moved / 2**20:.0f} MiB: {transfer:.2f} s", flush=True)
    t = time.perf_counter()
    with chitta.open(d / "b", remote=url, embedder=None) as f:
        assert len(f) == n and f.checkpoint_loaded
    remote = time.perf_counter() - t
    size = sum(p.stat().st_size for p in (d / "b").rglob("*") if p.is_file())
    t = time.perf_counter()
    with chitta.open(d / "b", embedder=None) as f:
        pass
    local_b = time.perf_counter() - t
    print(
        f"bootstrap {n}: local open-from-checkpoint {local:.2f} s; from the bucket {remote:.2f} s "
        f"({size / 2**20:.0f} MiB fetched); transfer alone {transfer:.2f} s; target 2 x local + transfer = "
        f"{2 * local + transfer:.2f} s: {'met' if remote <= 2 * local + transfer else 'NOT met'}; "
        f"reopen of the bootstrapped copy {local_b:.2f} s"
    )


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "clients"
    if what == "sync-one":  # a child of `sync`: the store is the parent's
        sync_one(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
        return
    if what == "async-machine":  # a child of `async`
        a = sys.argv[2:]
        async_machine(a[0], a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]))
        return
    args = [float(a) if "." in a else int(a) for a in sys.argv[2:]]
    sw = Seaweed(Path(tempfile.mkdtemp()))
    sw.start()
    try:
        sw.make_bucket("bench")
        os.environ.update(sw.env())
        {"clients": clients, "sync": sync, "async": async_lag, "bootstrap": bootstrap}[what](
            sw, *args
        )
    finally:
        sw.stop()


if __name__ == "__main__":
    main()
