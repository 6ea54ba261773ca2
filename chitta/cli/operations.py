"""`chitta operations` and `chitta call`: organ operations from the command line.

The operations come from the method table (chitta/server/methods.py): every
registered organ's operations, with their JSON schemas. ``chitta call NAME
key=value ...`` runs one (values are JSON when they parse as JSON, else strings;
``--args '{...}'`` takes one JSON object instead).
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.table import Table

import chitta
from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main
from chitta.errors import InvalidArgument


def _arguments(pairs: tuple[str, ...], args_json: str | None) -> dict[str, Any]:
    if args_json is not None:
        if pairs:
            raise click.UsageError("give key=value pairs or --args JSON, not both")
        try:
            value = json.loads(args_json)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(
                f'not JSON: {exc}; example: --args \'{{"session": "s1"}}\'', param_hint="--args"
            ) from None
        if not isinstance(value, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--args")
        return value
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(
                f"{pair!r} is not key=value; example: session=s1", param_hint="ARGS"
            )
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


@main.command(epilog=EPILOG)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def operations(as_json: bool) -> None:
    """List the organ operations this chitta offers (``chitta call`` runs one).

    \b
    Example:
      chitta operations
    """
    from chitta.server.methods import table

    with _errors_to_exit():
        ops = {name: m for name, m in table().items() if m.operation is not None}
    if as_json:
        _emit_json(
            {
                name: {
                    "description": m.description,
                    "schema": m.schema,
                    "reads": m.reads,
                    "writes": m.operation.writes if m.operation else False,
                }
                for name, m in ops.items()
            }
        )
        return
    if not ops:
        console.print("no organ operations are registered")
        return
    t = Table(title="organ operations")
    for col in ("name", "arguments", "writes", "description"):
        t.add_column(col)
    for name, m in sorted(ops.items()):
        schema = m.schema or {}
        required = set(schema.get("required", ()))
        args = ", ".join(a if a in required else f"[{a}]" for a in schema.get("properties", {}))
        t.add_row(name, args, "yes" if m.operation and m.operation.writes else "", m.description)
    console.print(t)


@main.command(epilog=EPILOG)
@click.argument("name")
@click.argument("pairs", nargs=-1, metavar="[KEY=VALUE]...")
@click.option("--args", "args_json", help="The arguments as one JSON object.")
@click.pass_context
def call(ctx: click.Context, name: str, pairs: tuple[str, ...], args_json: str | None) -> None:
    """Run an organ operation and print its result as JSON.

    \b
    Example:
      chitta call session_tally session=s1
    """
    from chitta.server.methods import check_arguments, table

    arguments = _arguments(pairs, args_json)
    with _errors_to_exit():
        method = table().get(name)
        if method is None or method.operation is None:
            raise InvalidArgument(f"no operation named {name!r}; `chitta operations` lists them")
        check_arguments(method, arguments)  # before the field is opened (or created)
        writes = method.operation.writes
        with chitta.open(_field_path(ctx), read_only=not writes, create=writes) as field:
            _emit_json(field.call(name, **arguments))
