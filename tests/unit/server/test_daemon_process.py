"""``chitta serve`` as a real process: real sockets, real signals, chitta.connect()."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from daemontools import DaemonProcess, child_env, raw_connect, read_reply, request

import chitta
from chitta.server import protocol


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(tmp_path / "field", tmp_path / "run" / "d.sock")
    try:
        yield proc
    finally:
        proc.close()


def test_remote_field_answers_with_field_types_and_errors(daemon: DaemonProcess) -> None:
    with chitta.connect(daemon.sock) as remote:
        assert remote.path == daemon.field and remote.instance_id == int(daemon.info["instance_id"])
        a = remote.remember(
            "deploys need the VPN", kind="decision", tags=["ops"], embedding=np.ones(8)
        )
        b = remote.remember("the VPN is wireguard", embedding=np.full(8, 0.5, np.float32))
        remote.link(a, b, "Supports")
        memory = remote.get(a)
        assert isinstance(memory, chitta.Memory) and memory.tags == ("ops",)
        assert isinstance(memory.embedding, np.ndarray) and memory.embedding.shape == (8,)
        hits = remote.recall("VPN", k=5)
        assert {h.id for h in hits} == {a, b} and all(
            isinstance(h, chitta.recall.hit.Hit) for h in hits
        )
        assert isinstance(remote.stats(), chitta.FieldStats) and len(remote) == 2 and a in remote
        assert isinstance(remote.remember_triplet("ci", "runs on", "2 cores"), tuple)
        with pytest.raises(chitta.NotFound):
            remote.get(12345)
        with pytest.raises(chitta.InvalidArgument):
            remote.remember("   ")
        with pytest.raises(chitta.InvalidArgument):
            remote.link(a, b, "Loves")
        with pytest.raises(TypeError):
            remote.remember("x", colour="red")  # type: ignore[call-arg]
        memory = remote.get(a)  # touched by the recall since
    with chitta.open(daemon.field, read_only=True) as local:
        assert local.get(a) == memory


def test_socket_is_private(daemon: DaemonProcess) -> None:
    assert stat.S_IMODE(daemon.sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(daemon.sock.parent.stat().st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another uid")
def test_peer_of_another_uid_is_refused(tmp_path: Path) -> None:
    public = Path(tempfile.mkdtemp(prefix="chitta-peer-", dir="/tmp"))
    os.chmod(public, 0o755)
    daemon = DaemonProcess(tmp_path / "field", public / "run" / "d.sock")
    try:
        os.chmod(
            daemon.sock.parent, 0o755
        )  # let the other uid reach the socket: SO_PEERCRED must stop it
        os.chmod(daemon.sock, 0o666)
        _connect_as_nobody(daemon)
        assert daemon.proc.poll() is None
    finally:
        daemon.close()
        shutil.rmtree(public)


def _connect_as_nobody(daemon: DaemonProcess) -> None:
    code = (
        "import os, socket, sys; os.setuid(65534); s = socket.socket(socket.AF_UNIX); s.settimeout(30);"
        f"s.connect({str(daemon.sock)!r});"
        "data = s.recv(4096);"
        "print('ChittaIOError' in data.decode('latin-1'), s.recv(10) == b'')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=60,
        check=False,
        env=child_env(),
    )
    assert out.stdout.split() == ["True", "True"], out.stderr


def test_concurrent_clients_all_land(daemon: DaemonProcess) -> None:
    n_clients, per_client = 8, 20
    results: dict[int, list[int]] = {}
    failures: list[BaseException] = []

    def work(c: int) -> None:
        try:
            with chitta.connect(daemon.sock) as remote:
                results[c] = [remote.remember(f"client {c} note {i}") for i in range(per_client)]
                assert all(
                    remote.get(mid).text == f"client {c} note {i}"
                    for i, mid in enumerate(results[c])
                )
        except BaseException as exc:  # noqa: BLE001  reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(c,)) for c in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    ids = [mid for c in sorted(results) for mid in results[c]]
    assert len(set(ids)) == n_clients * per_client
    with chitta.connect(daemon.sock) as remote:
        assert len(remote) == n_clients * per_client


def test_client_killed_mid_request_leaves_others_served(daemon: DaemonProcess) -> None:
    # One child sends half a frame, another a whole request it never reads; both are SIGKILLed.
    half = "import socket,time; s=socket.socket(socket.AF_UNIX); s.connect(%r); s.sendall(b'\\x00\\x00\\x10\\x00abc'); print('go', flush=True); time.sleep(60)"
    whole_req = protocol.frame(
        protocol.pack({"id": 1, "method": "remember_many", "params": {"items": ["x"] * 2000}})
    )
    whole = "import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.connect(%r); s.sendall(sys.stdin.buffer.read()); print('go', flush=True); time.sleep(60)"
    kids = []
    for code, stdin in ((half, b""), (whole, whole_req)):
        p = subprocess.Popen(
            [sys.executable, "-c", code % str(daemon.sock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd="/",
            env=child_env(),
        )
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(stdin)
        p.stdin.close()
        assert p.stdout.readline() == b"go\n"
        kids.append(p)
    for p in kids:
        p.kill()
        p.wait()
        assert p.stdout is not None
        p.stdout.close()
    with chitta.connect(daemon.sock) as remote:
        mid = remote.remember("still serving")
        assert remote.get(mid).text == "still serving"
    assert daemon.proc.poll() is None


def test_sigkill_keeps_acknowledged_writes(daemon: DaemonProcess) -> None:
    with chitta.connect(daemon.sock) as remote:
        acked = [remote.remember(f"note {i}") for i in range(50)]
        acked += remote.remember_many([f"batch {i}" for i in range(20)])
    daemon.kill()
    with chitta.open(daemon.field, read_only=True) as local:
        assert set(acked) <= set(local.ids())


def test_sigterm_flushes_everything_and_removes_the_socket(tmp_path: Path) -> None:
    proc = DaemonProcess(tmp_path / "field", tmp_path / "run" / "d.sock", durability="buffered")
    try:
        with chitta.connect(proc.sock) as remote:
            acked = [remote.remember(f"buffered {i}") for i in range(30)]
        assert proc.signal(signal.SIGTERM) == 0
        assert not proc.sock.exists()
    finally:
        proc.close()
    with chitta.open(tmp_path / "field", read_only=True) as local:
        assert set(acked) == set(local.ids())


def test_oversized_frame_closes_only_that_connection(daemon: DaemonProcess) -> None:
    other = raw_connect(daemon.sock)
    bad = raw_connect(daemon.sock)
    try:
        bad.sendall(protocol.HEADER.pack(protocol.MAX_FRAME + 1))
        reply = read_reply(bad)
        assert reply["id"] is None and reply["error"]["type"] == "ProtocolError"
        assert read_reply(bad) is None  # closed by the daemon
        assert request(other, 7, "__len__")["result"] == 0
    finally:
        other.close()
        bad.close()


@pytest.mark.parametrize(
    "body",
    [
        b"\xc1\xc1",
        protocol.pack([1, 2]),
        protocol.pack({"method": "stats"}),
        protocol.pack({"id": 3, "method": "close"}),
        protocol.pack({"id": 4, "method": "get", "params": {"id": 1, "bogus": 2}}),
        b"",
    ],
    ids=["not-msgpack", "not-a-map", "no-id", "unknown-method", "unknown-param", "empty"],
)
def test_malformed_frame_gets_an_error_and_the_connection_stays_usable(
    daemon: DaemonProcess, body: bytes
) -> None:
    s = raw_connect(daemon.sock)
    try:
        s.sendall(protocol.HEADER.pack(len(body)) + body)
        reply = read_reply(s)
        assert reply["error"]["type"] in ("ProtocolError", "InvalidArgument")
        assert request(s, 9, "__len__") == {"id": 9, "result": 0}
    finally:
        s.close()


def test_second_daemon_on_the_same_socket_is_refused(daemon: DaemonProcess, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="already listens"):
        DaemonProcess(tmp_path / "field", daemon.sock)
    assert daemon.sock.exists()


def test_connect_without_a_daemon_is_an_io_error(tmp_path: Path) -> None:
    with pytest.raises(chitta.errors.ChittaIOError):
        chitta.connect(tmp_path / "nobody.sock")
