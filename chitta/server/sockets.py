"""Unix sockets chitta trusts: one set of checks for the daemon, the MCP host and
forwarder, and ``chitta.connect()``.

A socket is trusted only when its directory is a real directory (not a
symlink, checked with ``lstat``) owned by this user with no permission for
group or others (0700), the socket file is a socket owned by this user, and
the process at the other end runs as this user (``SO_PEERCRED``; where that
is missing, the private directory is the guard). Anything else is refused
with a :class:`~chitta.errors.ChittaIOError` saying what to fix. Standard
library only: the MCP forwarder imports this before anything heavy.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import struct
import time
from pathlib import Path

from chitta.errors import ChittaIOError

_PEERCRED = struct.Struct("3i")  # pid, uid, gid
#: waits between connect attempts refused with EAGAIN (the listen backlog was full)
_RETRY_S = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1)


class UntrustedSocket(ChittaIOError):
    """A socket (or its directory) belongs to another user, is reachable by others,
    or is answered by a process of another user: chitta will not talk to it."""


def _check_dir_stat(directory: Path, st: os.stat_result) -> None:
    uid = os.getuid()
    if stat.S_ISLNK(st.st_mode):
        raise UntrustedSocket(
            f"{directory} is a symlink; a socket directory must be a real directory of yours "
            f"(remove it, or choose another socket path)"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise UntrustedSocket(
            f"{directory} is not a directory; remove it or choose another socket path"
        )
    if st.st_uid != uid:
        raise UntrustedSocket(
            f"{directory} belongs to uid {st.st_uid}, not to you (uid {uid}): another user may have "
            f"planted it; remove it (or choose another socket path) and start the daemon again"
        )
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise UntrustedSocket(
            f"{directory} has mode {stat.S_IMODE(st.st_mode):04o}; a socket directory must be 0700 "
            f"(run: chmod 700 {directory})"
        )


def check_dir(directory: str | os.PathLike[str]) -> None:
    """UntrustedSocket unless ``directory`` is a real directory of this user, mode 0700."""
    path = Path(directory)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise ChittaIOError(f"{path} does not exist: no chitta daemon listens there") from None
    except OSError as exc:
        raise ChittaIOError(f"cannot inspect {path}: {exc.strerror or exc}") from exc
    _check_dir_stat(path, st)


def private_dir(directory: str | os.PathLike[str]) -> None:
    """The directory a server puts its socket in: created 0700 if missing, then checked
    as :func:`check_dir` (a directory of another user, a symlink, 0755: refused)."""
    path = Path(directory)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ChittaIOError(f"cannot create {path}: {exc.strerror or exc}") from exc
    check_dir(path)


def check_socket_file(path: str | os.PathLike[str]) -> None:
    """UntrustedSocket unless ``path`` is a socket (not a symlink) owned by this user in a
    trusted directory; ChittaIOError when there is nothing there."""
    p = Path(path)
    check_dir(p.parent)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        raise ChittaIOError(
            f"no chitta daemon listens on {p} (no socket there); start one with `chitta serve`"
        ) from None
    if not stat.S_ISSOCK(st.st_mode):
        raise UntrustedSocket(f"{p} is not a socket; remove it or choose another socket path")
    if st.st_uid != os.getuid():
        raise UntrustedSocket(
            f"{p} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}); "
            f"remove it and start the daemon again"
        )


def peer_cred(sock: socket.socket) -> tuple[int, int, int] | None:
    """(pid, uid, gid) of a connected Unix socket's peer; None where SO_PEERCRED is missing."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    pid, uid, gid = _PEERCRED.unpack(
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    )
    return pid, uid, gid


def check_peer(sock: socket.socket, uid: int | None = None) -> None:
    """UntrustedSocket unless the peer runs as ``uid`` (default: this process's uid).
    Without SO_PEERCRED (not Linux) the 0600 socket in a 0700 directory is the guard."""
    cred = peer_cred(sock)
    want = os.getuid() if uid is None else uid
    if cred is not None and cred[1] != want:
        raise UntrustedSocket(
            f"refused: the peer (pid {cred[0]}) runs as uid {cred[1]}, not {want}"
        )


def connect_unix(path: str | os.PathLike[str], timeout: float | None) -> socket.socket:
    """A connected socket to ``path`` after every check above (the peer last). A full
    listen backlog (EAGAIN) is retried until ``timeout`` (None: 10 s) runs out.
    Raises UntrustedSocket or ChittaIOError; connection errors keep their errno."""
    check_socket_file(path)
    deadline = time.monotonic() + (10.0 if timeout is None else timeout)
    attempt = 0
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(os.fspath(path))
        except OSError as exc:
            sock.close()
            left = deadline - time.monotonic()
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK) and left > 0:
                time.sleep(min(_RETRY_S[min(attempt, len(_RETRY_S) - 1)], left))
                attempt += 1
                continue
            raise
        try:
            check_peer(sock)
        except BaseException:
            sock.close()
            raise
        return sock


__all__ = [
    "UntrustedSocket",
    "check_dir",
    "check_peer",
    "check_socket_file",
    "connect_unix",
    "peer_cred",
    "private_dir",
]
