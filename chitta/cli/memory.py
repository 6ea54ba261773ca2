"""`chitta memory ...`: the curated layer (seed 001) from the command line.

Every command runs the curated organ's operation of the same meaning through
``Field.call`` (the method table), so the CLI, the daemon and MCP agree; export
and import write and read the tree of chitta/curated/export.py.
"""

from __future__ import annotations

from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

import chitta
from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main


def _run(ctx: click.Context, name: str, writes: bool, **arguments: Any) -> Any:
    args = {k: v for k, v in arguments.items() if v is not None}
    with chitta.open(_field_path(ctx), read_only=not writes, create=writes) as field:
        return field.call(name, **args)


def _fields(pairs: tuple[str, ...]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not name=value; example: fix='clear the cache'")
        out[key] = value
    return out or None


def _show(result: Any, as_json: bool, text_key: str | None = None) -> None:
    if as_json or text_key is None:
        _emit_json(result)
    else:
        click.echo(result[text_key], nl=False)


@main.group(epilog=EPILOG)
def memory() -> None:
    """The curated memory: a closed domain/topic vocabulary of facts a person can read.

    \b
    Examples:
      chitta memory vocabulary declare build "how the project builds"
      chitta memory vocabulary declare build/cache "the build cache and its quirks"
      chitta memory remember "ccache needs CCACHE_DIR on CI" --path build/cache
      chitta memory catalog
      chitta memory recall build/cache --query "ci cache"
      chitta memory export ./memory-tree
    """


_FACT_OPTIONS = (
    click.option("--kind", help="fact, convention, pitfall, decision, command (default fact)."),
    click.option(
        "--field",
        "field_pairs",
        multiple=True,
        metavar="NAME=VALUE",
        help="A field of the kind (repeat).",
    ),
    click.option("--scope", type=click.Choice(["repository", "project", "global"])),
    click.option("--path", "paths", multiple=True, help="A topic path domain/topic (repeat)."),
    click.option("--json", "as_json", is_flag=True, help="Print JSON."),
)


def _fact_options(f: Any) -> Any:
    for option in reversed(_FACT_OPTIONS):
        f = option(f)
    return f


@memory.command(epilog=EPILOG)
@click.argument("body")
@_fact_options
@click.option("--disputes", help="The id of a fact this one disputes.")
@click.pass_context
def remember(
    ctx: click.Context,
    body: str,
    kind: str | None,
    field_pairs: tuple[str, ...],
    scope: str | None,
    paths: tuple[str, ...],
    as_json: bool,
    disputes: str | None,
) -> None:
    """File a fact (captured, nominated, classified, admitted, filed).

    \b
    Example:
      chitta memory remember "run tests with -x" --kind convention --field applies_to=tests
    """
    with _errors_to_exit():
        result = _run(
            ctx,
            "memory_remember",
            True,
            body=body,
            kind=kind,
            fields=_fields(field_pairs),
            scope=scope,
            paths=list(paths) or None,
            disputes=disputes,
            provenance="human",
        )
    if as_json:
        _emit_json(result)
    else:
        console.print(f"filed {result['fact']} under {', '.join(result['paths'])}")


@memory.command(epilog=EPILOG)
@click.argument("fact")
@click.argument("body")
@_fact_options
@click.pass_context
def supersede(
    ctx: click.Context,
    fact: str,
    body: str,
    kind: str | None,
    field_pairs: tuple[str, ...],
    scope: str | None,
    paths: tuple[str, ...],
    as_json: bool,
) -> None:
    """Replace FACT with a new version (its paths unless --path is given)."""
    with _errors_to_exit():
        result = _run(
            ctx,
            "memory_supersede",
            True,
            fact=fact,
            body=body,
            kind=kind,
            fields=_fields(field_pairs),
            scope=scope,
            paths=list(paths) or None,
        )
    if as_json:
        _emit_json(result)
    else:
        console.print(f"{fact} superseded by {result['fact']}")


@memory.command(epilog=EPILOG)
@click.argument("fact")
@click.argument("other")
@click.argument("winner")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def resolve(ctx: click.Context, fact: str, other: str, winner: str, as_json: bool) -> None:
    """End the dispute between FACT and OTHER: WINNER is one of them, or 'both'."""
    with _errors_to_exit():
        _emit_json(_run(ctx, "memory_resolve", True, fact=fact, other=other, winner=winner))


@memory.group(epilog=EPILOG)
def vocabulary() -> None:
    """Declare, amend and show the closed vocabulary (domains and topics)."""


@vocabulary.command(epilog=EPILOG)
@click.argument("path")
@click.argument("descriptor")
@click.pass_context
def declare(ctx: click.Context, path: str, descriptor: str) -> None:
    """Declare a domain (PATH = domain) or a topic (PATH = domain/topic)."""
    with _errors_to_exit():
        _emit_json(_run(ctx, "vocabulary_declare", True, path=path, descriptor=descriptor))


@vocabulary.command(epilog=EPILOG)
@click.argument("path")
@click.argument("descriptor")
@click.pass_context
def amend(ctx: click.Context, path: str, descriptor: str) -> None:
    """Change the descriptor of a declared domain or topic."""
    with _errors_to_exit():
        _emit_json(_run(ctx, "vocabulary_amend", True, path=path, descriptor=descriptor))


@vocabulary.command(epilog=EPILOG)
@click.pass_context
def show(ctx: click.Context) -> None:
    """The vocabulary, limits, kinds and scopes as JSON."""
    with _errors_to_exit():
        _emit_json(_run(ctx, "vocabulary_show", False))


@memory.command(epilog=EPILOG)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def catalog(ctx: click.Context, as_json: bool) -> None:
    """Every domain and topic with its descriptor (pick paths to recall)."""
    with _errors_to_exit():
        _show(_run(ctx, "memory_catalog", False), as_json, "text")


@memory.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True)
@click.option("--query", default="", help="What the task is about (orders by relevance).")
@click.option("--budget", type=click.IntRange(min=1), help="Bytes of rendered facts.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def recall(
    ctx: click.Context, paths: tuple[str, ...], query: str, budget: int | None, as_json: bool
) -> None:
    """The facts under PATHS, most relevant first, whole facts within the budget."""
    with _errors_to_exit():
        _show(
            _run(ctx, "memory_recall", False, paths=list(paths), query=query, budget=budget),
            as_json,
            "text",
        )


