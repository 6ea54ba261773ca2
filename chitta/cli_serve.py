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
@click.option("--maintain-every", type=click.FloatRange(min=0), default=300.0, show_default=True,
              help="Seconds between maintenance rounds (passes + checkpoint when due); 0: never.")
@click.option("--checkpoint-records", type=click.IntRange(min=1), default=None,
              help="Records since the last checkpoint that make one due (default 50,000).")
@click.pass_context
def serve(ctx: click.Context, socket_path: str | None, durability: str, as_json: bool,
          maintain_every: float, checkpoint_records: int | None) -> None:
    """Serve the field on a Unix socket until SIGTERM (docs/DAEMON.md).

    Other processes use it with chitta.connect(). The socket is mode 0600;
    peers of another user are refused. Every --maintain-every seconds it runs
    the maintenance passes and writes a checkpoint when one is due. SIGTERM or Ctrl-C stops it cleanly,
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
        from chitta.checkpoint import CheckpointPolicy

        policy = CheckpointPolicy() if checkpoint_records is None else CheckpointPolicy(records=checkpoint_records)
        run_daemon(_field_path(ctx), socket_path=socket_path, durability=durability, ready=ready,
                   maintain_every=maintain_every or None, checkpoint_policy=policy)


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


