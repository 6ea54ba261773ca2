"""Issue 16, findings 5, 9 and 10 against a real ``chitta serve`` process: out of file
descriptors (EMFILE) costs one connection, not the daemon; a connection cap answers
one more with a refusal; a slow sender (slowloris) is cut off; 300 clients connecting
at once all get in; an oversized recall query is an InvalidArgument."""

from __future__ import annotations

import os
import resource
import signal
import socket
import threading
import time
from pathlib import Path

import pytest
from daemontools import DaemonProcess, raw_connect, read_reply, request

import chitta
from chitta.errors import ChittaIOError, InvalidArgument
from chitta.ops import checks


def _sock(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    return d / "d.sock"


def test_running_out_of_file_descriptors_refuses_connections_and_the_daemon_keeps_serving(
    tmp_path: Path,
) -> None:
    daemon = DaemonProcess(tmp_path / "field", _sock(tmp_path), extra=("--maintain-every", "0"))
    pid = daemon.info["pid"]
    held: list[socket.socket] = []
    try:
        with chitta.connect(daemon.sock, timeout=30) as r:
            mid = r.remember("before the descriptors ran out")
        used = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (used + 8, used + 8))
        refusals = 0
        for _ in range(24):  # far past the limit: each one beyond gets a refusal, none a hang
            s = raw_connect(daemon.sock)
            s.settimeout(0.5)
            held.append(s)
            try:
                reply = read_reply(s)
            except TimeoutError:
                continue  # accepted and served: it waits for a request
            assert reply is not None and "file descriptors" in reply["error"]["message"], reply
            refusals += 1
        assert refusals > 0
        assert daemon.proc.poll() is None  # still running
        for s in held[:10]:
            s.close()
        time.sleep(0.5)
        with chitta.connect(daemon.sock, timeout=30) as r:  # served again once descriptors are free
            assert r.get(mid).text == "before the descriptors ran out"
            r.remember("after")
            assert len(r) == 2
    finally:
        for s in held:
            s.close()
        daemon.close()
    assert daemon.proc.returncode == 0


def test_over_the_connection_cap_one_more_is_refused_and_the_rest_are_served(
    tmp_path: Path,
) -> None:
    daemon = DaemonProcess(
        tmp_path / "field",
        _sock(tmp_path),
        extra=("--max-connections", "4", "--maintain-every", "0"),
    )
    try:
        idle = [raw_connect(daemon.sock) for _ in range(4)]
        assert request(idle[0], 1, "__len__")["result"] == 0  # the four are being served
        extra = raw_connect(daemon.sock)
        reply = read_reply(extra)
        assert (
            reply is not None
            and reply["error"]["type"] == "ChittaIOError"
            and "cap" in reply["error"]["message"]
        )
        assert read_reply(extra) is None  # and closed
        extra.close()
        with pytest.raises(ChittaIOError, match="cap"):
            chitta.connect(daemon.sock, timeout=30)
        idle.pop().close()
        time.sleep(0.3)
        with chitta.connect(daemon.sock, timeout=30) as r:
            assert r.get(r.remember("a slot was free again")).text == "a slot was free again"
        for s in idle:
            assert request(s, 2, "__len__")["result"] == 1
            s.close()
    finally:
        daemon.close()


def test_a_slow_sender_is_cut_off_and_others_are_served_meanwhile(tmp_path: Path) -> None:
    daemon = DaemonProcess(
        tmp_path / "field", _sock(tmp_path), extra=("--frame-timeout", "1", "--maintain-every", "0")
    )
    try:
        slow = [raw_connect(daemon.sock) for _ in range(3)]
        for s in slow:
            s.sendall(b"\x00\x00")  # half a header, then nothing: slowloris
        t0 = time.monotonic()
        with chitta.connect(daemon.sock, timeout=30) as r:
            r.remember("served while three connections dawdle")
        for s in slow:
            s.settimeout(20)
            reply = read_reply(s)
            assert reply is not None and "did not arrive whole" in reply["error"]["message"]
            assert read_reply(s) is None  # closed
            s.close()
        assert time.monotonic() - t0 < 15
        idle = raw_connect(
            daemon.sock
        )  # between frames a connection may idle longer than the timeout
        time.sleep(1.5)
        assert request(idle, 1, "__len__")["result"] == 1
        idle.close()
    finally:
        daemon.close()


def test_three_hundred_clients_connecting_at_once_all_get_in(tmp_path: Path) -> None:
    n = 300
    daemon = DaemonProcess(
        tmp_path / "field",
        _sock(tmp_path),
        extra=("--max-connections", "1000", "--maintain-every", "0"),
    )
    start = threading.Barrier(n)
    errors: list[BaseException] = []
    handles: list[object] = []
    lock = threading.Lock()

    def client() -> None:
        start.wait()
        try:
            r = chitta.connect(daemon.sock, timeout=5)
        except BaseException as exc:  # noqa: BLE001  counted below
            with lock:
                errors.append(exc)
            return
        with lock:
            handles.append(r)

    try:
        threads = [threading.Thread(target=client) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, f"{len(errors)} of {n} connects failed, first: {errors[0]!r}"
        assert len(handles) == n
    finally:
        for r in handles:
            r.close()  # type: ignore[attr-defined]
        daemon.close()


def test_an_oversized_recall_query_is_an_invalid_argument_through_the_daemon(
    tmp_path: Path,
) -> None:
    daemon = DaemonProcess(tmp_path / "field", _sock(tmp_path), extra=("--maintain-every", "0"))
    try:
        with chitta.connect(daemon.sock, timeout=30) as r:
            r.remember("ninja builds")
            with pytest.raises(InvalidArgument, match="limit is"):
                r.recall("q" * (checks.MAX_QUERY_BYTES + 1))
            assert [h.text for h in r.recall("ninja", touch=False)] == ["ninja builds"]
    finally:
        daemon.close()
    assert signal.SIGTERM  # the daemon stopped cleanly above
