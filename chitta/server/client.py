"""``chitta.connect()``: a handle on a field served by ``chitta serve``.

:class:`RemoteField` has the methods of :class:`chitta.Field` listed in
:data:`chitta.server.methods.METHODS`, made from that table with ``Field``'s own
signatures and docstrings, so the two cannot drift. Values come back as the
same types (``Memory``, ``Hit``, ``FieldStats``, numpy arrays) and errors as
the same ``chitta.errors`` classes. One handle is one connection; calls from
several threads take turns on it.
"""

from __future__ import annotations

import inspect
import itertools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from chitta.errors import ChittaIOError, ClosedError
from chitta.server import protocol
from chitta.server.daemon import _recv_exact, default_socket
from chitta.server.methods import METHODS, Method
from chitta.server.protocol import HEADER, ProtocolError
from chitta.server.sockets import connect_unix

__all__ = ["RemoteField", "connect"]

READ_CHUNK = 1 << 16  # bytes a reply's first recv asks for


class RemoteField:
    """A connection to a daemon; use :func:`connect`. Has Field's methods (see module doc)."""

    def __init__(
        self, socket_path: str | os.PathLike[str], *, timeout: float | None = None
    ) -> None:
        self.socket_path = Path(socket_path)
        try:  # the directory, the socket file and the peer's uid are checked first (sockets.py)
            self._sock = connect_unix(self.socket_path, timeout)
        except ChittaIOError:
            raise
        except OSError as exc:
            raise ChittaIOError(
                f"no chitta daemon answers on {self.socket_path}: {exc.strerror or exc}; "
                f"start one with `chitta serve`"
            ) from exc
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        try:
            self.info: dict[str, Any] = self._call("_info", {})
        except BaseException:
            self.close()
            raise

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        if self._closed:
            raise ClosedError("the connection is closed")
        rid = next(self._ids)
        data = protocol.frame(protocol.pack({"id": rid, "method": method, "params": params}))
        with self._lock:
            try:
                self._sock.sendall(data)
                body = _read_frame(self._sock)
            except OSError as exc:
                self._closed = True
                self._sock.close()
                if isinstance(exc, ChittaIOError):
                    raise
                raise ChittaIOError(f"lost the daemon on {self.socket_path}: {exc}") from exc
            if body is None:
                raise ChittaIOError("the daemon closed the connection")
        reply = protocol.unpack(body)
        if not isinstance(reply, dict) or ("error" not in reply and "result" not in reply):
            raise ProtocolError("the daemon sent a reply without result or error")
        if "error" in reply:
            raise protocol.error_from(reply["error"])
        if reply.get("id") != rid:
            raise ProtocolError(f"reply id {reply.get('id')!r} does not match request id {rid}")
        return reply["result"]

    # ---- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (the daemon and its field stay up). Idempotent."""
        if not self._closed:
            self._closed = True
            self._sock.close()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def path(self) -> Path:
        """The field's directory, as the daemon opened it."""
        return Path(self.info["path"])

    @property
    def instance_id(self) -> int | None:
        """The daemon's writer instance."""
        value = self.info["instance_id"]
        return None if value is None else int(value)

    def __enter__(self) -> RemoteField:  # noqa: PYI034
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def call(self, name: str, /, **arguments: Any) -> Any:
        """Run an organ's operation on the daemon's field (as ``Field.call``)."""
        return self._call(name, arguments)

    def __repr__(self) -> str:
        return f"<chitta.RemoteField {str(self.socket_path)!r}{' closed' if self._closed else ''}>"


def _read_frame(sock: Any) -> bytes | None:
    """One reply frame's body (None: the daemon closed the connection first), read with as
    few ``recv`` calls as it takes: a reply that fits comes in one, header and body."""
    buf = bytearray(sock.recv(READ_CHUNK))
    if not buf:
        return None
    while len(buf) < HEADER.size:
        more = sock.recv(READ_CHUNK)
        if not more:
            raise ChittaIOError("the daemon closed the connection mid-frame")
        buf += more
    (size,) = HEADER.unpack_from(buf)
    if size > protocol.MAX_FRAME:
        raise ProtocolError(f"the daemon sent a frame of {size} bytes, over the limit")
    end = HEADER.size + size
    if len(buf) > end:
        raise ProtocolError("the daemon sent more than one reply to one request")
    if len(buf) < end:
        rest = _recv_exact(sock, end - len(buf))
        if rest is None:
            raise ChittaIOError("the daemon closed the connection mid-frame")
        buf += rest
    return bytes(buf[HEADER.size :])


def _remote_method(method: Method) -> Callable[..., Any]:
    from chitta.field import Field

    sig = method.signature()
    post = method.result
    params_of = list(sig.parameters.values())[1:]  # without self
    plain = all(
        p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        for p in params_of
    )
    positional = [p.name for p in params_of if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    names = frozenset(p.name for p in params_of)
    required = frozenset(p.name for p in params_of if p.default is inspect.Parameter.empty)

    def call(self: RemoteField, *args: Any, **kwargs: Any) -> Any:
        if (
            plain
            and len(args) <= len(positional)
            and names.issuperset(kwargs)
            and not any(n in kwargs for n in positional[: len(args)])
        ):  # what sig.bind would accept, bound without it (the common case)
            params = dict(zip(positional, args))
            params.update(kwargs)
            if not required.issubset(params):
                sig.bind(self, *args, **kwargs)  # raises the TypeError Field gives
        else:
            bound = sig.bind(self, *args, **kwargs)  # TypeError for a wrong call, as Field gives
            params = dict(bound.arguments)
            params.pop(next(iter(sig.parameters)))  # self
        result = self._call(method.name, params)
        return result if post is None else post(result)

    call.__name__ = method.name
    call.__qualname__ = f"RemoteField.{method.name}"
    call.__doc__ = inspect.getdoc(getattr(Field, method.name))
    call.__signature__ = sig  # type: ignore[attr-defined]
    return call


for _method in METHODS.values():
    setattr(RemoteField, _method.name, _remote_method(_method))
del _method


def connect(
    socket: str | os.PathLike[str] | None = None,
    *,
    path: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> RemoteField:
    """Connect to the daemon serving a field (``chitta serve``).

    ``socket``: the daemon's socket; default: the default socket of the field
    at ``path`` (default ``$CHITTA_HOME``, else ``~/.local/share/chitta/default``),
    see docs/DAEMON.md. ``timeout``: seconds per call (None: wait).
    Raises ``ChittaIOError`` when no daemon answers, and its subclass
    ``UntrustedSocket`` when the socket's directory is not a 0700 directory of
    this user (or is a symlink), the socket is not this user's, or the process
    answering runs as another user.
    """
    if socket is None:
        from chitta.field import default_path

        socket = default_socket(path if path is not None else default_path())
    return RemoteField(socket, timeout=timeout)
