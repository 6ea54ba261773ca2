"""`chitta serve` and `chitta mcp` (registered on the main group in chitta/cli/app.py)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from chitta.cli.app import EPILOG, _errors_to_exit, _field_path, main
from chitta.cli.exits import EXIT_ERROR


# ---- surfaces: daemon and MCP server (chitta/server/daemon.py, chitta/mcp/server.py) ----------
@main.command(epilog=EPILOG)
@click.option(
    "--socket",
    "socket_path",
    type=click.Path(dir_okay=False),
    help="Unix socket to listen on (default: $XDG_RUNTIME_DIR/chitta/<field-hash>.sock).",
)
@click.option(
    "--durability",
    type=click.Choice(["flush", "fsync", "buffered"]),
    default="flush",
    show_default=True,
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line when ready.")
@click.option(
    "--maintain-every",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="Seconds between maintenance rounds (passes + checkpoint when due); 0: never.",
)
@click.option(
    "--checkpoint-records",
    type=click.IntRange(min=1),
    default=None,
    help="Records since the last checkpoint that make one due (default 50,000).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help="Connections served at once (a thread each); one more is refused with an error.",
)
@click.option(
    "--frame-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Seconds within which a request, once begun, must arrive whole; slower senders are cut off.",
)
@click.option(
    "--group-commit/--no-group-commit",
    default=True,
    show_default=True,
    help="Run concurrent writing calls as groups: one record, one write per group "
    "(chitta/server/group.py); --no-group-commit runs them one at a time.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    socket_path: str | None,
    durability: str,
    as_json: bool,
    maintain_every: float,
    checkpoint_records: int | None,
    max_connections: int,
    frame_timeout: float,
    group_commit: bool,
) -> None:
    """Serve the field on a Unix socket until SIGTERM (docs/DAEMON.md).

    Other processes use it with chitta.connect(). The socket is mode 0600;
    peers of another user are refused. Every --maintain-every seconds it runs
    the maintenance passes and writes a checkpoint when one is due. SIGTERM or Ctrl-C stops it cleanly,
    with everything flushed.

    \b
    Examples:
      chitta serve &
      chitta --path ./field serve --socket /tmp/chitta-demo/f.sock --json
      python -c "import chitta; print(chitta.connect().stats())"
    """
    from chitta.server.daemon import serve as run_daemon

    def ready(daemon: Any) -> None:
        if as_json:
            from chitta.ops.json_ids import dumps  # instance_id as a string (D-038)

            click.echo(dumps(daemon.info()))
        else:
            click.echo(
                f"chitta serve: {daemon.field.path} on {daemon.socket_path} (pid {daemon.info()['pid']})"
            )
        sys.stdout.flush()

    with _errors_to_exit():
        from chitta.field.checkpoint import CheckpointPolicy

        policy = (
            CheckpointPolicy()
            if checkpoint_records is None
            else CheckpointPolicy(records=checkpoint_records)
        )
        run_daemon(
            _field_path(ctx),
            socket_path=socket_path,
            durability=durability,
            ready=ready,
            maintain_every=maintain_every or None,
            checkpoint_policy=policy,
            max_connections=max_connections,
            frame_timeout_s=frame_timeout,
            group_commit=group_commit,
        )


@main.command("mcp", epilog=EPILOG)
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: the address to listen on; loopback only unless --allow-remote.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8731,
    show_default=True,
    help="With --http: the TCP port (0: any free port; the URL printed says which).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="With --http: allow a non-loopback host (no authentication: anyone who reaches it can "
    "read and write the field).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="With --http: print one JSON line when ready."
)
@click.option(
    "--no-host",
    is_flag=True,
    help="stdio: serve in this process only; neither forward to a warm `chitta mcp-host` nor start one.",
)
@click.pass_context
def mcp_cmd(
    ctx: click.Context,
    http: bool,
    host: str,
    port: int,
    allow_remote: bool,
    as_json: bool,
    no_host: bool,
) -> None:
    """Run the MCP server on stdio, or with --http on loopback (needs the `mcp` extra; docs/MCP.md).

    Tools: remember, recall, get, forget, link, write_gate_stats, stats.
    Each server process is its own writer instance on the shared field.
    On stdio, when a `chitta mcp-host` serves the field this process only
    forwards bytes to it (fast start); when none does, it starts one in the
    background and serves this session itself (--no-host: neither).
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
    if http and no_host:
        raise click.UsageError("--no-host goes with stdio, not --http")
    opened = None
    if not http and not no_host:
        from chitta.mcp import forward as mcp_forward

        with _errors_to_exit():
            code = mcp_forward.try_forward(_field_path(ctx))
            grace = mcp_forward.auto_host_grace()  # a bad $CHITTA_MCP_HOST_GRACE fails here
        if code is not None:
            sys.exit(code)

        def opened() -> None:
            mcp_forward.spawn_host(_field_path(ctx), grace)

    from importlib.util import find_spec

    if find_spec("mcp") is None:  # pragma: no cover - depends on the environment
        # (found, not imported: the SDK import is most of the start, and overlaps the field's open)
        click.echo(
            "chitta: the MCP server needs the mcp extra (pip install 'chitta[mcp]')", err=True
        )
        sys.exit(EXIT_ERROR)
    with _errors_to_exit():
        if not http:
            from chitta.mcp.server import run_stdio

            run_stdio(_field_path(ctx), opened=opened)
            return
        from chitta.mcp.http import run_http

        def ready(info: dict[str, Any]) -> None:
            if as_json:
                click.echo(json.dumps(info))
            else:
                click.echo(f"chitta mcp: {info['url']} (field {info['path']}, pid {info['pid']})")
            sys.stdout.flush()

        run_http(_field_path(ctx), host=host, port=port, allow_remote=allow_remote, ready=ready)


@main.command("mcp-host", epilog=EPILOG)
@click.option(
    "--idle-exit",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Exit after this many seconds with no session open; 0: never.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line when ready.")
@click.pass_context
def mcp_host_cmd(ctx: click.Context, idle_exit: float, as_json: bool) -> None:
    """Keep the MCP SDK warm: serve MCP sessions for `chitta mcp` on a Unix socket (docs/MCP.md).

    `chitta mcp` forwards its stdio to this host when it runs, so an agent
    window's server answers in a fraction of a second instead of paying the
    SDK's import. `chitta mcp` starts one itself (it exits 2 minutes after its last session)
    when none runs. The socket is mode 0600; peers of another user are
    refused. SIGTERM or Ctrl-C stops it (the field is flushed and closed).

    \b
    Examples:
      chitta mcp-host &
      chitta --path ./field mcp-host --json --idle-exit 600
    """
    from importlib.util import find_spec

    if find_spec("mcp") is None:  # pragma: no cover - depends on the environment
        click.echo("chitta: the MCP host needs the mcp extra (pip install 'chitta[mcp]')", err=True)
        sys.exit(EXIT_ERROR)

    def ready(info: dict[str, Any]) -> None:
        if as_json:
            click.echo(json.dumps(info))
        else:
            click.echo(f"chitta mcp-host: {info['path']} on {info['socket']} (pid {info['pid']})")
        sys.stdout.flush()

    with _errors_to_exit():
        from chitta.mcp.host import run_host

        run_host(_field_path(ctx), idle_exit_s=idle_exit or None, ready=ready)
