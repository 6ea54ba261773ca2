"""`chitta recall` and `chitta sync-memory-md` (registered on the main group in chitta/cli/app.py)."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

import chitta
from chitta import ops
from chitta.cli.app import EPILOG, _emit_json, _errors_to_exit, _field_path, console, main

# ---- recall and MEMORY.md sync (chitta/field/importers/memory_md.py) ---------------------------------


def _iso(value: str | None, what: str) -> Any:
    if value is None:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO date or datetime", param_hint=what
        ) from None


def _hit_json(rank: int, hit: Any, explain: bool) -> dict[str, Any]:
    out = {
        "rank": rank,
        "id": hit.id,
        "score": hit.score,
        "relevance": hit.relevance,
        "fused": hit.fused,
        "lanes": dict(hit.lanes),
        "kind": hit.memory.kind,
        "text": hit.text,
        "created_at": hit.memory.created_at.isoformat(),
    }
    if explain:
        out["factors"] = [
            {
                "name": f.name,
                "kind": f.kind,
                "value": f.value,
                "weight": f.weight,
                "contribution": f.contribution,
            }
            for f in hit.factors
        ]
    return out


@main.command(epilog=EPILOG)
@click.argument("query")
@click.option(
    "--k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many hits."
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(sorted(ops.MEMORY_KINDS)),
    help="Only this kind; repeat for several.",
)
@click.option("--realm", help="Only memories of this realm.")
@click.option("--session", help="Only memories of this session.")
@click.option(
    "--provenance",
    "provenances",
    multiple=True,
    type=click.Choice(sorted(ops.PROVENANCES)),
    help="Only memories written by this (unknown: none recorded); repeat for several.",
)
@click.option(
    "--tag", "tags", multiple=True, help="Only memories carrying this tag; repeat for several."
)
@click.option(
    "--min-score",
    type=click.FloatRange(-1.0, 1.0),
    help="Drop hits whose relevance (query-memory cosine) is below this.",
)
@click.option(
    "--mood",
    type=click.FloatRange(-1.0, 1.0),
    help="Your mood, -1 (upset) .. 1 (pleased): memories with a matching valence rank higher.",
)
@click.option(
    "--since", help="Only memories that happened at or after this ISO time (naive = local time)."
)
@click.option("--until", help="Only memories that happened at or before this ISO time.")
@click.option(
    "--budget",
    "budget",
    type=click.IntRange(min=0),
    help="Only the hits whose rendered lines fit in BYTES.",
)
@click.option("--explain", is_flag=True, help="Show each scoring factor's value and contribution.")
@click.option("--no-touch", is_flag=True, help="Record no access (opens the field read-only).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def recall(
    ctx: click.Context,
    query: str,
    k: int,
    kinds: tuple[str, ...],
    realm: str | None,
    session: str | None,
    provenances: tuple[str, ...],
    tags: tuple[str, ...],
    min_score: float | None,
    mood: float | None,
    since: str | None,
    until: str | None,
    budget: int | None,
    explain: bool,
    no_touch: bool,
    as_json: bool,
) -> None:
    """The memories that matter most for QUERY, best first.

    Runs Field.recall (keyword, dense, sparse-code and neighbour lanes, fused
    and scored). Like the API, it records an access for each hit unless
    --no-touch.

    \b
    Examples:
      chitta recall "which port does staging use"
      chitta recall "deploy failure" --k 5 --kind decision --since 2025-03-01
      chitta recall "code review" --explain --json
    """
    since_dt, until_dt = _iso(since, "--since"), _iso(until, "--until")
    with (
        _errors_to_exit(),
        chitta.open(_field_path(ctx), create=False, read_only=no_touch) as field,
    ):
        hits = field.recall(
            query,
            k=k,
            kinds=kinds or None,
            realm=realm,
            session=session,
            provenance=list(provenances) or None,
            tags=tags or None,
            min_score=min_score,
            mood=mood,
            since=since_dt,
            until=until_dt,
            budget_bytes=budget,
            explain=explain,
        )
    if as_json:
        _emit_json(
            {"query": query, "hits": [_hit_json(i, h, explain) for i, h in enumerate(hits, 1)]}
        )
        return
    if not hits:
        console.print("no memories match")
        return
    table = Table(
        "#", "id", "score", "lanes", "kind", title=f"recall: {query}", title_justify="left"
    )
    table.add_column("text", ratio=1, min_width=24)
    table.columns[1].no_wrap = True
    for i, h in enumerate(hits, 1):
        lanes = " ".join(f"{lane}:{r}" for lane, r in sorted(h.lanes.items(), key=lambda kv: kv[1]))
        table.add_row(str(i), str(h.id), f"{h.score:.4f}", lanes, h.memory.kind, h.text)
    console.print(table)
    if explain:
        for i, h in enumerate(hits, 1):
            ft = Table(
                "factor",
                "kind",
                "value",
                "weight",
                "contribution",
                title=f"#{i} {h.id}: score {h.score:.4f} (fused {h.fused:.4f})",
                title_justify="left",
            )
            for f in h.factors:
                ft.add_row(
                    f.name, f.kind, f"{f.value:.4f}", f"{f.weight:.2f}", f"{f.contribution:+.4f}"
                )
            console.print(ft)


@main.command("sync-memory-md", epilog=EPILOG)
@click.argument("memory_md", type=click.Path(dir_okay=False))
@click.option(
    "--budget",
    "budget",
    type=click.IntRange(0, 1 << 20),
    default=2048,
    show_default=True,
    help="Bytes of the chitta section written back.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def sync_memory_md(ctx: click.Context, memory_md: str, budget: int, as_json: bool) -> None:
    """Import a Claude Code MEMORY.md and write back what the field knows.

    Each bullet or paragraph a person wrote becomes one human-provenance
    memory (re-importing the same text adds nothing; an edited line becomes a
    new memory). The field's top memories by strength are then written between
    <!-- chitta:begin --> and <!-- chitta:end -->; text outside those markers
    is never changed.

    \b
    Examples:
      chitta sync-memory-md ~/.claude/projects/myproj/memory/MEMORY.md
      chitta sync-memory-md ./MEMORY.md --budget 1024 --json
    """
    from chitta.field.importers import memory_md as mm

    with _errors_to_exit(), chitta.open(_field_path(ctx)) as field:
        report = mm.sync(field, memory_md, budget_bytes=budget)
    if as_json:
        _emit_json(report.as_dict())
    else:
        console.print(
            f"{report.path}: {report.entries} entries, {report.imported} imported, "
            f"{report.already_present} already known; wrote {report.written} memories "
            f"({report.section_bytes} bytes) into the chitta section"
            + (f", {report.left_out} left out by the budget" if report.left_out else "")
        )
