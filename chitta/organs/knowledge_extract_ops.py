"""The knowledge organ's extraction operations (every door): preview what a text's
triplets would be, and switch write-time extraction on or off.

The extractor and the write hook live above the organs (chitta/encode/extract.py,
chitta/field/extract_write.py); these handlers reach them at call time.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.ops import checks
from chitta.organs.contract import Operation

__all__ = ["EXTRACT_OPERATIONS"]


def _extract(organ: Any, ctx: Any, *, text: str) -> dict[str, Any]:
    from chitta.encode.extract import extract
    from chitta.field import extract_write

    found = extract(checks.text(text))
    return {
        "triplets": [
            {
                "subject": e.subject,
                "predicate": ("not_" if e.negated else "") + e.predicate,
                "object": e.object,
                "negated": e.negated,
                "tense": e.tense,
            }
            for e in found
        ],
        "extraction_on": extract_write.enabled(ctx.core),
    }


def _set(organ: Any, ctx: Any, *, on: bool) -> dict[str, Any]:
    from chitta.field import extract_write

    if not isinstance(on, bool):
        raise InvalidArgument(f"on must be true or false, not {on!r}")
    if ctx.core.settings.get(extract_write.SETTING) is not on:
        ctx.commit(ops.ConfigureField(key=extract_write.SETTING, value=on, at_ms=ctx.now_ms()))
    if on:
        extract_write.drop_native_entry(ctx.core)
    return {"extraction_on": extract_write.enabled(ctx.core)}


EXTRACT_OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "kg_extract",
        _extract,
        {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "the text to read"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "Show the (subject, predicate, object) facts the pattern extractor finds in a "
        "text, with negation and tense, without storing anything; also says whether "
        "remember() extracts them.",
        reads=True,
    ),
    Operation(
        "kg_set_extraction",
        _set,
        {
            "type": "object",
            "properties": {"on": {"type": "boolean", "description": "extract at write time"}},
            "required": ["on"],
            "additionalProperties": False,
        },
        "Turn write-time triplet extraction on or off for this field (a logged "
        "setting); returns the state now.",
        writes=True,
        idempotent=True,
        doors=frozenset({"python", "daemon"}),  # a field setting: not the model's to change
    ),
)
