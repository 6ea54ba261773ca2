"""`chitta kg add | invalidate | alias | query | entities`: the knowledge graph organ's
operations (chitta/organs/knowledge_ops.py) as commands a person types, with ISO dates
where the operations take epoch seconds. Every command is the same `Field.call` the
daemon and MCP run."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click
from rich.table import Table

import chitta
from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main


def _when(value: str | None, what: str) -> float | None:
    """An ISO date or datetime (naive = local time) as epoch seconds."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO date or datetime (e.g. 2026-03-01 or 2026-03-01T09:30)",
            param_hint=what,
        ) from None


def _iso(seconds: float | None) -> str:
    return "" if seconds is None else datetime.fromtimestamp(seconds).isoformat(timespec="minutes")


def _call(ctx: click.Context, name: str, *, writes: bool, **arguments: Any) -> Any:
    args = {k: v for k, v in arguments.items() if v is not None}
    with (
        _errors_to_exit(),
        chitta.open(_field_path(ctx), embedder=None, read_only=not writes) as field,
    ):
        return field.call(name, **args)


def _triplet_table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(
        "subject", "predicate", "object", "weight", "valid from", "invalidated", title=title
    )
    for t in rows:
        table.add_row(
            t["subject"],
            t["predicate"],
            t["object"],
            f"{t['weight']:g}",
            _iso(t.get("valid_from")),
            _iso(t.get("invalidated_at")),
        )
    return table


@main.group(epilog=EPILOG)
def kg() -> None:
    """The knowledge graph: facts as (subject, predicate, object), valid time and record time.

    \b
    Examples:
      chitta kg add Jeff uses Rust
      chitta kg query --subject jeff
      chitta kg invalidate Jeff lives_in Paris --at 2026-03-01
    """


@kg.command("add", epilog=EPILOG)
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_")
@click.option("--weight", type=float, help="How strongly (default 1; repeats add up).")
@click.option("--confidence", type=float, help="How sure, 0 to 1.")
@click.option("--valid-from", help="When it became true (ISO; default now).")
@click.option("--source", "source_memory_id", help="The memory it was learned from (an id).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def kg_add(
    ctx: click.Context,
    subject: str,
    predicate: str,
    object_: str,
    weight: float | None,
    confidence: float | None,
    valid_from: str | None,
    source_memory_id: str | None,
    as_json: bool,
) -> None:
    """Record SUBJECT PREDICATE OBJECT (a repeat reinforces its weight)."""
    source = None
    if source_memory_id is not None:
        try:
            source = int(source_memory_id, 0)
        except ValueError:
            raise click.BadParameter(
                f"{source_memory_id!r} is not an id", param_hint="--source"
            ) from None
    got = _call(
        ctx,
        "kg_add",
        writes=True,
        subject=subject,
        predicate=predicate,
        object=object_,
        weight=weight,
        confidence=confidence,
        valid_from=_when(valid_from, "--valid-from"),
        source_memory_id=source,
    )
    if as_json:
        _emit_json(got)
    else:
        console.print(_triplet_table("recorded", [got]))


@kg.command("invalidate", epilog=EPILOG)
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_")
@click.option("--at", help="When it stopped being true (ISO; default now).")
@click.option("--reason", help="Why, in a few words.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def kg_invalidate(
    ctx: click.Context,
    subject: str,
    predicate: str,
    object_: str,
    at: str | None,
    reason: str | None,
    as_json: bool,
) -> None:
    """Mark SUBJECT PREDICATE OBJECT no longer true (its history stays queryable)."""
    got = _call(
        ctx,
        "kg_invalidate",
        writes=True,
        subject=subject,
        predicate=predicate,
        object=object_,
        at=_when(at, "--at"),
        reason=reason,
    )
    if as_json:
        _emit_json(got)
    else:
        console.print(_triplet_table("invalidated", [got]))


@kg.command("alias", epilog=EPILOG)
@click.argument("alias")
@click.argument("canonical")
@click.option("--valid-from", help="Since when the names are one (ISO; default always).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def kg_alias(
    ctx: click.Context, alias: str, canonical: str, valid_from: str | None, as_json: bool
) -> None:
    """Declare ALIAS another name of CANONICAL (queries by either find both)."""
    got = _call(
        ctx,
        "kg_alias",
        writes=True,
        alias=alias,
        canonical=canonical,
        valid_from=_when(valid_from, "--valid-from"),
    )
    if as_json:
        _emit_json(got)
    else:
        click.echo(f"{alias} is {canonical}")


@kg.command("query", epilog=EPILOG)
@click.option("--subject")
@click.option("--predicate")
@click.option("--object", "object_")
@click.option("--as-of", help="What was true then (valid time, ISO).")
@click.option("--known-at", help="What the field knew then (record time, ISO).")
@click.option("--limit", type=click.IntRange(1), help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def kg_query(
    ctx: click.Context,
    subject: str | None,
    predicate: str | None,
    object_: str | None,
    as_of: str | None,
    known_at: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """The facts matching the given parts (names match through case, spacing and aliases)."""
    got = _call(
        ctx,
        "kg_query",
        writes=False,
        subject=subject,
        predicate=predicate,
        object=object_,
        as_of=_when(as_of, "--as-of"),
        known_at=_when(known_at, "--known-at"),
        limit=limit,
    )
    if as_json:
        _emit_json(got)
    else:
        console.print(_triplet_table(f"{got['total']} facts", got["triplets"]))


@kg.command("entities", epilog=EPILOG)
@click.option("--prefix", help="Only names starting with this (any case).")
@click.option("--limit", type=click.IntRange(1), help="At most this many.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def kg_entities(ctx: click.Context, prefix: str | None, limit: int | None, as_json: bool) -> None:
    """The entities the graph knows, with their aliases and how many facts name them."""
    got = _call(ctx, "kg_entities", writes=False, prefix=prefix, limit=limit)
    if as_json:
        _emit_json(got)
        return
    table = Table("name", "aliases", "facts", title=f"{got['total']} entities")
    for e in got["entities"]:
        table.add_row(e["name"], ", ".join(e["aliases"]), str(e["triplets"]))
    console.print(table)
