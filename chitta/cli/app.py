"""The ``chitta`` command line.

Exit codes (also in ``chitta --help``):
  0 success                      3 verify: only torn tails (unfinished writes)
  1 error                        4 damage: corruption found (verify, or on open)
  2 usage error or bad value     5 not found (no such memory / not a field)
                                 6 locked (a named instance is held)
"""

from __future__ import annotations

from chitta.mcp.forward import fast_path as _mcp_fast_path

_mcp_fast_path()  # `chitta [--path P] mcp` with a warm MCP host: forward stdio to it and exit (docs/MCP.md)

from chitta.cli.served import fast_path as _served_fast_path

_served_fast_path()  # `chitta stats|get|forget` with a daemon serving the field: answered by it

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

import chitta
from chitta import errors, ops
from chitta.cli.exits import (
    EXIT_CORRUPT,
    EXIT_TORN,
)
from chitta.cli.exits import exit_code as _exit_code
from chitta.cli.render import kv_table as _kv_table
from chitta.cli.render import memory_table, memory_view
from chitta.field.inspect import iter_records, verify
from chitta.ops import checks as _validate
from chitta.ops import json_ids

EPILOG = """\b
Exit codes: 0 ok, 1 error, 2 usage or bad value, 3 verify found only torn tails,
4 corruption, 5 not found (memory or field), 6 instance locked.
The field is --path, else $CHITTA_HOME, else ~/.local/share/chitta/default.
"""

console = Console(highlight=False, soft_wrap=True)
F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def _errors_to_exit() -> Iterator[None]:
    try:
        yield
    except errors.ChittaError as exc:
        click.echo(f"chitta: {type(exc).__name__}: {exc}", err=True)
        sys.exit(_exit_code(exc))


def _emit_json(value: Any) -> None:
    """Print ``value`` as JSON, ids as strings (chitta/ops/json_ids.py, D-038)."""
    click.echo(json_ids.dumps(value, indent=2))


def _field_path(ctx: click.Context, path: str | None = None) -> Path:
    if path is not None:
        return Path(path)
    obj = ctx.find_root().obj or {}
    p = obj.get("path")
    return Path(p) if p else chitta.default_path()


def _memory_dict(m: chitta.Memory) -> dict[str, Any]:
    from chitta.server.json_dialect import memory_json

    return memory_view(memory_json(m))


def _read_text(text: str | None, file: Any) -> str:
    """A command's text: the argument, stdin for ``-``, or the ``--file`` (not both)."""
    if file is not None:
        if text is not None:
            raise click.UsageError("give TEXT or --file, not both")
        content: str = file.read()
        return content.rstrip("\n")  # the newline that ends a file is not part of the memory
    if text == "-":
        return sys.stdin.read().rstrip("\n")
    if text is None:
        raise click.UsageError("give TEXT, `-` to read stdin, or --file PATH")
    return text


