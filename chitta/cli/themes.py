"""`chitta themes find | show | cluster` and `chitta kg extract | extraction`: the
themes organ's operations (chitta/organs/themes_ops.py) and the knowledge graph's
extraction operations (chitta/organs/knowledge_extract_ops.py) as commands. Every
command is the same `Field.call` the daemon and MCP run."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

import chitta
from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main
from chitta.cli.kg import kg


def _call(ctx: click.Context, name: str, *, writes: bool, embed: bool, **arguments: Any) -> Any:
    args = {k: v for k, v in arguments.items() if v is not None}
    embedder = "auto" if embed else None
    with (
        _errors_to_exit(),
        chitta.open(_field_path(ctx), embedder=embedder, read_only=not writes) as field,
    ):
        return field.call(name, **args)


def _theme_table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table("theme", "label", "score", "coherence", "size", "realms", title=title)
    for t in rows:
        score = "" if t["score"] is None else f"{t['score']:.3f}"
        realms = ", ".join(f"{r or '-'}: {n}" for r, n in t["realms"].items())
        table.add_row(
            str(t["theme"]),
            t["label"] or "",
            score,
            f"{t['coherence']:.3f}",
            str(t["size"]),
            realms,
        )
    return table


@main.group(epilog=EPILOG)
def themes() -> None:
    """Themes: clusters of related memories, by the cosine of their centroids.

    \b
    Examples:
      chitta themes find "build cache" -k 3
      chitta themes show 8751567766265266195
      chitta themes cluster
    """


@themes.command("find", epilog=EPILOG)
@click.argument("query")
@click.option("-k", type=int, default=5, show_default=True, help="How many themes.")
@click.option("--realm", help="Only themes with members in this realm (and those members).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def themes_find(ctx: click.Context, query: str, k: int, realm: str | None, as_json: bool) -> None:
    """The themes nearest QUERY (embedded with the field's model)."""
    got = _call(ctx, "themes", writes=False, embed=True, query=query, k=k, realm=realm)
    if as_json:
        _emit_json(got)
    else:
        console.print(_theme_table(f"themes for {query!r}", got["themes"]))


@themes.command("show", epilog=EPILOG)
@click.argument("theme", type=int)
@click.option("--realm", help="Only its members in this realm.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def themes_show(ctx: click.Context, theme: int, realm: str | None, as_json: bool) -> None:
    """One THEME (an id from `themes find`) and its member memory ids."""
    got = _call(ctx, "theme_members", writes=False, embed=False, theme=theme, realm=realm)
    if as_json:
        _emit_json(got)
    else:
        console.print(_theme_table(f"theme {theme}", [got]))
        console.print(" ".join(str(m) for m in got["members"]))


@themes.command("cluster", epilog=EPILOG)
@click.option("--max-members", type=int, help="Split themes larger than this (default 64).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def themes_cluster(ctx: click.Context, max_members: int | None, as_json: bool) -> None:
    """Run the clustering pass now (it also runs hourly in `chitta serve`)."""
    got = _call(ctx, "themes_cluster", writes=True, embed=False, max_members=max_members)
    if as_json:
        _emit_json(got)
    else:
        console.print(", ".join(f"{k} {v}" for k, v in got.items()))


@kg.command("extract", epilog=EPILOG)
@click.argument("text")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def kg_extract(ctx: click.Context, text: str, as_json: bool) -> None:
    """Show the facts the pattern extractor finds in TEXT (nothing is stored)."""
    got = _call(ctx, "kg_extract", writes=False, embed=False, text=text)
    if as_json:
        _emit_json(got)
        return
    table = Table("subject", "predicate", "object", "tense", title="extracted")
    for t in got["triplets"]:
        table.add_row(t["subject"], t["predicate"], t["object"], t["tense"])
    console.print(table)


@kg.command("extraction", epilog=EPILOG)
@click.argument("state", type=click.Choice(["on", "off"]))
@click.pass_context
def kg_extraction(ctx: click.Context, state: str) -> None:
    """Turn write-time extraction on or off for this field (unset: on with a model)."""
    got = _call(ctx, "kg_set_extraction", writes=True, embed=False, on=state == "on")
    console.print(f"extraction {'on' if got['extraction_on'] else 'off'}")
