"""``chitta serve``: one process owning one field, serving it on a Unix socket.

Framing and methods: docs/DAEMON.md and :mod:`chitta.server.protocol`. One thread
per connection; calls into the field run one at a time (a lock), reads first
refresh the view of other writers. A peer of another uid is refused
(``SO_PEERCRED``); the socket is created mode 0600 in a 0700 directory. A
malformed frame gets an error reply on that connection only; a frame over
the size limit gets an error reply and that connection is closed. SIGTERM
(or SIGINT) stops accepting, lets requests in flight finish, closes the
field (everything flushed) and removes the socket.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from chitta._version import __version__
from chitta.checkpoint import CheckpointPolicy
from chitta.errors import ChittaError, ChittaIOError, InvalidArgument
from chitta.field import Field
from chitta.server import methods, protocol
from chitta.server.maintenance import Maintainer
from chitta.server.protocol import HEADER, ProtocolError
from chitta.server.sockets import private_dir

_PEERCRED = struct.Struct("3i")  # pid, uid, gid
ACCEPT_POLL_S = 0.2
MAX_SOCKET_PATH = 107  # sun_path minus the NUL


def default_socket(field_path: str | os.PathLike[str]) -> Path:
    """Where the daemon of a field listens unless told: ``$XDG_RUNTIME_DIR/chitta/<hash>.sock``,
    else ``/tmp/chitta-<uid>/<hash>.sock``; ``<hash>``: 16 hex digits of SHA-256 of the
    field's absolute path (short, whatever the field path's length)."""
    digest = hashlib.sha256(str(Path(field_path).expanduser().absolute()).encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chitta" if runtime else Path(f"/tmp/chitta-{os.getuid()}")
    return base / f"{digest}.sock"


def _recv_exact(conn: socket.socket, n: int) -> bytes | None:
    """n bytes, or None at a clean end of stream before the first byte."""
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            if buf:
                raise ConnectionError("peer closed the connection mid-frame")
            return None
        buf += chunk
    return bytes(buf)


class Daemon:
    """Serves one open :class:`Field` on a Unix socket until :meth:`shutdown`."""

    def __init__(
        self,
        field: Field,
        socket_path: str | os.PathLike[str],
        *,
        max_frame: int = protocol.MAX_FRAME,
        maintain_every: float | None = None,
        checkpoint_policy: CheckpointPolicy | None = None,
    ) -> None:
        self.field = field
        self.socket_path = Path(socket_path).absolute()
        if len(os.fsencode(str(self.socket_path))) > MAX_SOCKET_PATH:
            raise InvalidArgument(f"socket path is longer than {MAX_SOCKET_PATH} bytes: {self.socket_path}")
        self.max_frame = max_frame
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._conns_lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.requests = 0
        if maintain_every is not None and not maintain_every > 0:
            raise InvalidArgument(f"maintain_every must be > 0 seconds or None, got {maintain_every!r}")
        self.maintainer = (
            None if maintain_every is None
            else Maintainer(field, self._lock, maintain_every, checkpoint_policy or CheckpointPolicy())
        )

    # ---- lifecycle ------------------------------------------------------------------------
    def bind(self) -> None:
        private_dir(self.socket_path.parent)
        if self.socket_path.exists() or self.socket_path.is_symlink():
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(self.socket_path))
            except OSError:
                self.socket_path.unlink()  # stale: nobody listens
            else:
                raise ChittaIOError(f"a daemon already listens on {self.socket_path}")
            finally:
                probe.close()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(str(self.socket_path))
        finally:
            os.umask(old)
        os.chmod(self.socket_path, 0o600)
        listener.listen(128)
        listener.settimeout(ACCEPT_POLL_S)
        self._listener = listener

    def serve_forever(self) -> None:
        """Accept until :meth:`shutdown` (or SIGTERM/SIGINT when run in the main thread)."""
        if self._listener is None:
            self.bind()
        assert self._listener is not None
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)
        if self.maintainer is not None:
            self.maintainer.start()
        try:
            while not self._stop.is_set():
                try:
                    conn, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if self._stop.is_set():
                        break
                    raise
                conn.settimeout(None)
                thread = threading.Thread(target=self._serve_conn, args=(conn,), daemon=True)
                with self._conns_lock:
                    self._conns.add(conn)
                    self._threads.add(thread)
                thread.start()
        finally:
            self._close_all()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._stop.set()

    def shutdown(self) -> None:
        self._stop.set()

    def _close_all(self) -> None:
        if self._listener is not None:
            self._listener.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        with self._conns_lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:  # no new requests; one in flight still gets its reply
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RD)
        for thread in threads:
            thread.join(timeout=30)
        if self.maintainer is not None:
            self.maintainer.stop()
        with self._lock:
            self.field.close()  # flushes what is buffered

    # ---- one connection ------------------------------------------------------------------
    def _peer_ok(self, conn: socket.socket) -> bool:
        if not hasattr(socket, "SO_PEERCRED"):
            return True  # not Linux: the 0600 socket in a 0700 directory is the guard
        _pid, uid, _gid = _PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
        return bool(uid == os.getuid())

    def _serve_conn(self, conn: socket.socket) -> None:
        try:
            if not self._peer_ok(conn):
                self._send(conn, None, error=ChittaIOError("refused: the peer runs as another user"))
                return
            while not self._stop.is_set():
                header = _recv_exact(conn, HEADER.size)
                if header is None:
                    return
                (size,) = HEADER.unpack(header)
                if size > self.max_frame:
                    self._send(conn, None, error=ProtocolError(
                        f"frame of {size} bytes exceeds the limit of {self.max_frame}; closing this connection"))
                    return
                body = _recv_exact(conn, size) if size else b""
                if body is None:
                    return
                self._send(conn, *self._answer(body))
        except OSError:
            pass  # the peer went away (killed mid-request, reset): only this connection ends
        finally:
            with self._conns_lock:
                self._conns.discard(conn)
                self._threads.discard(threading.current_thread())
            conn.close()

    def _answer(self, body: bytes) -> tuple[Any, Any, BaseException | None]:
        rid: Any = None
        try:
            request = protocol.unpack(body)
            if not isinstance(request, dict):
                raise ProtocolError("a request is a map with id, method and params")
            rid = request.get("id")
            if not isinstance(rid, int) or isinstance(rid, bool):
                rid = None
                raise ProtocolError("a request needs an integer id")
            if request.get("method") == "_info":
                return rid, self.info(), None
            method, params = methods.check_call(request.get("method"), request.get("params"))
            with self._lock:
                if method.reads:
                    self.field.refresh()
                result = method.invoke(self.field, params)
                if isinstance(result, Iterator):
                    result = list(result)
            self.requests += 1
            return rid, result, None
        except ChittaError as exc:
            return rid, None, exc
        except Exception as exc:  # noqa: BLE001  a bug must not take the daemon (or other clients) down
            print(f"chitta serve: internal error: {exc!r}", file=sys.stderr)
            return rid, None, ChittaError(f"internal error in the daemon: {type(exc).__name__}: {exc}")

    def _send(self, conn: socket.socket, rid: Any, result: Any = None, error: BaseException | None = None) -> None:
        if error is None:
            try:
                body = protocol.pack({"id": rid, "result": result})
            except ChittaError as exc:
                error = exc
        if error is not None:
            body = protocol.pack({"id": rid, "error": protocol.error_body(error)})
        if len(body) > self.max_frame:
            body = protocol.pack({"id": rid, "error": protocol.error_body(
                ProtocolError(f"the reply is {len(body)} bytes, over the frame limit; ask for less"))})
        conn.sendall(HEADER.pack(len(body)) + body)

    def info(self) -> dict[str, Any]:
        return {
            "protocol": protocol.PROTOCOL_VERSION,
            "version": __version__,
            "path": str(self.field.path),
            "instance_id": self.field.instance_id,
            "pid": os.getpid(),
            "socket": str(self.socket_path),
            "maintenance": None if self.maintainer is None else {
                "every_s": self.maintainer.every_s,
                "runs": self.maintainer.runs,
                "checkpoints": self.maintainer.checkpoints,
                "last": self.maintainer.last,
            },
        }


def serve(
    path: str | os.PathLike[str] | None = None,
    *,
    socket_path: str | os.PathLike[str] | None = None,
    durability: str = "flush",
    embedder: Any = "auto",
    ready: Any = None,
    maintain_every: float | None = 300.0,
    checkpoint_policy: CheckpointPolicy | None = None,
) -> None:
    """Open the field and serve it until SIGTERM/SIGINT. ``ready(daemon)`` is
    called once the socket accepts connections. Every ``maintain_every``
    seconds (None: never) the maintenance passes run and, when
    ``checkpoint_policy`` (default :class:`CheckpointPolicy`) finds one due, a
    checkpoint is written."""
    from chitta.field import default_path

    field = Field(path if path is not None else default_path(), durability=durability, embedder=embedder)
    try:
        daemon = Daemon(
            field,
            socket_path if socket_path is not None else default_socket(field.path),
            maintain_every=maintain_every,
            checkpoint_policy=checkpoint_policy,
        )
        daemon.bind()
    except BaseException:
        field.close()
        raise
    if ready is not None:
        ready(daemon)
    daemon.serve_forever()
