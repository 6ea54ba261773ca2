"""The symbol-event organ's own operation: list the events of a symbol or a file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.errors import InvalidArgument
from chitta.organs.contract import Operation

if TYPE_CHECKING:
    from chitta.organs.code.events import SymbolEventsOrgan

__all__ = ["OPERATIONS"]


def _events(
    organ: SymbolEventsOrgan,
    ctx: Any,
    *,
    symbol: str | None = None,
    file: str | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    if (symbol is None) == (file is None):
        raise InvalidArgument("give exactly one of symbol or file, e.g. symbol='pkg/a.py#A.f'")
    found = organ.of_symbol(symbol) if symbol is not None else organ.of_file(file or "")
    return {"events": [e.public() for e in found[-limit:]], "total": len(found)}


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "symbol_events",
        _events,
        {
            "type": "object",
            "properties": {
                "symbol": {"type": "string", "description": "a symbol key, e.g. 'a.py#A.f'"},
                "file": {"type": "string", "description": "a file path relative to its project"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10000},
            },
            "additionalProperties": False,
        },
        "List the events (Created, Edited, Deleted, TestFailed, TestPassed, Committed) "
        "recorded for one code symbol or file, oldest first.",
        reads=True,
    ),
)
