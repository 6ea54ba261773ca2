"""``chitta mcp-host``: a warm process serving full MCP SDK sessions on a Unix socket.

The official SDK's import is most of a ``chitta mcp`` start (see docs/DECISIONS.md
D-014). The host pays it once: it imports the SDK, opens the field,
listens on :func:`chitta.mcp.forward.host_socket` (0600 in a 0700 directory;
a peer of another uid is refused with ``SO_PEERCRED``), and for each accepted
connection runs the SDK's low-level ``Server`` (``build_server``, the same
tools as stdio and HTTP) over the SDK's own stdio transport, fed with the
connection's lines instead of stdin/stdout. ``chitta mcp`` then only forwards
bytes (``chitta/mcp/forward.py``).

One open field per host, shared by its sessions behind the tool lock (as with
``--http``): an open costs once, not per window, and sessions stay separate in
what matters to a memory (each keeps its client's name, hence source tool and
harness). A lock file held for the host's life makes a second host for the
same socket exit at once; holding it, any socket file left is stale and is
replaced. SIGTERM/SIGINT, or ``idle_exit_s`` without a session, stops it: open
sessions end, the field is flushed and closed, the socket removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import stat
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from chitta.errors import ChittaError, ChittaIOError, InvalidArgument
from chitta.mcp.forward import host_socket
from chitta.mcp.screen import ScreenedLines
from chitta.mcp.tools import ChittaMCP
from chitta.server.sockets import check_peer, private_dir

MAX_LINE = 64 << 20  # one JSON-RPC message; a longer line ends that connection
MAX_SOCKET_PATH = 107


class _Lines:
    """The async-file face the SDK's ``stdio_server`` reads and writes, over one connection."""

    def __init__(self, stream: Any) -> None:
        from anyio.streams.buffered import BufferedByteReceiveStream

        self._stream = stream
        self._buffered = BufferedByteReceiveStream(stream)

    async def __aiter__(self) -> AsyncIterator[bytes]:  # raw: ScreenedLines decodes (strictly)
        import anyio

        while True:
            try:
                line = await self._buffered.receive_until(b"\n", MAX_LINE)
            except (
                anyio.IncompleteRead,
                anyio.EndOfStream,
                anyio.DelimiterNotFound,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
            ):
                return
            yield line

    async def write(self, text: str) -> None:
        await self._stream.send(text.encode())

    async def flush(self) -> None:
        return None


