"""The memory-level C API (cf_connect ... cf_call) against a real ``chitta serve``.

``docs/example_host.cc`` is compiled with the system C++ compiler against the installed
header and library and run as a real host; Python's own client (``chitta.connect``) on
the same daemon is the oracle for what it wrote and what recall returns. ctypes, a
second independent C client, checks every bad argument comes back as a code and a text
and leaves the store unchanged, and that every daemon operation is reachable by cf_call.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemontools import DaemonProcess, child_env, chitta_command

import chitta
from chitta.errors import NotFound
from chitta.server import methods
from chitta.server.daemon import default_socket

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "example_host.cc"
CF_OK, CF_ENOTFOUND, CF_EINVAL, CF_EIO, CF_EUNAVAILABLE = 0, 1, 4, 5, 11
ENV = {"CHITTA_EMBEDDER": "hashing-v1-d256"}  # a real (hashing) embedder, no model load
QUERY = "where are invoices stored?"


class Lane(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("rank", ctypes.c_uint32)]


class HitStruct(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("score", ctypes.c_double),
        ("relevance", ctypes.c_double),
        ("text", ctypes.c_char_p),
        ("kind", ctypes.c_char_p),
        ("lanes", ctypes.POINTER(Lane)),
        ("n_lanes", ctypes.c_size_t),
    ]


class ConnectOptions(ctypes.Structure):
    _fields_ = [
        ("socket_path", ctypes.c_char_p),
        ("start", ctypes.c_int32),
        ("serve_command", ctypes.c_char_p),
        ("start_timeout_ms", ctypes.c_uint32),
        ("call_timeout_ms", ctypes.c_uint32),
    ]


def _lib() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(Path(chitta.get_lib_dir()) / "libchitta_field.so"))
    p, s, u64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64
    lib.cf_last_error.restype = s
    lib.cf_status_name.restype = s
    lib.cf_connect_options_init.argtypes = [ctypes.POINTER(ConnectOptions)]
    lib.cf_connect.argtypes = [s, ctypes.POINTER(ConnectOptions), ctypes.POINTER(p)]
    lib.cf_disconnect.argtypes = [p]
    lib.cf_call.argtypes = [p, s, s, ctypes.POINTER(p)]
    lib.cf_string_free.argtypes = [p]
    lib.cf_remember.argtypes = [p, s, s, ctypes.POINTER(u64)]
    lib.cf_recall.argtypes = [p, s, ctypes.c_uint32, s, ctypes.POINTER(p)]
    lib.cf_hits_count.argtypes = [p]
    lib.cf_hits_count.restype = ctypes.c_size_t
    lib.cf_hits_at.argtypes = [p, ctypes.c_size_t]
    lib.cf_hits_at.restype = ctypes.POINTER(HitStruct)
    lib.cf_hits_free.argtypes = [p]
    lib.cf_get.argtypes = [p, u64, ctypes.POINTER(p), ctypes.POINTER(p)]
    lib.cf_forget.argtypes = [p, u64]
    lib.cf_link.argtypes = [p, u64, u64, s, ctypes.c_double]
    return lib


class Client:
    """A cf_client_t driven through ctypes; each call returns (status, value)."""

    def __init__(self, lib: ctypes.CDLL, field: Path, sock: Path | None, **opts: object) -> None:
        self.lib = lib
        o = ConnectOptions()
        lib.cf_connect_options_init(ctypes.byref(o))
        if sock is not None:
            o.socket_path = str(sock).encode()
        for k, v in opts.items():
            setattr(o, k, v)
        self.handle = ctypes.c_void_p()
        self.status = lib.cf_connect(
            str(field).encode(), ctypes.byref(o), ctypes.byref(self.handle)
        )

    def error(self) -> str:
        return self.lib.cf_last_error().decode()

    def call(self, op: str, args: str | None = None) -> tuple[int, object]:
        out = ctypes.c_void_p()
        st = self.lib.cf_call(
            self.handle, op.encode(), None if args is None else args.encode(), ctypes.byref(out)
        )
        if st != CF_OK:
            return st, self.error()
        text = ctypes.string_at(out.value).decode()
        self.lib.cf_string_free(out)
        return st, json.loads(text)

    def remember(self, text: bytes, options: str | None = None) -> tuple[int, int]:
        mid = ctypes.c_uint64()
        st = self.lib.cf_remember(
            self.handle, text, None if options is None else options.encode(), ctypes.byref(mid)
        )
        return st, mid.value

    def recall(
        self, query: str, k: int, options: str | None = None
    ) -> tuple[int, list[dict[str, object]]]:
        out = ctypes.c_void_p()
        st = self.lib.cf_recall(
            self.handle,
            query.encode(),
            k,
            None if options is None else options.encode(),
            ctypes.byref(out),
        )
        if st != CF_OK:
            return st, []
        hits = []
        for i in range(self.lib.cf_hits_count(out)):
            h = self.lib.cf_hits_at(out, i).contents
            lanes = {h.lanes[j].name.decode(): h.lanes[j].rank for j in range(h.n_lanes)}
            hits.append(
                {
                    "id": h.id,
                    "score": h.score,
                    "relevance": h.relevance,
                    "text": h.text.decode(),
                    "kind": h.kind.decode(),
                    "lanes": lanes,
                }
            )
        assert not self.lib.cf_hits_at(out, self.lib.cf_hits_count(out))  # past the end: NULL
        self.lib.cf_hits_free(out)
        return st, hits

    def get(self, mid: int) -> tuple[int, str, dict[str, object]]:
        text, doc = ctypes.c_void_p(), ctypes.c_void_p()
        st = self.lib.cf_get(self.handle, mid, ctypes.byref(text), ctypes.byref(doc))
        if st != CF_OK:
            return st, self.error(), {}
        out = ctypes.string_at(text.value).decode(), json.loads(ctypes.string_at(doc.value))
        self.lib.cf_string_free(text)
        self.lib.cf_string_free(doc)
        return st, *out

    def close(self) -> None:
        self.lib.cf_disconnect(self.handle)


@pytest.fixture(scope="module")
def host_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = next(
        (c for c in (os.environ.get("CXX", ""), "c++", "g++", "clang++") if c and shutil.which(c)),
        None,
    )
    if compiler is None:
        pytest.skip("no C++ compiler found")
    out = tmp_path_factory.mktemp("host") / "example_host"
    lib = chitta.get_lib_dir()
    cmd = [
        compiler,
        "-std=c++17",
        "-O1",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-o",
        str(out),
        str(EXAMPLE),
        f"-I{chitta.get_include()}",
        f"-L{lib}",
        "-lchitta_field",
        f"-Wl,-rpath,{lib}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture()
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path / "field", tmp_path / "d.sock", env=child_env(**ENV))
    yield d
    d.close()


def test_example_host_writes_what_python_reads_and_recalls_what_python_recalls(
    host_exe: Path, daemon: DaemonProcess, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(host_exe), str(daemon.field), "--socket", str(daemon.sock)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    ids = [int(line.split()[1]) for line in lines if line.startswith("remembered ")]
    forgot = int(next(line for line in lines if line.startswith("forgot ")).split()[1])
    assert len(ids) == 3 and forgot == ids[1]
    assert any(i > 2**53 for i in ids)  # ids a double would round come through exact
    assert f"get forgotten: CF_ENOTFOUND (cf_get: NotFound: no memory with id {forgot})" in lines
    with chitta.connect(daemon.sock, timeout=30) as remote:
        assert sorted(remote.ids()) == sorted([ids[0], ids[2]])
        decision = remote.get(ids[0])
        assert decision.kind == "decision" and decision.tags == ("billing", "db")
        with pytest.raises(NotFound):
            remote.get(forgot)
        memory_line = next(line for line in lines if line.startswith("memory "))
        doc = json.loads(memory_line[len("memory ") :])
        assert (
            doc["id"] == str(ids[0])
            and doc["text"] == decision.text
            and doc["tags"] == ["billing", "db"]
        )
        stats = json.loads(
            next(line for line in lines if line.startswith("stats "))[len("stats ") :]
        )
        assert stats["memories"] == 3  # stats ran before the forget
        # The host's recall printed the same ranking Python's client gets for that state:
        # re-ask both, untouched, on the state now (the host's recall touched it before).
        lib = _lib()
        c = Client(lib, daemon.field, daemon.sock)
        assert c.status == CF_OK, c.error()
        st, hits = c.recall(QUERY, 3, '{"touch": false}')
        assert st == CF_OK, c.error()
        want = remote.recall(QUERY, k=3, touch=False)
        assert [h["id"] for h in hits] == [h.id for h in want]
        for got, ref in zip(hits, want, strict=True):
            assert got["score"] == pytest.approx(
                ref.score, rel=1e-6
            )  # recency moves with the clock
            assert (
                got["lanes"] == dict(ref.lanes)
                and got["text"] == ref.text
                and got["kind"] == ref.kind
            )
            assert (math.isnan(got["relevance"]) and ref.relevance is None) or got[
                "relevance"
            ] == pytest.approx(ref.relevance)
        c.close()
    with chitta.open(daemon.field, embedder=None, read_only=True) as f:
        assert f.core.graph.has_edge(ids[2], ids[0], "DerivedFrom")


def test_the_host_link_is_an_edge_python_sees(daemon: DaemonProcess) -> None:
    lib = _lib()
    c = Client(lib, daemon.field, daemon.sock)
    a, b = (
        c.remember(b"the cache sits in front of postgres")[1],
        c.remember(b"postgres holds the invoices")[1],
    )
    assert lib.cf_link(c.handle, a, b, b"DerivedFrom", 0.5) == CF_OK, c.error()
    assert lib.cf_link(c.handle, a, b, b"NoSuchEdge", 1.0) == CF_EINVAL
    assert "NoSuchEdge" in c.error() or "edge" in c.error()
    c.close()
    with chitta.open(daemon.field, embedder=None, read_only=True) as f:
        assert (b, "DerivedFrom", True, 0.5) in f.core.graph.neighbours(a)
        assert not f.core.graph.has_edge(a, b, "NoSuchEdge")


def test_start_on_demand_finds_the_default_socket_python_computes(
    host_exe: Path, tmp_path: Path
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    (tmp_path / "work" / "sub").mkdir(parents=True)
    env = child_env(**ENV, XDG_RUNTIME_DIR=str(runtime))
    rel = "./sub//field/"  # normalised as pathlib does: <cwd>/sub/field
    cwd = tmp_path / "work"
    done = subprocess.run(
        [str(host_exe), rel, "--start", "--serve-command", chitta_command()[0]],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env=env,
        check=False,
    )
    sock = Path(str(runtime)) / "chitta" / default_socket(cwd / "sub" / "field").name
    try:
        assert done.returncode == 0, done.stderr + done.stdout
        assert sock.is_socket()
        old = os.environ.get("XDG_RUNTIME_DIR")
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        try:
            assert default_socket(cwd / "sub" / "field") == sock  # the C side hashed the same path
        finally:
            if old is None:
                os.environ.pop("XDG_RUNTIME_DIR")
            else:
                os.environ["XDG_RUNTIME_DIR"] = old
        with chitta.connect(sock, timeout=30) as remote:
            assert len(remote.ids()) == 2
            assert Path(remote.info["path"]) == cwd / "sub" / "field"
    finally:
        _stop(sock)


def _stop(sock: Path) -> None:
    if not sock.exists():
        return
    with chitta.connect(sock, timeout=30) as remote:
        pid = int(remote.info["pid"])
    os.kill(pid, signal.SIGTERM)
    for _ in range(600):
        if not sock.exists():
            return
        time.sleep(0.05)


def test_no_daemon_is_unavailable_with_what_to_do(tmp_path: Path) -> None:
    lib = _lib()
    private = tmp_path / "s"
    private.mkdir(mode=0o700)
    c = Client(lib, tmp_path / "field", private / "none.sock")
    assert c.status == CF_EUNAVAILABLE
    assert "chitta --path FIELD serve" in c.error() and "options.start" in c.error()
    c = Client(
        lib,
        tmp_path / "field",
        private / "none.sock",
        start=1,
        serve_command=b"/nonexistent/chitta",
    )
    assert c.status == CF_EUNAVAILABLE and "serve_command" in c.error()
    assert not (tmp_path / "field").exists()  # nothing was created


def test_an_untrusted_socket_directory_is_refused(daemon: DaemonProcess, tmp_path: Path) -> None:
    lib = _lib()
    daemon.sock.parent.chmod(0o755)
    try:
        c = Client(lib, daemon.field, daemon.sock)
        assert c.status == CF_EIO and "chmod 700" in c.error()
    finally:
        daemon.sock.parent.chmod(0o700)


def test_bad_arguments_are_codes_and_change_nothing(daemon: DaemonProcess) -> None:
    lib = _lib()
    c = Client(lib, daemon.field, daemon.sock)
    assert c.status == CF_OK, c.error()
    st, mid = c.remember("naïve café ☕".encode(), '{"tags": ["x"], "kind": "decision"}')
    assert st == CF_OK, c.error()
    assert c.get(mid)[1] == "naïve café ☕"
    before = c.call("stats")[1]
    bad = [
        (lambda: c.remember(b"\xff\xfe not utf-8")[0], CF_EINVAL, "UTF-8"),
        (lambda: c.remember(b"x", '{"text": "y"}')[0], CF_EINVAL, "own argument"),
        (lambda: c.remember(b"x", "[1, 2]")[0], CF_EINVAL, "JSON object"),
        (lambda: c.remember(b"x", '{"tags": ')[0], CF_EINVAL, "at byte"),
        (lambda: c.remember(b"x", '{"colour": "red"}')[0], CF_EINVAL, "colour"),
        (lambda: c.remember(b"x", '{"confidence": 7}')[0], CF_EINVAL, "confidence"),
        (lambda: c.call("no_such_op")[0], CF_EINVAL, "unknown method"),
        (lambda: c.call("", "{}")[0], CF_EINVAL, "chitta operations"),
        (lambda: c.call("stats", "not json")[0], CF_EINVAL, "not valid JSON"),
        (lambda: c.recall("q", 3, '{"k": 2}')[0], CF_EINVAL, "own argument"),
        (lambda: c.get(12345)[0], CF_ENOTFOUND, "NotFound"),
        (lambda: lib.cf_forget(c.handle, 12345), CF_ENOTFOUND, "NotFound"),
        (lambda: lib.cf_link(c.handle, mid, mid + 1, None, float("nan")), CF_EINVAL, "finite"),
        (lambda: lib.cf_link(c.handle, mid, 12345, None, 1.0), CF_ENOTFOUND, "12345"),
        (
            lambda: lib.cf_call(None, b"stats", None, ctypes.byref(ctypes.c_void_p())),
            CF_EINVAL,
            "NULL",
        ),
        (lambda: lib.cf_call(c.handle, b"stats", None, None), CF_EINVAL, "NULL"),
        (lambda: lib.cf_remember(c.handle, None, None, None), CF_EINVAL, "NULL"),
        (lambda: lib.cf_recall(c.handle, b"q", 3, None, None), CF_EINVAL, "NULL"),
        (lambda: lib.cf_connect(None, None, ctypes.byref(ctypes.c_void_p())), CF_EINVAL, "NULL"),
        (lambda: lib.cf_connect(b"", None, ctypes.byref(ctypes.c_void_p())), CF_EINVAL, "empty"),
    ]
    for run, want, text in bad:
        assert run() == want, (text, c.error())
        assert text in c.error(), (text, c.error())
    assert c.call("stats")[1] == before  # nothing was written by any refused call
    assert lib.cf_hits_count(None) == 0 and not lib.cf_hits_at(None, 0)
    lib.cf_hits_free(None)
    lib.cf_disconnect(None)
    lib.cf_string_free(None)
    c.close()


def test_a_restarted_daemon_is_reconnected_by_the_next_call(tmp_path: Path) -> None:
    lib = _lib()
    field, sock = tmp_path / "field", tmp_path / "d.sock"
    first = DaemonProcess(field, sock, env=child_env(**ENV))
    c = Client(lib, field, sock)
    mid = c.remember(b"written before the restart")[1]
    first.kill()  # kill -9: the connection breaks mid-session
    first.close()
    st, text = c.call("stats")
    assert st == CF_EUNAVAILABLE, text
    second = DaemonProcess(field, sock, env=child_env(**ENV))
    try:
        st, doc = c.call("get", json.dumps({"id": str(mid)}))
        assert st == CF_OK and doc["text"] == "written before the restart"  # type: ignore[index]
    finally:
        c.close()
        second.close()


def test_every_daemon_operation_is_reachable_through_cf_call(daemon: DaemonProcess) -> None:
    probe = "zz_not_an_argument"
    lib = _lib()
    c = Client(lib, daemon.field, daemon.sock)
    names = [
        n
        for n, m in methods.table().items()
        if "daemon" in m.doors and n not in {"__len__", "__contains__"}
    ]
    assert {"remember", "recall", "kg_add", "stats"} <= set(names)
    for name in names:
        st, text = c.call(name, json.dumps({probe: 1}))
        assert st == CF_EINVAL, (name, text)
        assert probe in str(text) or "required" in str(text), (name, text)
    assert c.call("stats")[1]["memories"] == 0  # type: ignore[index]
    c.close()
