"""The daemon's one-thread I/O loop (chitta/server/io_loop.py) against a real ``chitta serve``:
requests sent back to back in one write (and one cut across writes) are each answered,
in order; a reader that stops reading a large reply is cut off while others are served;
a remember is found by the very next recall although its sparse code comes later from
the background coder (the daemon defers every code, chitta/field/deferred_codes.py), and
the code it gets is the encoder's top features (brute force in float64)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import numpy as np
from daemontools import DaemonProcess, child_env, raw_connect, read_reply

import chitta
from chitta.server import protocol


def _sock(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    return d / "d.sock"


def _frame(rid: int, method: str, **params: object) -> bytes:
    return protocol.frame(protocol.pack({"id": rid, "method": method, "params": params}))


def test_requests_sent_back_to_back_are_each_answered_in_order(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path / "field", _sock(tmp_path), extra=("--maintain-every", "0"))
    try:
        s = raw_connect(daemon.sock)
        texts = [f"pipelined note {i}" for i in range(20)]
        s.sendall(b"".join(_frame(i + 1, "remember", text=t) for i, t in enumerate(texts)))
        replies = [read_reply(s) for _ in texts]
        assert [r["id"] for r in replies] == list(range(1, 21))
        ids = [r["result"] for r in replies]
        assert ids == sorted(ids) and len(set(ids)) == 20  # applied in the order sent
        # one frame cut in three writes, a second one glued to its tail
        data = _frame(100, "get", id=ids[3]) + _frame(101, "__len__")
        for part in (data[:3], data[3:9], data[9:]):
            s.sendall(part)
            time.sleep(0.05)
        first, second = read_reply(s), read_reply(s)
        assert first["id"] == 100 and first["result"].text == texts[3]
        assert second == {"id": 101, "result": 20}
        s.close()
    finally:
        daemon.close()
    assert daemon.proc.returncode == 0


def test_a_reader_that_stops_reading_is_cut_off_and_others_are_served(tmp_path: Path) -> None:
    daemon = DaemonProcess(
        tmp_path / "field", _sock(tmp_path), extra=("--frame-timeout", "1", "--maintain-every", "0")
    )
    try:
        with chitta.connect(daemon.sock, timeout=60) as r:
            r.remember_many([f"{i} " + "x" * 8000 for i in range(300)])  # ~2.4 MB in all
        stuck = raw_connect(daemon.sock)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.sendall(_frame(1, "memories"))  # a reply of megabytes, never read
        time.sleep(0.5)
        with chitta.connect(daemon.sock, timeout=30) as r:  # the loop serves others meanwhile
            assert len(r) == 300
        time.sleep(3.0)  # past the timeout: the daemon gave up on the stuck reader
        got = b""
        stuck.settimeout(10)
        try:
            while chunk := stuck.recv(1 << 20):
                got += chunk
        except ConnectionResetError:
            pass
        (size,) = protocol.HEADER.unpack(got[:4])
        assert size > 2_000_000 and len(got) < size + 4  # cut off before the end
        stuck.close()
        with chitta.connect(daemon.sock, timeout=30) as r:
            assert len(r) == 300
    finally:
        daemon.close()
    assert daemon.proc.returncode == 0


def test_a_remember_is_recalled_at_once_and_coded_in_the_background(tmp_path: Path) -> None:
    daemon = DaemonProcess(
        tmp_path / "field",
        _sock(tmp_path),
        env=child_env(CHITTA_EMBEDDER="hashing"),
        extra=("--maintain-every", "0"),
    )
    texts = [f"zebrafish{i} cache entry {i} on the build farm" for i in range(40)]
    try:
        with chitta.connect(daemon.sock, timeout=60) as r:
            for i, text in enumerate(texts):  # read your writes: the keyword lane has it now
                mid = r.remember(text)
                hits = r.recall(f"zebrafish{i}", k=3, touch=False)
                assert hits and hits[0].id == mid, (i, hits)
            r.wait_embedded()  # the background coder logged every code
            hits = r.recall(texts[7], k=5, touch=False, lanes=["posting"])  # the codes' lane
            assert texts[7] in [h.text for h in hits], hits
    finally:
        daemon.close()
    assert daemon.proc.returncode == 0
    # the oracle: each code is the top of the encoder's projections, brute force in float64
    with chitta.open(tmp_path / "field", read_only=True, embedder="hashing") as served:
        core = served.core
        encoder = core.encoder_organ.encoder
        by_text = {m.text: m.id for m in served.memories()}
        for text in texts:
            mid = by_text[text]
            assert core.index.code_version(mid) is not None, text
            chosen = np.array(core.index.code_features(mid), np.int64)
            _, vec = core.memories.vectors_of([mid])
            x = vec[0].astype(np.float64)
            x /= np.linalg.norm(x)
            score = encoder.atoms.astype(np.float64) @ x - encoder.thresholds
            rest = np.setdiff1d(np.arange(len(score)), chosen)
            assert len(chosen) == encoder.active
            assert score[chosen].min() >= score[rest].max() - 1e-5, text
