"""`chitta list | update | history | link | export | import` (registered on the main group in
chitta/cli/app.py): the everyday commands over memories a person runs besides remember,
get, forget and recall."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import click
from rich.progress import Progress
from rich.table import Table

import chitta
from chitta import errors, ops
from chitta.cli.app import (
    EPILOG,
    _emit_json,
    _errors_to_exit,
    _field_path,
    _memory_dict,
    _parse_id,
    _read_text,
    console,
    main,
)
from chitta.cli.render import short
from chitta.ops import json_ids

EXPORT_VERSION = 1  # the first line of an export: {"chitta_export": 1, ...}
IMPORT_CHUNK = 256  # memories per remember_many call (one atomic group, one embedding batch)


@main.command("list", epilog=EPILOG)
@click.option("--kind", help="Only this kind.")
@click.option("--realm", help="Only this realm.")
@click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeatable: all).")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@click.option("--full", is_flag=True, help="Whole texts, not their first line.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_cmd(
    ctx: click.Context,
    kind: str | None,
    realm: str | None,
    tags: tuple[str, ...],
    limit: int,
    full: bool,
    as_json: bool,
) -> None:
    """List live memories, newest first.

    \b
    Examples:
      chitta list --kind decision
      chitta list --tag ci --limit 10 --json
    """
    with _errors_to_exit(), chitta.open(_field_path(ctx), read_only=True, embedder=None) as field:
        chosen = [
            m
            for m in field.memories()
            if (kind is None or m.kind == kind)
            and (realm is None or m.realm == realm)
            and all(t in m.tags for t in tags)
        ]
    chosen.sort(key=lambda m: (m.created_at, m.id), reverse=True)
    total, chosen = len(chosen), chosen[:limit]
    if as_json:
        _emit_json({"total": total, "memories": [_memory_dict(m) for m in chosen]})
        return
    table = Table("id", "kind", "realm", "created", "text", title=f"{total} memories")
    for m in chosen:
        table.add_row(
            str(m.id),
            m.kind,
            m.realm or "",
            m.created_at.strftime("%Y-%m-%d %H:%M"),
            m.text if full else short(m.text, 80),
        )
    console.print(table)
    if total > len(chosen):
        console.print(f"{total - len(chosen)} more; raise --limit or filter with --kind/--tag")


@main.command(epilog=EPILOG)
@click.argument("memory_id")
@click.argument("text", required=False)
@click.option("--file", "text_file", type=click.File("r"), help="Read the new text from a file.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeat for several).")
@click.option("--confidence", type=float)
@click.option("--strength", type=float)
@click.option("--meta", "meta_json", help="Replace meta with this JSON object, e.g. '{\"a\": 1}'.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def update(
    ctx: click.Context,
    memory_id: str,
    text: str | None,
    text_file: TextIO | None,
    tags: tuple[str, ...],
    confidence: float | None,
    strength: float | None,
    meta_json: str | None,
    as_json: bool,
) -> None:
    """Change a memory's text (TEXT, `-` for stdin, or --file), tags, meta or state.

    \b
    Examples:
      chitta update 9960271000442503169 "deploys need the VPN and 2FA"
      chitta update 9960271000442503169 --confidence 0.4 --tag ops
    """
    mid = _parse_id(memory_id)
    new_text = _read_text(text, text_file) if text is not None or text_file is not None else None
    meta = None
    if meta_json is not None:
        try:
            meta = json.loads(meta_json)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--meta") from None
    if new_text is None and not tags and meta is None and confidence is None and strength is None:
        raise click.UsageError(
            "nothing to change: give TEXT, --file, --tag, --meta, --confidence or --strength"
        )
    with _errors_to_exit(), chitta.open(_field_path(ctx), create=False) as field:
        field.update(
            mid,
            text=new_text,
            tags=list(tags) if tags else None,
            meta=meta,
            confidence=confidence,
            strength=strength,
        )
        m = field.get(mid)
    if as_json:
        _emit_json(_memory_dict(m))
    else:
        click.echo(f"updated {mid}")


@main.command(epilog=EPILOG)
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def history(ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Every logged change of one memory, oldest first (forgotten memories too).

    \b
    Example:
      chitta history 9960271000442503169
    """
    mid = _parse_id(memory_id)
    with _errors_to_exit(), chitta.open(_field_path(ctx), read_only=True, embedder=None) as field:
        changes = field.history(mid)
    if as_json:
        _emit_json({"id": mid, "history": changes})
        return
    table = Table("seqno", "instance", "op", "fields", title=f"history of {mid}")
    for c in changes:
        fields = json.dumps(hide_blobs(c["op"], c["fields"]), default=str, ensure_ascii=False)
        op = c["op"] + (" (in a batch)" if c.get("batch") else "")
        table.add_row(str(c["seqno"]), f"{c['instance']:08x}", op, short(fields, 160))
    console.print(table)


