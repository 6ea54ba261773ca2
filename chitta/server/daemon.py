"""``chitta serve``: one process owning one field, serving it on a Unix socket.

Framing and methods: docs/DAEMON.md and :mod:`chitta.server.protocol`. Threads:

- one I/O loop (chitta/server/io_loop.py, the thread that calls :meth:`Daemon.serve_forever`)
  owns every socket: it accepts (at most ``max_connections`` at once: one more is answered
  with an error frame and closed; an ``accept`` that fails, EMFILE and the like, costs that
  connection only), refuses a peer of another uid (``SO_PEERCRED``), reads and frames
  requests, decodes them and hands each call on; a frame once begun must arrive whole
  within ``frame_timeout_s`` (slow senders are cut off), a reply must be read within it
  too; a malformed frame gets an error reply on that connection only, a frame over the
  size limit gets an error reply and that connection is closed;
- one writer (chitta/server/group.py) runs the writing calls, in groups: what queued while
  the previous group ran; its field defers sparse codes to the background coder
  (``FieldCore.defer_codes``), so a group's critical path is the log append;
- ``readers`` threads run the calls that only read (recall ``touch=False``, get, stats) and
  touching recalls (their touches join the writer's next group), beside the writer and
  each other (the field is thread-safe), each first refreshing the view of other writers;
- maintenance (chitta/server/maintenance.py) runs alone (the daemon's readers-writer lock).

The thread that finishes a call frames and sends its reply (no hand-off to the loop
unless the socket is full). The socket is created mode 0600 in a 0700 directory
(chitta/server/sockets.py). SIGTERM (or SIGINT) stops accepting, lets requests in
flight finish, closes the field (everything flushed) and removes the socket.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
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
from chitta.server.group import CALL, MAX_JOBS, OPS, REMEMBER, GroupCommit, Job, mergeable
from chitta.server.io_loop import Connection, ConnectionLoop
from chitta.server.maintenance import Maintainer
from chitta.server.protocol import HEADER, ProtocolError
from chitta.server.query_batch import BatchedQueries
from chitta.server.rwlock import RWLock
from chitta.server.sockets import private_dir

MAX_SOCKET_PATH = 107  # sun_path minus the NUL
#: connections served at once; one more gets an error frame and is closed
MAX_CONNECTIONS = 256
#: seconds within which a frame, once its first byte arrived, must arrive whole
FRAME_TIMEOUT_S = 10.0
#: reads the I/O loop serves itself when the query embedder is cheap (Daemon._read_here)
INLINE_READS = frozenset({"recall", "get", "stats", "__len__", "__contains__"})
LONG_HOLD_S = 0.005
#: threads that run reads and touching recalls (the writer is one more)
READERS = 2
#: recalls a reader takes at once with a model (their queries: one embedding batch)
READ_BATCH = 8


def default_socket(field_path: str | os.PathLike[str]) -> Path:
    """Where the daemon of a field listens unless told: ``$XDG_RUNTIME_DIR/chitta/<hash>.sock``,
    else ``/tmp/chitta-<uid>/<hash>.sock``; ``<hash>``: 16 hex digits of SHA-256 of the
    field's absolute path (short, whatever the field path's length)."""
    digest = hashlib.sha256(str(Path(field_path).expanduser().absolute()).encode()).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chitta" if runtime else Path(f"/tmp/chitta-{os.getuid()}")
    return base / f"{digest}.sock"


def _internal(exc: BaseException) -> ChittaError:
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


class Call:
    """One decoded request: where its reply goes and in which dialect."""

    __slots__ = ("conn", "json", "method", "params", "rid", "size")

    def __init__(
        self,
        conn: Connection,
        rid: Any,
        method: methods.Method,
        params: dict[str, Any],
        size: int,
        json: bool,
    ) -> None:
        self.conn, self.rid, self.method, self.params = conn, rid, method, params
        self.size, self.json = size, json


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
        readers: int = READERS,
        inline_reads: bool = True,
    ) -> None:
        if (
            isinstance(max_connections, bool)
            or not isinstance(max_connections, int)
            or max_connections < 1
        ):
            raise InvalidArgument(f"max_connections must be an int >= 1, got {max_connections!r}")
        if not frame_timeout_s > 0:
            raise InvalidArgument(f"frame_timeout_s must be > 0 seconds, got {frame_timeout_s!r}")
        if isinstance(readers, bool) or not isinstance(readers, int) or readers < 1:
            raise InvalidArgument(f"readers must be an int >= 1, got {readers!r}")
        self.max_connections = max_connections
        self.frame_timeout_s = float(frame_timeout_s)
        self.field = field
        # Learning steps off the writer's thread: one would stall every client queued
        # behind the writer for about a second (chitta/field/learn_async.py).
        field.core.learn_async = True
        self.socket_path = Path(socket_path).absolute()
        if len(os.fsencode(str(self.socket_path))) > MAX_SOCKET_PATH:
            raise InvalidArgument(
                f"socket path is longer than {MAX_SOCKET_PATH} bytes: {self.socket_path}"
            )
        self.max_frame = max_frame
        self._lock = RWLock()  # shared: a call; exclusive: maintenance, close
        self._writer = threading.Lock()  # one writing call at a time
        self.group_commit = group_commit
        # Writing calls run on one writer thread: in groups (chitta/server/group.py), or
        # with --no-group-commit one at a time, each alone (the old path, for comparison).
        cheap_queries = not deferred.wanted(field.core.encoding.embedder)  # (before any wrapping)
        # reads served on the I/O loop (_read_here): only where a query costs no model call
        self._inline = inline_reads and cheap_queries
        self.group = GroupCommit(
            field,
            self._writer,
            hold=self._lock.shared,
            max_jobs=MAX_JOBS if group_commit else 1,
            # woken by the loop that serves reads, the writer waits for its slice instead
            # of preempting it (D-086); with a model it must preempt the background embedder
            batch_thread=self._inline,
        )
        if group_commit:
            # a group's sparse codes leave the writer's thread (chitta/field/deferred_codes.py)
            field.core.defer_codes = True
            encoding = field.core.encoding
            if deferred.wanted(encoding.embedder):  # a model: queries batched too
                encoding.embedder = BatchedQueries(encoding.embedder)
        self._refresh_mu = threading.Lock()  # one refresh at a time, shared by the calls waiting
        self._refreshes_begun = 0
        self._refreshes_done = 0
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._loop: ConnectionLoop | None = None
        self._calls: queue.SimpleQueue[Call | None] = queue.SimpleQueue()
        self._readers = readers
        self._reader_threads: list[threading.Thread] = []
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

    @property
    def refused(self) -> int:
        """Connections turned away (over the cap, accept errors, another uid)."""
        return 0 if self._loop is None else self._loop.refused

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
        # many clients connecting at once queue, not fail (EAGAIN)
        listener.listen(socket.SOMAXCONN)
        self._listener = listener
        self._loop = ConnectionLoop(
            listener,
            self._dispatch,
            max_frame=self.max_frame,
            frame_timeout_s=self.frame_timeout_s,
            max_connections=self.max_connections,
        )

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or SIGTERM/SIGINT when run in the main thread)."""
        if self._loop is None:
            self.bind()
        assert self._loop is not None
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)
        if self.maintainer is not None:
            self.maintainer.start()
        self.group.start()
        for i in range(self._readers):
            thread = threading.Thread(
                target=self._read_calls, name=f"chitta-reader-{i}", daemon=True
            )
            thread.start()
            self._reader_threads.append(thread)
        try:
            self._loop.run(self._stop)  # returns once the calls in flight are answered
        finally:
            try:
                self.socket_path.unlink()
            except FileNotFoundError:
                pass
            for _ in self._reader_threads:
                self._calls.put(None)
            for thread in self._reader_threads:
                thread.join(timeout=30)
            self.group.stop()
            if self.maintainer is not None:
                self.maintainer.stop()
            with self._lock.exclusive:
                self.field.close()  # flushes what is buffered

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._stop.set()

    def shutdown(self) -> None:
        self._stop.set()

    # ---- one request: decoded on the loop, run on the writer or a reader ----------------
    def _dispatch(self, conn: Connection, body: bytes) -> None:
        """A request frame's body (on the I/O loop): answered at once when malformed (or
        ``_info``), else handed to the writer or the readers."""
        is_json = json_dialect.is_json(body)
        rid: Any = None
        try:
            if is_json:
                rid, name, params = json_dialect.parse_request(body)
                if not isinstance(rid, int) or isinstance(rid, bool):
                    rid = None
                    raise ProtocolError("a request needs an integer id")
                if name == "_info":
                    self._reply_to(conn, rid, is_json, self.info(), None)
                    return
                method, checked = json_dialect.check(name, params)
            else:
                request = protocol.unpack(body)
                if not isinstance(request, dict):
                    raise ProtocolError("a request is a map with id, method and params")
                rid = request.get("id")
                if not isinstance(rid, int) or isinstance(rid, bool):
                    rid = None
                    raise ProtocolError("a request needs an integer id")
                if request.get("method") == "_info":
                    self._reply_to(conn, rid, is_json, self.info(), None)
                    return
                method, checked = methods.check_call(request.get("method"), request.get("params"))
        except ChittaError as exc:
            self._reply_to(conn, rid, is_json, None, exc)
            return
        except Exception as exc:  # noqa: BLE001  a bug must not take the daemon (or other clients) down
            self._reply_to(conn, rid, is_json, None, _internal(exc))
            return
        call = Call(conn, rid, method, checked, len(body), is_json)
        if methods.only_reads(method, checked):
            if not self._read_here(call):
                self._calls.put(call)  # a reader runs it
        elif self.group_commit and method.name == "recall":
            self._calls.put(call)  # a reader runs it; a touching recall's touches: the writer
        elif self.group_commit and method.name == "remember" and mergeable(self.field, checked):
            self.group.post(
                Job(REMEMBER, params=checked, size=len(body), reply=self._job_reply(call))
            )
        else:
            self.group.post(
                Job(CALL, run=self._call_runner(call), size=len(body), reply=self._job_reply(call))
            )

    def _read_calls(self) -> None:
        """A reader thread: calls that only read, and touching recalls. With a model, the
        recalls queued together are taken together and their queries embedded as one
        batch first (BatchedQueries.prime)."""
        embedder = self.field.core.encoding.embedder
        batched = embedder if isinstance(embedder, BatchedQueries) else None
        while True:
            calls = [self._calls.get()]
            while batched is not None and len(calls) < READ_BATCH and calls[-1] is not None:
                try:
                    calls.append(self._calls.get_nowait())
                except queue.Empty:
                    break
            if batched is not None and len(calls) > 1:
                texts = [c.params["query"] for c in calls if c is not None and _embeds(c)]
                if len(texts) > 1:
                    try:
                        batched.prime(texts)
                    except Exception:  # noqa: BLE001, S110  each recall embeds its own (and reports)
                        pass
            for call in calls:
                if call is None:
                    return
                try:
                    self._read_call(call)
                except BaseException as exc:  # noqa: BLE001  a bug costs its call, not the thread
                    self._reply_to(call.conn, call.rid, call.json, None, _internal(exc))

    def _read_here(self, call: Call) -> bool:
        """Run a cheap read on the I/O loop itself: no hand-off to a reader thread and back
        (D-085). Only where the query embedder is cheap (no model: a model call would hold
        every socket), for the reads of INLINE_READS, and not while maintenance holds the
        daemon or a writer has held the field for over LONG_HOLD_S (a checkpoint, say):
        then a reader waits instead of the loop. A commit's short hold the loop waits out."""
        if not self._inline or call.method.name not in INLINE_READS:
            return False
        if self.field.core.lock.held_longer_than(LONG_HOLD_S) or not self._lock.shared.try_enter():
            return False
        try:
            self._read_call(call, held=True)
        finally:
            self._lock.shared.__exit__(None, None, None)
        return True

    def _read_call(self, call: Call, held: bool = False) -> None:
        method, params = call.method, call.params
        try:
            with contextlib.nullcontext() if held else self._lock.shared:
                self._refresh()
                if methods.only_reads(method, params):
                    result = method.invoke(self.field, params)
                    if isinstance(result, Iterator):
                        result = list(result)
                    captured: list[Any] = []
                else:  # a touching recall: runs beside the writer; its touches join a group
                    with self.field.core.captured_commits() as captured:
                        result = method.invoke(self.field, params)
        except ChittaError as exc:
            self._reply_to(call.conn, call.rid, call.json, None, exc)
            return
        except Exception as exc:  # noqa: BLE001  a bug must not take the daemon down
            self._reply_to(call.conn, call.rid, call.json, None, _internal(exc))
            return
        if not captured:
            self.requests += 1
            self._reply_to(call.conn, call.rid, call.json, result, None)
            return

        def committed(job: Job) -> None:  # the reply waits for the touches' commit
            self.requests += 1
            self._reply_to(call.conn, call.rid, call.json, result, _as_error(job.error))

        self.group.post(Job(OPS, ops=captured, size=call.size, reply=committed))

    def _call_runner(self, call: Call) -> Any:
        """A writing call as the writer runs it (refreshing first when it reads)."""
        method, params = call.method, call.params

        def run() -> Any:
            if method.reads:
                self._refresh()
            out = method.invoke(self.field, params)
            return list(out) if isinstance(out, Iterator) else out

        return run

    def _job_reply(self, call: Call) -> Any:
        def reply(job: Job) -> None:
            self.requests += 1
            self._reply_to(call.conn, call.rid, call.json, job.result, _as_error(job.error))

        return reply

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

    # ---- replies -------------------------------------------------------------------------
    def _reply_to(
        self, conn: Connection, rid: Any, is_json: bool, result: Any, error: BaseException | None
    ) -> None:
        """Frame the reply (MessagePack or JSON, as the request) and send it."""
        body = self._json_body(rid, result, error) if is_json else self._body(rid, result, error)
        assert self._loop is not None
        self._loop.reply(conn, HEADER.pack(len(body)) + body)

    def _body(self, rid: Any, result: Any, error: BaseException | None) -> bytes:
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
        return body

    def _json_body(self, rid: Any, result: Any, error: BaseException | None) -> bytes:
        try:
            if error is None:
                body = json_dialect.reply(rid, result)
            else:
                body = json_dialect.reply(rid, error=protocol.error_body(error))
        except ChittaError as exc:
            body = json_dialect.reply(rid, error=protocol.error_body(exc))
        except Exception as exc:  # noqa: BLE001  a value the dialect cannot write: a bug
            body = json_dialect.reply(rid, error=protocol.error_body(_internal(exc)))
        if len(body) > self.max_frame:
            over = ProtocolError(
                f"the reply is {len(body)} bytes, over the frame limit; ask for less"
            )
            body = json_dialect.reply(None, error=protocol.error_body(over))
        return body

    def info(self) -> dict[str, Any]:
        return {
            "protocol": protocol.PROTOCOL_VERSION,
            "version": chitta.__version__,
            "path": str(self.field.path),
            "instance_id": self.field.instance_id,
            "pid": os.getpid(),
            "socket": str(self.socket_path),
            "max_connections": self.max_connections,
            "connections": 0 if self._loop is None else len(self._loop.conns),
            "refused": self.refused,
            "groups": {"groups": self.group.groups, "jobs": self.group.jobs}
            if self.group_commit
            else None,
            "maintenance": None
            if self.maintainer is None
            else {
                "every_s": self.maintainer.every_s,
                "runs": self.maintainer.runs,
                "checkpoints": self.maintainer.checkpoints,
                "last": self.maintainer.last,
            },
        }


def _embeds(call: Call) -> bool:
    """Whether the call is a recall whose query text the model embeds."""
    return (
        call.method.name == "recall"
        and isinstance(call.params.get("query"), str)
        and call.params.get("vector") is None
    )


def _as_error(exc: BaseException | None) -> BaseException | None:
    """A job's error as its caller gets it: chitta's errors as they are, a bug as internal."""
    if exc is None or isinstance(exc, ChittaError):
        return exc
    return _internal(exc)


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
