"""The typed query IR of the router: a :class:`RecallRequest` and its :class:`Dispatch`.

A request names what a question binds: a kind filter, a realm, a subject, a predicate and
its topic (the object), free text, a time range (``time_from_ms`` / ``time_to_ms``, UTC
epoch ms, half-open; plus months of any year), whether it asks for a time, a causal tool
and entity (a symbol event and the file or symbol it concerns) and a role. ``route``
(chitta/recall/router.py) turns it into one :class:`DispatchKind`; a request with a named
hole (a pronoun for its subject, "then" for its time) is ``NeedsDisambiguation`` with the
:data:`SLOTS` left unbound.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from chitta.errors import InvalidArgument
from chitta.ops import MEMORY_KINDS, SYMBOL_EVENTS

__all__ = ["ROLES", "SLOTS", "Dispatch", "DispatchKind", "RecallRequest", "check_request"]

SLOTS = frozenset({"subject", "time", "causal_entity", "topic"})
"""The slots a request may leave unbound (and a model hook may fill)."""
ROLES = frozenset({"user", "assistant"})
MAX_TEXT = 4096


class DispatchKind(str, enum.Enum):
    EXACT = "exact"  # structured slots only: an organ query (knowledge graph, kind listing)
    FUZZY = "fuzzy"  # free text only: the recall lanes
    TEMPORAL = "temporal"  # a time range or a "when" question: lanes + date-aware ranking
    CAUSAL = "causal"  # a tool / entity: the symbol events organ
    HYBRID = "hybrid"  # structured slots and free text: filtered lanes
    NEEDS_DISAMBIGUATION = "needs_disambiguation"  # a named slot is unbound


@dataclasses.dataclass(frozen=True)
class RecallRequest:
    text: str
    ref_ms: int  # the reference time relative dates were resolved against
    kind_filter: tuple[str, ...] = ()  # sorted memory kinds
    realm: str | None = None
    subject: str | None = None
    predicate: str | None = None
    topic: str | None = None
    freetext: str | None = None
    time_from_ms: int | None = None
    time_to_ms: int | None = None
    months: tuple[int, ...] = ()  # months of any year ("in May")
    asks_time: bool = False  # "when ...?", "how long ago ...?"
    causal_tool: str | None = None  # one of chitta.ops.SYMBOL_EVENTS
    causal_entity: str | None = None  # a file path or a symbol
    role: str | None = None  # "user" ("what did I say") or "assistant" ("what did you suggest")
    unbound: tuple[str, ...] = ()  # the named holes, sorted

    @property
    def has_time(self) -> bool:
        return self.time_from_ms is not None or bool(self.months)

    def as_dict(self) -> dict[str, Any]:
        """The fields that are set (what ``explain`` shows and the golden set compares)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("text", "ref_ms") or value in (None, (), False):
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclasses.dataclass(frozen=True)
class Dispatch:
    kind: DispatchKind
    unbound: tuple[str, ...] = ()  # NeedsDisambiguation's slots
    reason: str = ""

    def __str__(self) -> str:
        if self.kind is DispatchKind.NEEDS_DISAMBIGUATION:
            return f"NeedsDisambiguation({', '.join(self.unbound)})"
        return self.kind.name.capitalize()


def _opt_str(value: object, name: str) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidArgument(f"RecallRequest.{name} must be None or a non-empty str")
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise InvalidArgument(f"RecallRequest.{name} is longer than {MAX_TEXT} characters")


def _opt_ms(value: object, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidArgument(f"RecallRequest.{name} must be None or epoch milliseconds (int)")


def check_request(req: object) -> RecallRequest:
    """``req`` when it is a well-formed :class:`RecallRequest`; InvalidArgument (saying which
    field is wrong) otherwise. Nothing is written either way."""
    if not isinstance(req, RecallRequest):
        raise InvalidArgument(
            f"route() takes a RecallRequest (chitta.recall.router_ir), not {type(req).__name__}"
        )
    if not isinstance(req.text, str) or len(req.text) > MAX_TEXT:
        raise InvalidArgument(f"RecallRequest.text must be a str of at most {MAX_TEXT} characters")
    _opt_ms(req.ref_ms, "ref_ms")
    if req.ref_ms is None:
        raise InvalidArgument("RecallRequest.ref_ms is required: the reference time in epoch ms")
    if not isinstance(req.kind_filter, tuple) or any(
        k not in MEMORY_KINDS for k in req.kind_filter
    ):
        raise InvalidArgument(
            f"RecallRequest.kind_filter must be a tuple of {sorted(MEMORY_KINDS)}"
        )
    for name in ("realm", "subject", "predicate", "topic", "freetext", "causal_entity"):
        _opt_str(getattr(req, name), name)
    _opt_ms(req.time_from_ms, "time_from_ms")
    _opt_ms(req.time_to_ms, "time_to_ms")
    if (req.time_from_ms is None) != (req.time_to_ms is None):
        raise InvalidArgument("RecallRequest needs both time_from_ms and time_to_ms, or neither")
    if (
        req.time_from_ms is not None
        and req.time_to_ms is not None
        and (req.time_from_ms >= req.time_to_ms)
    ):
        raise InvalidArgument(
            "RecallRequest time range is empty: time_from_ms must be < time_to_ms"
        )
    if not isinstance(req.months, tuple) or any(
        isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 12 for m in req.months
    ):
        raise InvalidArgument("RecallRequest.months must be a tuple of ints in 1..12")
    if not isinstance(req.asks_time, bool):
        raise InvalidArgument("RecallRequest.asks_time must be a bool")
    if req.causal_tool is not None and req.causal_tool not in SYMBOL_EVENTS:
        raise InvalidArgument(f"RecallRequest.causal_tool must be one of {sorted(SYMBOL_EVENTS)}")
    if req.role is not None and req.role not in ROLES:
        raise InvalidArgument(f"RecallRequest.role must be None or one of {sorted(ROLES)}")
    if not isinstance(req.unbound, tuple) or any(s not in SLOTS for s in req.unbound):
        raise InvalidArgument(f"RecallRequest.unbound names slots of {sorted(SLOTS)}")
    return req
