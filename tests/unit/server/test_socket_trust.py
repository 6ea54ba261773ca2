"""chitta.connect(), the daemon and the MCP forwarder trust a socket only in a 0700
directory of this user (not a symlink), owned by this user, answered by this user
(SO_PEERCRED): against a real second local user who plants directories and listens."""

from __future__ import annotations

import os
import select
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from otheruser import other_user

import chitta
from chitta.mcp import forward as mcp_forward
from chitta.server.daemon import Daemon, default_socket
from chitta.server.sockets import UntrustedSocket, check_dir

# Runs as the other user: listen on argv's socket (creating its directory 0755 when
# asked), say "ready", count connections and bytes received until stdin closes.
LISTENER = r"""
import os, select, socket, sys
path, make_dir, fd = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
if fd >= 0:
    s = socket.socket(fileno=fd)
else:
    if make_dir:
        os.mkdir(os.path.dirname(path), 0o755)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o777)
s.listen(8)
print("ready", flush=True)
conns, got = [], 0
while True:
    r, _, _ = select.select([s, sys.stdin, *conns], [], [])
    if sys.stdin in r:
        break
    if s in r:
        c, _ = s.accept()
        conns.append(c)
        try:
            c.sendall(b"\x00\x00\x00\x0c\x82\xa2id\x01\xa6result\x00")  # a forged reply
        except OSError:
            pass
    for c in [c for c in conns if c in r]:
        try:
            data = c.recv(65536)
        except OSError:
            data = b""
        got += len(data)
        if not data:
            conns.remove(c)
print(len(conns), got, flush=True)
"""


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A runtime base like /tmp (mode 1777) that both users can write, as $XDG_RUNTIME_DIR."""
    base = Path(tempfile.mkdtemp(prefix="chitta-trust-", dir="/tmp"))
    base.chmod(0o1777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    yield base
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def _start(uid_gid: tuple[int, int], sock: Path, make_dir: bool, fd: int = -1):  # type: ignore[no-untyped-def]
    import subprocess

    from otheruser import python_for_others

    proc = subprocess.Popen(
        [python_for_others(), "-I", "-c", LISTENER, str(sock), "1" if make_dir else "0", str(fd)],
        user=uid_gid[0],
        group=uid_gid[1],
        extra_groups=[],
        cwd="/",
        pass_fds=(fd,) if fd >= 0 else (),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    r, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline() if r else b""
    if line.strip() != b"ready":
        proc.kill()
        raise AssertionError(
            f"the other user's listener did not start: {proc.stderr.read() if proc.stderr else b''!r}"
        )
    return proc


def _stop(proc) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    out, err = proc.communicate(b"", timeout=30)
    assert proc.returncode == 0, err
    conns, got = out.split()[-2:]
    return int(conns), int(got)


def test_a_directory_planted_by_another_user_is_refused(tmp_path: Path, runtime: Path) -> None:
    ids = other_user()
    field = tmp_path / "field"
    sock = default_socket(field)
    assert sock.parent == runtime / "chitta"
    proc = _start(ids, sock, make_dir=True)
    try:
        assert os.lstat(sock.parent).st_uid == ids[0]
        with pytest.raises(UntrustedSocket, match=f"belongs to uid {ids[0]}"):
            chitta.connect(path=field, timeout=5)
        with pytest.raises(UntrustedSocket):
            mcp_forward.connect(sock)
        with chitta.open(field, embedder=None) as f, pytest.raises(UntrustedSocket):
            Daemon(f, sock).bind()  # the daemon will not put its socket there either
    finally:
        conns, got = _stop(proc)
    assert (conns, got) == (0, 0)  # the attacker never even saw a connection


def test_a_listener_of_another_user_behind_our_own_socket_file_is_refused(
    tmp_path: Path, runtime: Path
) -> None:
    ids = other_user()
    d = runtime / "chitta"
    d.mkdir(mode=0o700)
    sock = d / "x.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sock))  # our file, our directory: only SO_PEERCRED can tell
    proc = _start(ids, sock, make_dir=False, fd=s.fileno())
    s.close()
    try:
        with pytest.raises(UntrustedSocket, match=f"runs as uid {ids[0]}"):
            chitta.connect(sock, timeout=5)
        with pytest.raises(UntrustedSocket, match=f"runs as uid {ids[0]}"):
            mcp_forward.connect(sock)
    finally:
        _conns, got = _stop(proc)
    assert got == 0  # nothing was sent to it: the check comes before the first request


def test_a_symlinked_directory_planted_by_another_user_is_refused(
    tmp_path: Path, runtime: Path
) -> None:
    ids = other_user()
    field = tmp_path / "field"
    sock = default_socket(field)
    real = tmp_path / "real"
    real.mkdir(mode=0o700)  # ours, 0700, with a live socket in it: only the symlink is wrong
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(real / sock.name))
    listener.listen(8)
    import subprocess

    from otheruser import python_for_others

    subprocess.run(
        [
            python_for_others(),
            "-I",
            "-c",
            f"import os; os.symlink({str(real)!r}, {str(sock.parent)!r})",
        ],
        user=ids[0],
        group=ids[1],
        extra_groups=[],
        cwd="/",
        check=True,
        timeout=30,
    )
    try:
        assert stat.S_ISLNK(os.lstat(sock.parent).st_mode)
        with pytest.raises(UntrustedSocket, match="symlink"):
            chitta.connect(path=field, timeout=5)
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()  # connect() never reached the socket
    finally:
        listener.close()


def test_own_directories_that_are_open_or_symlinked_are_refused(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    with pytest.raises(UntrustedSocket, match="chmod 700"):
        check_dir(loose)
    with pytest.raises(UntrustedSocket, match="chmod 700"):
        chitta.connect(loose / "d.sock", timeout=5)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(private)
    with pytest.raises(UntrustedSocket, match="symlink"):
        chitta.connect(tmp_path / "link" / "d.sock", timeout=5)
    (private / "d.sock").write_text("not a socket")
    with pytest.raises(UntrustedSocket, match="not a socket"):
        chitta.connect(private / "d.sock", timeout=5)
