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
@click.option("--http", "http", is_flag=True,
              help="Serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --http: the address to listen on; loopback only unless --allow-remote.")
@click.option("--port", type=click.IntRange(0, 65535), default=8731, show_default=True,
              help="With --http: the TCP port (0: any free port; the URL printed says which).")
@click.option("--allow-remote", is_flag=True,
              help="With --http: allow a non-loopback host (no authentication: anyone who reaches it can "
                   "read and write the field).")
@click.option("--json", "as_json", is_flag=True, help="With --http: print one JSON line when ready.")
@click.pass_context
def mcp_cmd(ctx: click.Context, http: bool, host: str, port: int, allow_remote: bool, as_json: bool) -> None:
    """Run the MCP server on stdio, or with --http on loopback (needs the `mcp` extra; docs/MCP.md).

    Tools: remember, recall, get, forget, link, write_gate_stats, stats.
    Each server process is its own writer instance on the shared field.
    With --http, one process serves many clients at http://HOST:PORT/mcp
    until SIGTERM or Ctrl-C (the field is flushed and closed).

    \b
    Examples:
      claude mcp add chitta -- chitta --path ~/.local/share/chitta/default mcp
      chitta mcp --http --port 8731
      claude mcp add --transport http chitta http://127.0.0.1:8731/mcp
    """
    if not http and (allow_remote or as_json or host != "127.0.0.1" or port != 8731):
        raise click.UsageError("--host, --port, --allow-remote and --json go with --http")
    from importlib.util import find_spec

    if find_spec("mcp") is None:  # pragma: no cover - depends on the environment
        # (found, not imported: the SDK import is most of the start, and overlaps the field's open)
        click.echo("chitta: the MCP server needs the mcp extra (pip install 'chitta[mcp]')", err=True)
        sys.exit(EXIT_ERROR)
    with _errors_to_exit():
        if not http:
            from chitta.mcp_server import run_stdio

            run_stdio(_field_path(ctx))
            return
        from chitta.mcp_http import run_http

        def ready(info: dict[str, Any]) -> None:
            if as_json:
                click.echo(json.dumps(info))
            else:
                click.echo(f"chitta mcp: {info['url']} (field {info['path']}, pid {info['pid']})")
            sys.stdout.flush()

        run_http(_field_path(ctx), host=host, port=port, allow_remote=allow_remote, ready=ready)