@memory.command(epilog=EPILOG)
@click.argument("task")
@click.option("--query", default="", help="The task's description.")
@click.option(
    "--path", "paths", multiple=True, help="A topic path (repeat); default: chosen for the query."
)
@click.option("--budget", type=click.IntRange(min=1), help="Bytes of rendered facts.")
@click.option("--show", "show_pinned", is_flag=True, help="Print TASK's existing pin instead.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def pin(
    ctx: click.Context,
    task: str,
    query: str,
    paths: tuple[str, ...],
    budget: int | None,
    show_pinned: bool,
    as_json: bool,
) -> None:
    """Pin TASK's recall once (ordered ids and bytes); --show prints the pin."""
    with _errors_to_exit():
        if show_pinned:
            result = _run(ctx, "memory_pinned", False, task=task)
        else:
            result = _run(
                ctx,
                "memory_pin",
                True,
                task=task,
                query=query,
                paths=list(paths) or None,
                budget=budget,
            )
        _show(result, as_json, "text")


@memory.command("export", epilog=EPILOG)
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.pass_context
def export_cmd(ctx: click.Context, directory: str, as_json: bool) -> None:
    """Write the tree: CATALOG.md, fact/, index/, MANIFEST.json."""
    from chitta.curated.export import export_tree

    columns = (TextColumn("exporting"), BarColumn(), MofNCompleteColumn())
    with (
        _errors_to_exit(),
        chitta.open(_field_path(ctx), read_only=True) as field,
        Progress(*columns, console=console, transient=True, disable=as_json) as bar,
        field.core.lock,  # what memory_export's Field.call holds, with a progress bar
    ):
        task = bar.add_task("export", total=None)
        result = export_tree(
            field.organ("curated"),  # type: ignore[arg-type]
            directory,
            lambda done, total: bar.update(task, completed=done, total=total),
        )
    if as_json:
        _emit_json(result)
    else:
        console.print(f"exported {result['facts']} facts, {result['topics']} topics to {directory}")


@memory.command("import", epilog=EPILOG)
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.pass_context
def import_cmd(ctx: click.Context, directory: str) -> None:
    """Read an edited tree back: changed facts enter as human supersedes."""
    with _errors_to_exit():
        _emit_json(_run(ctx, "memory_import", True, directory=directory))