def _store_path(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        root = ctx.find_root()
        root.obj = {**(root.obj or {}), "path": value}


def _path_after_command() -> click.Option:
    return click.Option(
        ["--path", "path_after_command"],  # its own name: verify/dump have a PATH argument
        type=click.Path(file_okay=False),
        expose_value=False,
        callback=_store_path,
        help="Field directory (the same as --path before the command).",
    )


class FieldGroup(click.Group):
    """A group whose commands all take ``--path`` after their name too (people write
    ``chitta mcp --path F`` as often as ``chitta --path F mcp``); a command with its own
    ``--path`` (``demo``: where to build) keeps it."""

    group_class = type  # subgroups are FieldGroups as well

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if not any("--path" in getattr(p, "opts", ()) for p in cmd.params):
            cmd.params.append(_path_after_command())
        super().add_command(cmd, name)


@click.group(cls=FieldGroup, invoke_without_command=True, epilog=EPILOG)
@click.option(
    "--path", envvar="CHITTA_HOME", type=click.Path(file_okay=False), help="Field directory."
)
@click.option(
    "--remote",
    envvar="CHITTA_REMOTE",
    help="Share the field through s3://bucket/prefix (docs/REMOTE.md).",
)
@click.version_option(chitta.__version__, prog_name="chitta")
@click.pass_context
def main(ctx: click.Context, path: str | None, remote: str | None) -> None:
    """chitta: local-first memory for AI agents.

    \b
    Examples:
      chitta demo
      chitta remember "the CI runs on 2 cores" --tag ci
      chitta recall "how many cores does CI have" --explain
      chitta get 9960271000442503169
      chitta stats --json
      chitta verify
    """
    ctx.obj = {"path": path, **(ctx.obj or {})}  # a --path after the command wins
    if remote:  # chitta.open() reads it: every command of this process opens the field replicated
        os.environ["CHITTA_REMOTE"] = remote
    if ctx.invoked_subcommand is None:
        _orientation(ctx)


def _orientation(ctx: click.Context) -> None:
    root = _field_path(ctx)
    console.print(f"[bold]chitta {chitta.__version__}[/bold]  field: {root}")
    if (root / "segments").is_dir():
        with _errors_to_exit(), chitta.open(root, read_only=True, embedder=None) as field:
            s = field.stats()
        console.print(
            f"{s.memories} memories ({s.forgotten} forgotten), {s.instances} writer instances, "
            f"{s.segments} segments, {s.bytes} bytes"
        )
    else:
        console.print("no field here yet; `chitta remember TEXT` creates one")
    given = (ctx.find_root().obj or {}).get("path")
    c = f"chitta --path {given}" if given else "chitta"
    console.print(
        f"next: chitta demo | {c} remember TEXT | {c} recall QUERY | {c} get ID | {c} list | "
        f"{c} stats | {c} sync-memory-md FILE | {c} verify | {c} doctor | chitta --help"
    )


@main.command(epilog=EPILOG)
@click.argument("text", required=False)
@click.option("--file", "text_file", type=click.File("r"), help="Read the text from a file.")
@click.option(
    "--kind",
    type=click.Choice(sorted(ops.MEMORY_KINDS)),
    help="The memory's kind (default: inferred from its text, tags and realm; docs/KINDS.md).",
)
@click.option("--realm", help="Project or domain the memory belongs to.")
@click.option("--session", help="Session id of the writer.")
@click.option("--source-tool", help="Tool that produced it (infers the harness).")
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for several.")
@click.option("--confidence", type=float, default=1.0, show_default=True)
@click.option("--dedup", is_flag=True, help="Reinforce a memory saying the same instead.")
@click.option(
    "--provenance",
    type=click.Choice(sorted(ops.PROVENANCES)),
    help="Who wrote it (default: inferred from --source-tool).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def remember(
    ctx: click.Context,
    text: str | None,
    text_file: Any,
    kind: str | None,
    realm: str | None,
    session: str | None,
    source_tool: str | None,
    tags: tuple[str, ...],
    confidence: float,
    dedup: bool,
    provenance: str | None,
    as_json: bool,
) -> None:
    """Store TEXT (`-`: read stdin; or --file) as a memory and print its id.

    \b
    Examples:
      chitta remember "deploys need the VPN" --kind decision --tag ops
      git log -1 --format=%B | chitta remember - --tag commit
    """
    text = _read_text(text, text_file)
    with _errors_to_exit():
        _validate.text(text)  # a bad text must not even create the field
    with _errors_to_exit(), chitta.open(_field_path(ctx)) as field:
        given: dict[str, Any] = {} if kind is None else {"kind": kind}  # absent: inferred
        mid = field.remember(
            text,
            **given,
            realm=realm,
            session=session,
            source_tool=source_tool,
            tags=list(tags),
            confidence=confidence,
            dedup=dedup,
            provenance=provenance,
        )
    if as_json:
        _emit_json({"id": mid})
    else:
        click.echo(mid)


def _parse_id(value: str) -> int:
    try:
        return int(value, 0)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an integer id") from None


@contextmanager
def _served_or_opened(ctx: click.Context, **open_args: Any) -> Iterator[Any]:
    """The daemon serving the field (``chitta serve``) when one answers at the field's
    socket: the call skips opening and replaying the field; else the field itself, opened
    with ``open_args``. ``CHITTA_NO_DAEMON=1`` always opens."""
    root = _field_path(ctx)
    if os.environ.get("CHITTA_NO_DAEMON") != "1":
        from chitta.server.client import connect
        from chitta.server.daemon import default_socket

        sock = default_socket(root)
        if sock.exists():
            try:
                remote = connect(sock, timeout=30)
            except errors.ChittaIOError as exc:  # stale socket, or not ours: say so, open instead
                click.echo(f"chitta: not using the daemon at {sock}: {exc}", err=True)
            else:
                with remote:
                    yield remote
                return
    with chitta.open(root, **open_args) as field:
        yield field


@main.command(epilog=EPILOG)
@click.argument("memory_id")
@click.option("--full", is_flag=True, help="The whole text, however long.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def get(ctx: click.Context, memory_id: str, full: bool, as_json: bool) -> None:
    """Show one memory.

    \b
    Example:
      chitta get 9960271000442503169 --json
    """
    mid = _parse_id(memory_id)
    with _errors_to_exit(), _served_or_opened(ctx, read_only=True, embedder=None) as field:
        m = field.get(mid)
    d = _memory_dict(m)
    if as_json:
        _emit_json(d)
    else:
        console.print(memory_table(mid, d, full=full))


@main.command(epilog=EPILOG)
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def forget(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Forget (soft-delete) a memory.

    \b
    Example:
      chitta forget 9960271000442503169
    """
    mid = _parse_id(memory_id)
    with _errors_to_exit(), _served_or_opened(ctx, create=False, embedder=None) as field:
        field.forget(mid)  # no model: forgetting embeds nothing
    if as_json:
        _emit_json({"forgotten": str(mid)})  # an id, as a string (D-038)
    else:
        click.echo(f"forgot {mid}")


@main.command(epilog=EPILOG)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts and sizes of the field.

    \b
    Example:
      chitta --path ./field stats --json
    """
    with _errors_to_exit(), _served_or_opened(ctx, read_only=True, embedder=None) as field:
        s = field.stats().as_dict()
    if as_json:
        _emit_json(s)
    else:
        console.print(_kv_table("field", s))


@main.command(epilog=EPILOG)
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def verify_cmd(ctx: click.Context, path: str | None, as_json: bool) -> None:
    """Check every record of every segment (read-only; repairs nothing).

    Exit 0 when clean, 3 when the only findings are torn tails (unfinished
    writes of a crashed or running writer), 4 when there is corruption.

    \b
    Example:
      chitta verify ~/.local/share/chitta/default --json
    """
    with _errors_to_exit():
        report = verify(_field_path(ctx, path))
    torn = [d for d in report["damages"] if d["kind"] == "torn_tail"]
    bad = [d for d in report["damages"] if d["kind"] != "torn_tail"]
    if as_json:
        _emit_json(report)
    else:
        console.print(
            f"{report['segments']} segments, {report['records']} valid records, {report['bytes']} bytes"
        )
        if report["damages"]:
            table = Table(
                "kind",
                "segment",
                "offset",
                "bytes",
                "detail",
                title="findings",
                title_justify="left",
            )
            for d in report["damages"]:
                table.add_row(
                    d["kind"], d["segment"], str(d["offset"]), str(d["bytes"]), d["detail"]
                )
            console.print(table)
        else:
            console.print("clean")
    if bad:
        sys.exit(EXIT_CORRUPT)
    if torn:
        sys.exit(EXIT_TORN)


verify_cmd.name = "verify"


@main.command(epilog=EPILOG)
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--limit", type=int, default=None, help="Stop after N records.")
@click.option("--salvage", is_flag=True, help="Skip damaged records instead of stopping.")
@click.option("--vectors", is_flag=True, help="Show vectors and codes (base64), not their sizes.")
@click.pass_context
def dump(
    ctx: click.Context,
    path: str | None,
    as_json: bool,
    limit: int | None,
    salvage: bool,
    vectors: bool,
) -> None:
    """Print every record in replay order: seqno, instance, op and fields.

    \b
    Examples:
      chitta dump --limit 20
      chitta dump ./field --json | jq .op
    """
    with _errors_to_exit():
        for n, rec in enumerate(iter_records(_field_path(ctx, path), salvage=salvage)):
            if limit is not None and n >= limit:
                break
            if not vectors and rec["op"] is not None:
                rec["fields"] = _hide(rec["op"], rec["fields"])
            if as_json:
                click.echo(json_ids.dumps(rec))
            else:
                fields = json.dumps(rec["fields"], default=str, ensure_ascii=False)
                click.echo(f"{rec['seqno']:>10} {rec['instance']:08x} {rec['op']:<20} {fields}")


@main.command(epilog=EPILOG)
@click.option(
    "--path",
    "demo_path",
    type=click.Path(file_okay=False),
    help="Where to build the demo field (default: a new temporary directory).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def demo(demo_path: str | None, as_json: bool) -> None:
    """Ingest the bundled team chat, then answer questions from it with recall.

    \b
    Example:
      chitta demo
    """
    from chitta.cli.demo import run_demo

    with _errors_to_exit():
        run_demo(demo_path, as_json=as_json, console=console)


def _hide(op: str, fields: dict[str, Any]) -> dict[str, Any]:
    from chitta.cli.manage import hide_blobs

    if op == "Batch":
        return {
            "ops": [
                {**item, "fields": hide_blobs(item["op"], item["fields"])}
                if "fields" in item
                else item
                for item in fields["ops"]
            ]
        }
    return hide_blobs(op, fields)


# ---- commands in their own modules -------------------------------------------------
from chitta.cli import checkpoint as cli_checkpoint  # noqa: F401 - importing registers the commands
from chitta.cli import code as cli_code  # noqa: F401
from chitta.cli import doctor as cli_doctor  # noqa: F401
from chitta.cli import kg as cli_kg  # noqa: F401
from chitta.cli import manage as cli_manage  # noqa: F401
from chitta.cli import memory as cli_memory  # noqa: F401
from chitta.cli import operations as cli_operations  # noqa: F401
from chitta.cli import pruned as cli_pruned  # noqa: F401
from chitta.cli import recall as cli_recall  # noqa: F401
from chitta.cli import serve as cli_serve  # noqa: F401
from chitta.cli import themes as cli_themes  # noqa: F401

if __name__ == "__main__":  # pragma: no cover
    main()