@main.command(epilog=EPILOG)
@click.argument("src")
@click.argument("dst")
@click.option(
    "--edge",
    default="RelatedTo",
    show_default=True,
    type=click.Choice(sorted(ops.EDGE_KINDS)),
    help="The kind of association.",
)
@click.option("--weight", type=float, default=1.0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def link(ctx: click.Context, src: str, dst: str, edge: str, weight: float, as_json: bool) -> None:
    """Associate two memories (SRC -EDGE-> DST).

    \b
    Example:
      chitta link 9960271000442503169 9960271000442503170 --edge Supports
    """
    a, b = _parse_id(src), _parse_id(dst)
    with _errors_to_exit(), chitta.open(_field_path(ctx), create=False, embedder=None) as field:
        field.link(a, b, edge, weight)
    if as_json:
        _emit_json({"src": a, "dst": b, "edge": edge, "weight": weight})
    else:
        click.echo(f"linked {a} -{edge}-> {b}")


def _export_row(m: chitta.Memory, vectors: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": m.id,
        "text": m.text,
        "kind": m.kind,
        "realm": m.realm,
        "session": m.session,
        "source_tool": m.source_tool,
        "tags": list(m.tags),
        "confidence": m.confidence,
        "meta": m.meta,
        "created_at": m.created_at.isoformat(),
    }
    if vectors and m.embedding is not None:
        row["embedding"] = [float(x) for x in m.embedding]
    return row


@main.command("export", epilog=EPILOG)
@click.argument("out", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.option("--vectors", is_flag=True, help="Include each memory's embedding.")
@click.pass_context
def export_cmd(ctx: click.Context, out: str, vectors: bool) -> None:
    """Write every live memory as JSON lines (OUT, default stdout), oldest first.

    The first line says what the file is; `chitta import` reads it back.

    \b
    Examples:
      chitta export memories.jsonl
      chitta export - | jq -r .text
    """
    with _errors_to_exit(), chitta.open(_field_path(ctx), read_only=True, embedder=None) as field:
        rows = sorted(field.memories(), key=lambda m: (m.created_at, m.id))
        dim = field.stats().as_dict().get("embedding_dim")
    stream = sys.stdout if out == "-" else open(out, "w", encoding="utf-8")  # noqa: SIM115
    try:
        head = {"chitta_export": EXPORT_VERSION, "memories": len(rows), "embedding_dim": dim}
        stream.write(json.dumps(head) + "\n")
        with Progress(console=console, transient=True, disable=out == "-") as bar:
            task = bar.add_task("exporting", total=len(rows))
            for m in rows:
                stream.write(json_ids.dumps(_export_row(m, vectors)) + "\n")
                bar.advance(task)
    finally:
        if stream is not sys.stdout:
            stream.close()
    if out != "-":
        console.print(f"exported {len(rows)} memories to {out}")


def _import_rows(lines: Iterator[str], source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, remember arguments) of each memory line of an export."""
    first = next(lines, None)
    try:
        head = json.loads(first) if first is not None else None
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("chitta_export") != EXPORT_VERSION:
        raise errors.InvalidArgument(
            f"{source} is not a chitta export (its first line must be "
            f'{{"chitta_export": {EXPORT_VERSION}, ...}}); write one with `chitta export`'
        )
    for n, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise errors.InvalidArgument(f"{source} line {n} is not JSON: {exc}") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise errors.InvalidArgument(f"{source} line {n} has no text")
        yield n, _remember_args(row, f"{source} line {n}")


def _remember_args(row: dict[str, Any], where: str) -> dict[str, Any]:
    args: dict[str, Any] = {"text": row["text"]}
    for key in ("kind", "realm", "session", "source_tool", "confidence", "meta"):
        if row.get(key) is not None:
            args[key] = row[key]
    if row.get("tags"):
        args["tags"] = row["tags"]
    if row.get("created_at") is not None:
        try:
            args["at"] = datetime.fromisoformat(str(row["created_at"]))
        except ValueError:
            raise errors.InvalidArgument(f"{where}: created_at is not an ISO datetime") from None
    if row.get("embedding") is not None:
        args["embedding"] = row["embedding"]
    return args


@main.command("import", epilog=EPILOG)
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def import_cmd(ctx: click.Context, source: str, as_json: bool) -> None:
    """Add the memories of a `chitta export` file (SOURCE, `-` for stdin) as new memories.

    Every line is checked before anything is written: a bad file changes nothing.

    \b
    Example:
      chitta --path ./copy import memories.jsonl
    """
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8")  # noqa: SIM115
    with _errors_to_exit():
        try:
            rows = list(_import_rows(iter(stream), "stdin" if source == "-" else source))
        finally:
            if stream is not sys.stdin:
                stream.close()
        ids: list[int] = []
        with chitta.open(_field_path(ctx)) as field:
            from chitta.field.puts import put_op

            for n, row in rows:  # the write path's own checks first: a bad line writes nothing
                try:
                    put_op(field.core, 1, **row)
                except errors.ChittaError as exc:
                    raise type(exc)(f"{source} line {n}: {exc}; nothing was imported") from exc
            with Progress(console=console, transient=True) as bar:
                task = bar.add_task("importing", total=len(rows))
                for at in range(0, len(rows), IMPORT_CHUNK):
                    chunk = [row for _, row in rows[at : at + IMPORT_CHUNK]]
                    ids.extend(field.remember_many(chunk))
                    bar.advance(task, len(chunk))
    if as_json:
        _emit_json({"imported": len(ids), "ids": ids})
    else:
        click.echo(f"imported {len(ids)} memories into {Path(_field_path(ctx))}")


def hide_blobs(op_name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` of a dumped op with its bytes fields (vectors, codes) shown as their
    size only: base64 of a 384-d vector is 2 KB of noise in a terminal."""
    cls = ops.OP_CLASSES.get(ops.OpType[op_name]) if op_name in ops.OpType.__members__ else None
    if cls is None:
        return fields
    blobs = {f.name for f in _struct_fields(cls) if "bytes" in str(f.type)}
    return {
        k: (
            f"<{len(v) * 3 // 4 - v[-2:].count('=')} bytes>"
            if k in blobs and isinstance(v, str)
            else v
        )
        for k, v in fields.items()
    }


def _struct_fields(cls: type) -> tuple[Any, ...]:
    import msgspec

    return tuple(msgspec.structs.fields(cls))
