"""How the command line shows a memory and a key-value table: shared by the full CLI and
the served fast path (:mod:`chitta.cli.served`), so both print the same bytes."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

TABLE_TEXT = 600  # characters of a memory's text a table shows (--full: all)

#: the rows of ``chitta get``, in order
MEMORY_ROWS = (
    "id",
    "text",
    "kind",
    "realm",
    "session",
    "source_tool",
    "harness",
    "tags",
    "confidence",
    "strength",
    "tier",
    "created_at",
    "updated_at",
    "access_count",
    "meta",
    "embedding_dim",
)


def console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def short(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters for a table cell, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"... (+{len(text) - limit} characters; --full shows all)"


def memory_view(shaped: dict[str, Any]) -> dict[str, Any]:
    """``chitta get``'s rows from a memory as the daemon's JSON dialect shapes it."""
    return {k: shaped[k] for k in MEMORY_ROWS}


def kv_table(title: str, rows: dict[str, Any]) -> Table:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column(style="bold cyan")
    table.add_column()
    for k, v in rows.items():
        table.add_row(k, "" if v is None else str(v))
    return table


def memory_table(mid: int, view: dict[str, Any], *, full: bool) -> Table:
    text = view["text"] if full else short(view["text"], TABLE_TEXT)
    return kv_table(f"memory {mid}", {**view, "text": text})


__all__ = [
    "MEMORY_ROWS",
    "TABLE_TEXT",
    "console",
    "kv_table",
    "memory_table",
    "memory_view",
    "short",
]
