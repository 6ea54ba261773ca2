"""`chitta serve` and `chitta mcp` (registered on the main group in chitta/cli.py)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from chitta.cli import EPILOG, EXIT_ERROR, _errors_to_exit, _field_path, main


# ---- surfaces: daemon and MCP server (chitta/daemon.py, chitta/mcp_server.py) ----------
@main.command(epilog=EPILOG)
@click.option("--socket", "socket_path", type=click.Path(dir_okay=False),
              help="Unix socket to listen on (default: $XDG_RUNTIME_DIR/chitta/<field-hash>.sock).")
@click.option("--durability", type=click.Choice(["flush", "fsync", "buffered"]), default="flush", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line when ready.")
@click.pass_context
def serve(ctx: click.Context, socket_path: str | None, durability: str, as_json: bool) -> None:
    """Serve the field on a Unix socket until SIGTERM (docs/DAEMON.md).

    Other processes use it with chitta.connect(). The socket is mode 0600;
    peers of another user are refused. SIGTERM or Ctrl-C stops it cleanly,
    with everything flushed.

    \b
    Examples:
      chitta serve &
      chitta --path ./field serve --socket /tmp/f.sock --json
      python -c "import chitta; print(chitta.connect().stats())"
    """
    from chitta.daemon import serve as run_daemon

    def ready(daemon: Any) -> None:
        if as_json:
            click.echo(json.dumps(daemon.info()))
        else:
            click.echo(f"chitta serve: {daemon.field.path} on {daemon.socket_path} (pid {daemon.info()['pid']})")
        sys.stdout.flush()

    with _errors_to_exit():
        run_daemon(_field_path(ctx), socket_path=socket_path, durability=durability, ready=ready)


@main.command("mcp", epilog=EPILOG)
@click.pass_context
def mcp_cmd(ctx: click.Context) -> None:
    """Run the MCP server on stdio (needs the `mcp` extra; docs/MCP.md).

    Tools: remember, recall, get, forget, link, write_gate_stats, stats.
    Each server process is its own writer instance on the shared field.

    \b
    Example (Claude Code):
      claude mcp add chitta -- chitta --path ~/.local/share/chitta/default mcp
    """
    try:
        import mcp.server.lowlevel  # noqa: F401  (the SDK; loaded here anyway)

        from chitta.mcp_server import run_stdio
    except ImportError as exc:  # pragma: no cover - depends on the environment
        click.echo(f"chitta: the MCP server needs the mcp extra (pip install 'chitta[mcp]'): {exc}", err=True)
        sys.exit(EXIT_ERROR)
    with _errors_to_exit():
        run_stdio(_field_path(ctx))


