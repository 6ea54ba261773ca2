"""``chitta serve``: one process owning one field, serving it on a Unix socket.

Framing and methods: docs/DAEMON.md and :mod:`chitta.server.protocol`. One thread
per connection, at most ``max_connections`` of them (one more is answered with
an error frame and closed); an ``accept`` that fails (EMFILE, ENFILE, ...) costs
that connection only. Calls that write run one at a time (the writer lock);
calls that only read run beside them and beside each other (the field is
thread-safe), each first refreshing the view of other writers; maintenance
runs alone. A frame once begun must arrive whole within ``frame_timeout_s``
(slow senders are cut off). A peer of another uid is refused (``SO_PEERCRED``);
the socket is created mode 0600 in a 0700 directory (chitta/server/sockets.py).
A malformed frame gets an error reply on that connection only; a frame over
the size limit gets an error reply and that connection is closed. SIGTERM
(or SIGINT) stops accepting, lets requests in flight finish, closes the
field (everything flushed) and removes the socket.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import chitta
from chitta.errors import ChittaError, ChittaIOError, InvalidArgument
from chitta.field import Field, deferred
from chitta.field.checkpoint import CheckpointPolicy
from chitta.server import json_dialect, methods, protocol
from chitta.server.group import CALL, OPS, REMEMBER, GroupCommit, Job, mergeable
from chitta.server.maintenance import Maintainer
from chitta.server.protocol import HEADER, ProtocolError
from chitta.server.query_batch import BatchedQueries
from chitta.server.rwlock import RWLock
from chitta.server.sockets import UntrustedSocket, check_peer, private_dir

ACCEPT_POLL_S = 0.2
MAX_SOCKET_PATH = 107  # sun_path minus the NUL
#: connections served at once (one thread each); one more gets an error frame and is closed
MAX_CONNECTIONS = 256
#: seconds within which a frame, once its first byte arrived, must arrive whole
FRAME_TIMEOUT_S = 10.0
#: accept() errors that mean "out of a resource now": that connection is refused, serving goes on
_ACCEPT_TRANSIENT = {
    errno.EMFILE,
    errno.ENFILE,
    errno.ENOBUFS,
    errno.ENOMEM,
    errno.ECONNABORTED,
    errno.EPROTO,
    errno.EPERM,
    errno.EINTR,
    errno.EAGAIN,
}


def default_socket(field_path: str | os.PathLike[str]) -> Path:
    """Where the daemon of a field listens unless told: ``$XDG_RUNTIME_DIR/chitta/<hash>.sock``,
    else ``/tmp/chitta-<uid>/<hash>.sock``; ``<hash>``: 16 hex digits of SHA-256 of the
    field's absolute path (short, whatever the field path's length)."""
    digest = hashlib.sha256(str(Path(field_path).expanduser().absolute()).encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chitta" if runtime else Path(f"/tmp/chitta-{os.getuid()}")
    return base / f"{digest}.sock"


def _internal(exc: Exception) -> ChittaError:
    """A bug inside a call, reported to its caller without taking the daemon down."""
    print(f"chitta serve: internal error: {exc!r}", file=sys.stderr)
    return ChittaError(f"internal error in the daemon: {type(exc).__name__}: {exc}")


def _recv_exact(conn: socket.socket, n: int, deadline: float | None = None) -> bytes | None:
    """n bytes, or None at a clean end of stream before the first byte. With a
    ``deadline`` (time.monotonic()), TimeoutError once it passes."""
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the frame did not arrive in time")
            conn.settimeout(left)
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
        max_connections: int = MAX_CONNECTIONS,
        frame_timeout_s: float = FRAME_TIMEOUT_S,
        group_commit: bool = True,
    ) -> None:
        if (
            isinstance(max_connections, bool)
            or not isinstance(max_connections, int)
            or max_connections < 1
        ):
            raise InvalidArgument(f"max_connections must be an int >= 1, got {max_connections!r}")
        if not frame_timeout_s > 0:
            raise InvalidArgument(f"frame_timeout_s must be > 0 seconds, got {frame_timeout_s!r}")
        self.max_connections = max_connections
        self.frame_timeout_s = float(frame_timeout_s)
        self.refused = 0  # connections turned away (over the cap, accept errors, another uid)
        self.field = field
        # Learning steps off the writer's thread: one would stall every client queued
        # behind the writer lock for about a second (chitta/field/learn_async.py).
        field.core.learn_async = True
        self.socket_path = Path(socket_path).absolute()
        if len(os.fsencode(str(self.socket_path))) > MAX_SOCKET_PATH:
            raise InvalidArgument(
                f"socket path is longer than {MAX_SOCKET_PATH} bytes: {self.socket_path}"
            )
        self.max_frame = max_frame
        self._lock = RWLock()  # shared: a call; exclusive: maintenance, close
        self._writer = threading.Lock()  # one writing call at a time
        # writing calls of many connections run as groups (chitta/server/group.py)
        self.group = GroupCommit(field, self._writer) if group_commit else None
        encoding = field.core.encoding
        if group_commit and deferred.wanted(encoding.embedder):  # a model: queries batched too
            encoding.embedder = BatchedQueries(encoding.embedder)
        self._refresh_mu = threading.Lock()  # one refresh at a time, shared by the calls waiting
        self._refreshes_begun = 0
        self._refreshes_done = 0
        self._spare_fd: int | None = None  # closed to make room when accept() hits EMFILE
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._conns_lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.requests = 0
        if maintain_every is not None and not maintain_every > 0:
            raise InvalidArgument(
                f"maintain_every must be > 0 seconds or None, got {maintain_every!r}"
            )
        self.maintainer = (
            None
            if maintain_every is None
            else Maintainer(
                field, self._lock.exclusive, maintain_every, checkpoint_policy or CheckpointPolicy()
            )
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
        listener.listen(
            socket.SOMAXCONN
        )  # many clients connecting at once queue, not fail (EAGAIN)
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
        self._spare_fd = os.open(os.devnull, os.O_RDONLY)
        try:
            while not self._stop.is_set():
                try:
                    conn, _ = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError as exc:
                    if self._stop.is_set():
                        break
                    if exc.errno not in _ACCEPT_TRANSIENT:
                        raise
                    self._refuse_pending(exc)
                    continue
                self._start_conn(conn)
        finally:
            if self._spare_fd is not None:
                os.close(self._spare_fd)
                self._spare_fd = None
            self._close_all()

    def _start_conn(self, conn: socket.socket) -> None:
        with self._conns_lock:
            full = len(self._conns) >= self.max_connections
        if full:
            self.refused += 1
            self._refuse(
                conn,
                f"the daemon serves {self.max_connections} connections already (its cap); "
                "close idle connections or start it with a higher max_connections",
            )
            return
        try:
            thread = threading.Thread(target=self._serve_conn, args=(conn,), daemon=True)
            with self._conns_lock:
                self._conns.add(conn)
                self._threads.add(thread)
            thread.start()
        except (
            RuntimeError
        ):  # no thread could be started (the process's limit): this connection only
            with self._conns_lock:
                self._conns.discard(conn)
                self._threads.discard(thread)
            self.refused += 1
            self._refuse(
                conn, "the daemon cannot start a thread for this connection now; retry later"
            )

    def _refuse(self, conn: socket.socket, message: str) -> None:
        with contextlib.suppress(OSError):
            conn.settimeout(1.0)
            self._send(conn, None, error=ChittaIOError(f"refused: {message}"))
        conn.close()

    def _refuse_pending(self, exc: OSError) -> None:
        """accept() failed: out of descriptors (or another passing shortage). Free the
        spare descriptor, take the waiting connection, tell it why and close it, so it
        neither waits forever nor spins this loop; then take the spare back."""
        print(
            f"chitta serve: accept failed: {exc.strerror or exc}; refusing one connection",
            file=sys.stderr,
        )
        self.refused += 1
        if exc.errno in (errno.EMFILE, errno.ENFILE) and self._spare_fd is not None:
            os.close(self._spare_fd)
            self._spare_fd = None
            try:
                assert self._listener is not None
                conn, _ = self._listener.accept()
            except OSError:
                pass
            else:
                self._refuse(
                    conn,
                    f"the daemon is out of file descriptors ({exc.strerror}); "
                    "close connections or raise its limit (ulimit -n)",
                )
            with contextlib.suppress(OSError):
                self._spare_fd = os.open(os.devnull, os.O_RDONLY)
        time.sleep(0.01)  # a shortage that persists must not spin the loop

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
        with self._lock.exclusive:
            self.field.close()  # flushes what is buffered

    # ---- one connection ------------------------------------------------------------------
    def _serve_conn(self, conn: socket.socket) -> None:
        try:
            try:
                check_peer(conn)
            except UntrustedSocket as exc:
                self.refused += 1
                self._send(conn, None, error=ChittaIOError(f"{exc}; connect as the daemon's user"))
                return
            while not self._stop.is_set():
                conn.settimeout(None)  # an idle connection may wait for its next call
                first = conn.recv(HEADER.size)
                if not first:
                    return
                deadline = time.monotonic() + self.frame_timeout_s  # the rest of the frame: in time
                rest = (
                    _recv_exact(conn, HEADER.size - len(first), deadline)
                    if len(first) < HEADER.size
                    else b""
                )
                if rest is None:
                    return
                (size,) = HEADER.unpack(first + rest)
                if size > self.max_frame:
                    self._send(
                        conn,
                        None,
                        error=ProtocolError(
                            f"frame of {size} bytes exceeds the limit of {self.max_frame}; closing this connection"
                        ),
                    )
                    return
                body = _recv_exact(conn, size, deadline) if size else b""
                if body is None:
                    raise ConnectionError("peer closed the connection mid-frame")
                conn.settimeout(self.frame_timeout_s)  # a reader that stops reading is cut off too
                if json_dialect.is_json(body):
                    self._send_json(conn, self._answer_json(body))
                else:
                    self._send(conn, *self._answer(body))
        except TimeoutError:
            with contextlib.suppress(OSError):  # a slow sender (slowloris): its connection ends
                self._send(
                    conn,
                    None,
                    error=ProtocolError(
                        f"a frame did not arrive whole within {self.frame_timeout_s:g} s; closing this connection"
                    ),
                )
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
            return rid, self._run(method, params, len(body)), None
        except ChittaError as exc:
            return rid, None, exc
        except Exception as exc:  # noqa: BLE001  a bug must not take the daemon (or other clients) down
            return rid, None, _internal(exc)

    def _answer_json(self, body: bytes) -> bytes:
        """The reply body to a request of the JSON dialect (chitta/server/json_dialect.py)."""
        rid: Any = None
        try:
            rid, name, params = json_dialect.parse_request(body)
            if not isinstance(rid, int) or isinstance(rid, bool):
                rid = None
                raise ProtocolError("a request needs an integer id")
            if name == "_info":
                return json_dialect.reply(rid, self.info())
            method, checked = json_dialect.check(name, params)
            return json_dialect.reply(rid, self._run(method, checked, len(body)))
        except ChittaError as exc:
            return json_dialect.reply(rid, error=protocol.error_body(exc))
        except Exception as exc:  # noqa: BLE001  a bug must not take the daemon (or other clients) down
            return json_dialect.reply(rid, error=protocol.error_body(_internal(exc)))

    def _run(self, method: methods.Method, params: dict[str, Any], size: int = 0) -> Any:
        """One checked call on the field, under the daemon's reader/writer discipline."""
        with self._lock.shared:
            if methods.only_reads(method, params):  # beside other calls (the field is thread-safe)
                self._refresh()
                result = method.invoke(self.field, params)
            elif self.group is not None:
                result = self._grouped(method, params, size)
            else:
                with self._writer:
                    if method.reads:
                        self.field.refresh()
                    result = method.invoke(self.field, params)
            if isinstance(result, Iterator):
                result = list(result)
        self.requests += 1
        return result

    def _refresh(self) -> None:
        """The field's view of other writers brought up to at least this call's arrival:
        a refresh begun after it arrived serves it too (calls arriving while one runs
        share the next, instead of queueing one each for the field's lock)."""
        arrived = self._refreshes_begun
        with self._refresh_mu:
            if self._refreshes_done > arrived:
                return
            self._refreshes_begun += 1
            ticket = self._refreshes_begun
            self.field.refresh()
            self._refreshes_done = ticket

    def _grouped(self, method: methods.Method, params: dict[str, Any], size: int) -> Any:
        """A writing call through the group committer (chitta/server/group.py)."""
        assert self.group is not None
        if method.name == "recall":  # runs beside the writer; its touches join a group
            self._refresh()
            with self.field.core.captured_commits() as captured:
                result = method.invoke(self.field, params)
            if captured:
                self.group.submit(Job(OPS, ops=captured, size=size))
            return result
        if method.name == "remember" and mergeable(self.field, params):
            return self.group.submit(Job(REMEMBER, params=params, size=size))

        def run() -> Any:
            if method.reads:
                self._refresh()
            out = method.invoke(self.field, params)
            return list(out) if isinstance(out, Iterator) else out

        return self.group.submit(Job(CALL, run=run, size=size))

    def _send(
        self, conn: socket.socket, rid: Any, result: Any = None, error: BaseException | None = None
    ) -> None:
        if error is None:
            try:
                body = protocol.pack({"id": rid, "result": result})
            except ChittaError as exc:
                error = exc
        if error is not None:
            body = protocol.pack({"id": rid, "error": protocol.error_body(error)})
        if len(body) > self.max_frame:
            body = protocol.pack(
                {
                    "id": rid,
                    "error": protocol.error_body(
                        ProtocolError(
                            f"the reply is {len(body)} bytes, over the frame limit; ask for less"
                        )
                    ),
                }
            )
        conn.sendall(HEADER.pack(len(body)) + body)

    def _send_json(self, conn: socket.socket, body: bytes) -> None:
        if len(body) > self.max_frame:
            over = ProtocolError(
                f"the reply is {len(body)} bytes, over the frame limit; ask for less"
            )
            body = json_dialect.reply(None, error=protocol.error_body(over))
        conn.sendall(HEADER.pack(len(body)) + body)

    def info(self) -> dict[str, Any]:
        return {
            "protocol": protocol.PROTOCOL_VERSION,
            "version": chitta.__version__,
            "path": str(self.field.path),
            "instance_id": self.field.instance_id,
            "pid": os.getpid(),
            "socket": str(self.socket_path),
            "max_connections": self.max_connections,
            "connections": len(self._conns),
            "refused": self.refused,
            "groups": None
            if self.group is None
            else {"groups": self.group.groups, "jobs": self.group.jobs},
            "maintenance": None
            if self.maintainer is None
            else {
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
    max_connections: int = MAX_CONNECTIONS,
    frame_timeout_s: float = FRAME_TIMEOUT_S,
    group_commit: bool = True,
) -> None:
    """Open the field and serve it until SIGTERM/SIGINT. ``ready(daemon)`` is
    called once the socket accepts connections. Every ``maintain_every``
    seconds (None: never) the maintenance passes run and, when
    ``checkpoint_policy`` (default :class:`CheckpointPolicy`) finds one due, a
    checkpoint is written."""
    from chitta.field import default_path

    field = Field(
        path if path is not None else default_path(), durability=durability, embedder=embedder
    )
    try:
        daemon = Daemon(
            field,
            socket_path if socket_path is not None else default_socket(field.path),
            maintain_every=maintain_every,
            checkpoint_policy=checkpoint_policy,
            max_connections=max_connections,
            frame_timeout_s=frame_timeout_s,
            group_commit=group_commit,
        )
        daemon.bind()
    except BaseException:
        field.close()
        raise
    if ready is not None:
        ready(daemon)
    daemon.serve_forever()