class McpHost:
    """Serves MCP sessions for one field on a Unix socket until stopped."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        socket_path: str | os.PathLike[str] | None = None,
        embedder: Any = "auto",
        idle_exit_s: float | None = None,
    ) -> None:
        from chitta.mcp.forward import default_field

        if idle_exit_s is not None and not idle_exit_s > 0:
            raise InvalidArgument(f"idle_exit_s must be > 0 seconds or None, got {idle_exit_s!r}")
        self.field_path = (
            Path(path if path is not None else default_field()).expanduser().absolute()
        )
        self.socket_path = Path(
            socket_path if socket_path is not None else host_socket(self.field_path)
        ).absolute()
        if len(os.fsencode(str(self.socket_path))) > MAX_SOCKET_PATH:
            raise InvalidArgument(
                f"socket path is longer than {MAX_SOCKET_PATH} bytes: {self.socket_path}"
            )
        self.idle_exit_s = idle_exit_s
        self.embedder = embedder
        self.state = ChittaMCP(self.field_path, embedder=embedder)  # the start-up check of the path
        self.sessions = 0  # open now
        self.served = 0  # since start
        self.refused = 0
        self._idle_since = time.monotonic()
        self._lock_fd: int | None = None
        self._listener: socket.socket | None = None

    # ---- lifecycle ------------------------------------------------------------------------
    def _take_lock(self) -> None:
        private_dir(self.socket_path.parent)
        fd = os.open(f"{self.socket_path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ChittaIOError(
                f"an MCP host already serves {self.field_path} on {self.socket_path}"
            ) from None
        self._lock_fd = fd

    def bind(self) -> None:
        """Take the host lock, replace a stale socket file, listen (mode 0600)."""
        self._take_lock()
        if self.socket_path.is_symlink() or self.socket_path.exists():
            if not stat.S_ISSOCK(self.socket_path.lstat().st_mode):
                raise ChittaIOError(
                    f"{self.socket_path} exists and is not a socket; not replacing it"
                )
            self.socket_path.unlink()  # stale: we hold the lock, so no host listens on it
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(str(self.socket_path))
        finally:
            os.umask(old)
        os.chmod(self.socket_path, 0o600)
        listener.listen(128)
        self._listener = listener

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()
        self.state.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def info(self) -> dict[str, Any]:
        return {
            "socket": str(self.socket_path),
            "path": str(self.field_path),
            "pid": os.getpid(),
            "idle_exit_s": self.idle_exit_s,
        }

    # ---- serving --------------------------------------------------------------------------
    async def _session(self, stream: Any) -> None:
        """One agent window: its own writer instance (a Field opened for this
        session, closed with it) behind its own SDK server."""
        import anyio
        from anyio.abc import SocketAttribute
        from mcp.server.stdio import stdio_server

        from chitta.mcp.server import build_server

        async with stream:
            try:
                check_peer(stream.extra(SocketAttribute.raw_socket))
            except ChittaIOError:
                self.refused += 1
                return
            self.sessions += 1
            self.served += 1
            state = ChittaMCP(self.field_path, embedder=self.embedder)
            try:
                await anyio.to_thread.run_sync(
                    state.field
                )  # opens it (ms for a field with a checkpoint)
                server = build_server(state)
                lines = _Lines(stream)
                screened = ScreenedLines(lines)  # every line answered (chitta/mcp/screen.py)
                async with stdio_server(stdin=screened, stdout=lines) as (read, write):  # type: ignore[arg-type]
                    screened.attach(write)
                    await server.run(read, write, server.create_initialization_options())
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the client went away mid-write: only this session ends
            except (
                ChittaError
            ) as exc:  # the field cannot be opened now: this session ends, the host stays
                print(
                    f"chitta mcp-host: session refused: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )
            finally:
                with anyio.CancelScope(shield=True):  # also when the host is stopping
                    await anyio.to_thread.run_sync(state.close)  # flushes this window's writes
                self.sessions -= 1
                self._idle_since = time.monotonic()

    async def _idle_watch(self, scope: Any) -> None:
        import anyio

        assert self.idle_exit_s is not None
        while True:
            await anyio.sleep(min(5.0, self.idle_exit_s / 4))
            if self.sessions == 0 and time.monotonic() - self._idle_since >= self.idle_exit_s:
                scope.cancel()
                return

    async def _signals(self, scope: Any, *, task_status: Any) -> None:
        import signal

        import anyio

        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            task_status.started()
            async for _ in signals:
                scope.cancel()
                return

    async def serve(self, ready: Callable[[dict[str, Any]], None] | None = None) -> None:
        import anyio
        from anyio.abc import SocketListener

        assert self._listener is not None
        listener = await SocketListener.from_socket(self._listener)
        async with anyio.create_task_group() as tg:
            await tg.start(self._signals, tg.cancel_scope)
            if ready is not None:  # only now: a SIGTERM right after it stops the host cleanly
                ready(self.info())
            if self.idle_exit_s is not None:
                tg.start_soon(self._idle_watch, tg.cancel_scope)
            while True:
                stream = await listener.accept()
                tg.start_soon(self._session, stream)

    def run(self, ready: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Bind, open the field (overlapping the SDK import), call ``ready(info)``, serve until stopped."""
        import signal

        def early_stop(signum: int, frame: Any) -> None:
            raise SystemExit(0)  # before serving: the finally below still closes and cleans up

        previous = {sig: signal.signal(sig, early_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.bind()
            self.state.start_open()
            import anyio

            import chitta.mcp.server  # noqa: F401  the SDK, imported once for every session

            self.state.field()  # a bad path fails here, before anything is served
            self.state.close()  # sessions open their own instances
            anyio.run(self.serve, ready)
        finally:
            self.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def run_host(
    path: str | os.PathLike[str] | None = None,
    *,
    socket_path: str | os.PathLike[str] | None = None,
    embedder: Any = "auto",
    idle_exit_s: float | None = None,
    ready: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Serve MCP sessions for the field on its host socket until SIGTERM/SIGINT (or idle)."""
    McpHost(path, socket_path=socket_path, embedder=embedder, idle_exit_s=idle_exit_s).run(ready)


__all__ = ["McpHost", "run_host"]
