"""The daemon's socket I/O: one thread, one selector (epoll on Linux) for every connection.

The loop accepts connections (at most ``max_connections`` at once: one more is
answered with an error frame and closed; an ``accept`` that fails, EMFILE and the
like, costs that connection only), checks each peer (``SO_PEERCRED``: another uid is
refused), reads and frames requests and hands each whole frame to ``dispatch`` (the
daemon's: it runs the call on its writer or reader threads and never blocks the
loop). A connection has one call in flight: what it sends meanwhile waits (at most
``READ_AHEAD`` bytes are read ahead, then the loop stops reading it).

The thread that answers a call sends the reply itself with :meth:`ConnectionLoop.reply`
(the socket is non-blocking: a reply the socket takes whole needs no hand-off, the
usual case); the rest of a reply the peer is slow to read, and every close, is left
to the loop. While a call is in flight its connection belongs to the answering
thread: the loop only reads ahead (or notes the peer's end) and never closes it.

Limits: a frame once begun must arrive whole within ``frame_timeout_s`` (a slow
sender gets an error frame and is closed), a reply must be taken within it too (a
reader that stops reading is closed; each progress restarts the clock); between
frames a connection may idle. A frame over ``max_frame`` bytes gets an error reply
and its connection is closed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

from chitta.errors import ChittaError, ChittaIOError
from chitta.server import protocol
from chitta.server.protocol import HEADER, ProtocolError
from chitta.server.sockets import UntrustedSocket, check_peer

POLL_S = 0.2  # the longest wait for events: how soon a stop is noticed
READ_AHEAD = 1 << 16  # bytes read from a connection while its call is in flight
RECV_BYTES = 1 << 18
ACCEPTS_PER_TURN = 64  # connections taken per wake-up (the rest on the next turn)
DRAIN_S = 30.0  # at stop: how long calls in flight may take to be answered
#: accept() errors that mean "out of a resource now": that connection is refused, serving goes on
ACCEPT_TRANSIENT = {
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

_LISTENER = "listener"
_WAKE = "wake"


class Connection:
    """One client connection's state. ``busy``: a call in flight (its answering thread
    owns the socket until it hands the connection back). ``lock`` guards what the loop
    and the answering thread both touch: ``busy``, ``inbuf``, ``eof``, ``reading``."""

    __slots__ = (
        "busy",
        "close_after",
        "deadline",
        "eof",
        "events",
        "failed",
        "fd",
        "inbuf",
        "lock",
        "out",
        "reading",
        "sock",
    )

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.inbuf = bytearray()
        self.out: memoryview | None = None  # the part of a reply the socket has not taken
        self.busy = False
        self.close_after = False  # close once ``out`` is sent
        self.failed = False  # a send failed: the peer is gone
        self.eof = False  # the peer closed its side (or reading it failed)
        self.reading = True  # the loop reads it (False: read-ahead full, or eof)
        self.events = 0  # what the selector watches now
        self.deadline: float | None = None  # frame begun, or reply pending: done by then
        self.lock = threading.Lock()


class ConnectionLoop:
    """Serves ``listener`` (module doc) until :meth:`run`'s ``stop`` is set.
    ``dispatch(conn, body)``: a request frame's body; its answer comes through
    :meth:`reply`."""

    def __init__(
        self,
        listener: socket.socket,
        dispatch: Callable[[Connection, bytes], None],
        *,
        max_frame: int,
        frame_timeout_s: float,
        max_connections: int,
    ) -> None:
        self.max_frame = max_frame
        self.frame_timeout_s = frame_timeout_s
        self.max_connections = max_connections
        self.refused = 0  # connections turned away (over the cap, accept errors, another uid)
        self._dispatch = dispatch
        self._listener = listener
        listener.setblocking(False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(listener, selectors.EVENT_READ, _LISTENER)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, _WAKE)
        self.conns: dict[int, Connection] = {}
        self._handback: deque[Connection] = deque()  # connections answering threads gave back
        self._sleeping = False  # in select(): a hand-back must wake it
        self._timed: set[Connection] = set()  # connections with a deadline
        self._spare_fd: int | None = None  # closed to make room when accept() hits EMFILE
        self._stopping = False

    # ---- the loop -------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set; then answer the calls in flight (at most DRAIN_S)
        and close every connection and the listener."""
        self._spare_fd = os.open(os.devnull, os.O_RDONLY)
        try:
            while not stop.is_set():
                self._turn(POLL_S)
            self._drain()
        finally:
            for conn in list(self.conns.values()):
                self._drop(conn)
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(self._listener)
            self._listener.close()
            self._sel.close()
            self._wake_r.close()
            self._wake_w.close()
            if self._spare_fd is not None:
                os.close(self._spare_fd)
                self._spare_fd = None

    def _turn(self, max_wait: float) -> None:
        self._sleeping = True  # set before looking at _handback: see _hand_back
        timeout = 0.0 if self._handback else self._timeout(max_wait)
        events = self._sel.select(timeout)
        self._sleeping = False
        for key, mask in events:
            data = key.data
            if data is _LISTENER:
                self._accept()
            elif data is _WAKE:
                with contextlib.suppress(BlockingIOError, InterruptedError):
                    self._wake_r.recv(4096)
            elif self._open(data):  # (an event of a connection closed this turn: none)
                if mask & selectors.EVENT_WRITE:
                    self._flush(data)
                if mask & selectors.EVENT_READ and self._open(data):
                    self._read(data)
        while self._handback:
            self._resume(self._handback.popleft())
        if self._timed:
            self._expire()

    def _timeout(self, max_wait: float) -> float:
        if not self._timed:
            return max_wait
        soonest = min(c.deadline for c in self._timed if c.deadline is not None)
        return max(0.0, min(max_wait, soonest - time.monotonic()))

    def _drain(self) -> None:
        """At stop: no new connection or call; calls in flight get their replies."""
        self._stopping = True
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(self._listener)
        self._listener.close()  # a client connecting now is refused at once, not left waiting
        end = time.monotonic() + DRAIN_S
        while time.monotonic() < end:
            for conn in list(self.conns.values()):
                with conn.lock:
                    idle = not conn.busy
                if idle and conn.out is None:
                    self._drop(conn)
            if not self.conns:
                return
            self._turn(0.05)

    # ---- accepting ------------------------------------------------------------------------
    def _accept(self) -> None:
        for _ in range(ACCEPTS_PER_TURN):
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno not in ACCEPT_TRANSIENT:
                    raise
                self._refuse_pending(exc)
                return
            self._admit(sock)

    def _admit(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        if len(self.conns) >= self.max_connections:
            self.refused += 1
            self._refuse(
                sock,
                ChittaIOError(
                    f"refused: the daemon serves {self.max_connections} connections already "
                    "(its cap); close idle connections or start it with a higher max_connections"
                ),
            )
            return
        try:
            check_peer(sock)
        except UntrustedSocket as exc:
            self.refused += 1
            self._refuse(sock, ChittaIOError(f"{exc}; connect as the daemon's user"))
            return
        except OSError:
            sock.close()
            return
        conn = Connection(sock)
        self.conns[conn.fd] = conn
        self._watch(conn)

    def _refuse(self, sock: socket.socket, error: ChittaError) -> None:
        """An error frame to a connection just accepted (its buffer is empty: it fits),
        then close it."""
        with contextlib.suppress(OSError):
            sock.setblocking(False)
            sock.send(error_frame(error))
        sock.close()

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
                sock, _ = self._listener.accept()
            except OSError:
                pass
            else:
                self._refuse(
                    sock,
                    ChittaIOError(
                        f"refused: the daemon is out of file descriptors ({exc.strerror}); "
                        "close connections or raise its limit (ulimit -n)"
                    ),
                )
            with contextlib.suppress(OSError):
                self._spare_fd = os.open(os.devnull, os.O_RDONLY)
        time.sleep(0.01)  # a shortage that persists must not spin the loop

    # ---- reading and framing (loop thread) ------------------------------------------------
    def _read(self, conn: Connection) -> None:
        try:
            data = conn.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""  # reset: as an end of stream (a call in flight still finishes)
        with conn.lock:
            if not data:
                conn.eof = True
                conn.reading = False
                self._watch(conn)
            else:
                conn.inbuf += data
                if conn.busy and len(conn.inbuf) >= READ_AHEAD:
                    conn.reading = False  # read on once its call is answered
                    self._watch(conn)
            if conn.busy:
                return  # its answering thread gives it back (then: close, or the next frame)
        if conn.eof:
            self._drop(conn)  # a frame cut off by the peer's end is dropped with it
            return
        self._frames(conn)

    def _frames(self, conn: Connection) -> None:
        """The next whole frame of an idle connection to ``dispatch``; a frame begun
        starts its deadline (loop thread)."""
        if self._stopping:
            return
        buf = conn.inbuf
        if len(buf) < HEADER.size:
            if buf:
                self._begin(conn)
            return
        (size,) = HEADER.unpack_from(buf)
        if size > self.max_frame:
            conn.busy = True
            self._end_deadline(conn)
            self.reply(
                conn,
                error_frame(
                    ProtocolError(
                        f"frame of {size} bytes exceeds the limit of {self.max_frame}; "
                        "closing this connection"
                    )
                ),
                close=True,
            )
            return
        if len(buf) < HEADER.size + size:
            self._begin(conn)
            return
        body = bytes(buf[HEADER.size : HEADER.size + size])
        del buf[: HEADER.size + size]
        self._end_deadline(conn)
        conn.busy = True
        try:
            self._dispatch(conn, body)
        except Exception as exc:  # noqa: BLE001  a bug costs this call, not the loop
            print(f"chitta serve: internal error: {exc!r}", file=sys.stderr)
            self.reply(conn, error_frame(ChittaError(f"internal error in the daemon: {exc!r}")))

    def _begin(self, conn: Connection) -> None:
        if conn.deadline is None:
            conn.deadline = time.monotonic() + self.frame_timeout_s
            self._timed.add(conn)

    def _end_deadline(self, conn: Connection) -> None:
        conn.deadline = None
        self._timed.discard(conn)

    def _expire(self) -> None:
        now = time.monotonic()
        for conn in [c for c in self._timed if c.deadline is not None and c.deadline <= now]:
            self._end_deadline(conn)
            if not self._open(conn):
                continue
            if conn.out is not None:  # a reader that stopped reading
                self._drop(conn)
                continue
            with conn.lock:
                if conn.busy:
                    continue
                conn.busy = True
            # a slow sender (slowloris): its connection ends
            self.reply(
                conn,
                error_frame(
                    ProtocolError(
                        f"a frame did not arrive whole within {self.frame_timeout_s:g} s; "
                        "closing this connection"
                    )
                ),
                close=True,
            )

    # ---- replies --------------------------------------------------------------------------
    def reply(self, conn: Connection, data: bytes, *, close: bool = False) -> None:
        """Send the reply of ``conn``'s call in flight (any thread; the caller owns the
        connection, as the answer of its call) and give the connection back."""
        try:
            sent = conn.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            sent = -1
        if sent == len(data) and not close:
            with conn.lock:
                if conn.reading and not conn.inbuf:  # nothing for the loop to do
                    conn.busy = False
                    return
        if sent < 0:
            conn.failed = True
        elif sent < len(data):
            conn.out = memoryview(data)[sent:]
        conn.close_after = close
        self._hand_back(conn)

    def _hand_back(self, conn: Connection) -> None:
        self._handback.append(conn)
        if self._sleeping:  # read after the append: a loop about to sleep sees one or the other
            with contextlib.suppress(BlockingIOError, InterruptedError, OSError):
                self._wake_w.send(b"\0")

    def _resume(self, conn: Connection) -> None:
        """A connection its answering thread gave back (loop thread)."""
        if not self._open(conn) or conn.failed:
            self._drop(conn)
            return
        if conn.out is not None:
            self._flush(conn)
            return
        self._idle(conn)

    def _flush(self, conn: Connection) -> None:
        out = conn.out
        if out is None:
            return
        try:
            sent = conn.sock.send(out)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self._drop(conn)
            return
        if sent < len(out):
            conn.out = out[sent:]
            if sent or conn.deadline is None:  # progress restarts the clock
                conn.deadline = time.monotonic() + self.frame_timeout_s
                self._timed.add(conn)
            self._watch(conn)
            return
        conn.out = None
        self._end_deadline(conn)
        self._watch(conn)
        self._idle(conn)

    def _idle(self, conn: Connection) -> None:
        """Its reply is out: close it, or serve what it sent meanwhile (loop thread)."""
        if conn.close_after or self._stopping:
            self._drop(conn)
            return
        with conn.lock:
            conn.busy = False
            if not conn.reading and not conn.eof:
                conn.reading = True
                self._watch(conn)
        self._frames(conn)
        if conn.eof and not conn.busy:
            self._drop(conn)

    # ---- the selector ---------------------------------------------------------------------
    def _watch(self, conn: Connection) -> None:
        """Have the selector watch what ``conn`` waits for (loop thread)."""
        want = (selectors.EVENT_READ if conn.reading else 0) | (
            selectors.EVENT_WRITE if conn.out is not None else 0
        )
        if want == conn.events or not self._open(conn):
            return
        if not want:
            self._sel.unregister(conn.sock)
        elif not conn.events:
            self._sel.register(conn.sock, want, conn)
        else:
            self._sel.modify(conn.sock, want, conn)
        conn.events = want

    def _open(self, conn: Connection) -> bool:
        """Whether ``conn`` is still served (its descriptor's number may serve a newer one)."""
        return self.conns.get(conn.fd) is conn

    def _drop(self, conn: Connection) -> None:
        """Close ``conn`` (loop thread; never one whose call is in flight: its thread
        still sends on it)."""
        if self.conns.get(conn.fd) is not conn:
            return
        if conn.events:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(conn.sock)
            conn.events = 0
        self._end_deadline(conn)
        del self.conns[conn.fd]
        conn.sock.close()


def error_frame(error: BaseException) -> bytes:
    """A framed reply carrying ``error`` for no request id."""
    body = protocol.pack({"id": None, "error": protocol.error_body(error)})
    return HEADER.pack(len(body)) + body
