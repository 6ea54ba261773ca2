"""`chitta pruned` and `chitta restore`: what the write gate pruned, and undoing it."""

from __future__ import annotations

import click
from rich.table import Table

import chitta
from chitta.cli.app import (
    EPILOG,
    _emit_json,
    _errors_to_exit,
    _field_path,
    _parse_id,
    console,
    main,
)


@main.command(epilog=EPILOG)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def pruned(ctx: click.Context, as_json: bool) -> None:
    """List memories the write gate pruned (never recalled for the prune age).

    \b
    Example:
      chitta pruned
      chitta restore 9960271000442503169
    """
    with _errors_to_exit(), chitta.open(_field_path(ctx), read_only=True) as field:
        rows = field.pruned()
    if as_json:
        _emit_json(rows)
        return
    table = Table(title=f"{len(rows)} pruned memories (chitta restore ID brings one back)")
    for col in ("id", "kind", "pruned_at", "text"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["id"], r["kind"], f"{r['pruned_at']:.0f}", r["text"][:80])
    console.print(table)


@main.command(epilog=EPILOG)
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def restore(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Bring a pruned memory back (as a new memory the gate never prunes).

    \b
    Example:
      chitta restore 9960271000442503169
    """
    mid = _parse_id(memory_id)
    with _errors_to_exit(), chitta.open(_field_path(ctx), create=False) as field:
        new = field.restore(mid)
    if as_json:
        _emit_json({"restored": str(new), "from": str(mid)})
    else:
        click.echo(f"restored {mid} as {new}")
