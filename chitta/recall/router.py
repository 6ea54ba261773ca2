"""``route(request)``: which dispatch a :class:`RecallRequest` gets.

A pure function of the request (no store, no clock, no model): replaying a logged request
gives the same dispatch. The rules, first match wins:

1. a named slot is unbound -> ``NeedsDisambiguation(slots)``;
2. a causal tool or entity -> ``Causal`` (the symbol events organ);
3. no free text and no "when" question, and either a predicate with its subject or topic
   (a knowledge-graph query) or a kind filter (a listing of that kind, narrowed by the
   subject, topic and time range) -> ``Exact``;
4. a time range, months or a "when" question -> ``Temporal`` (lanes + date-aware ranking);
5. any structured slot (kind, realm, subject, predicate, topic, role) -> ``Hybrid``;
6. free text alone -> ``Fuzzy``.
"""

from __future__ import annotations

from chitta.errors import InvalidArgument
from chitta.recall.router_ir import Dispatch, DispatchKind, RecallRequest, check_request
from chitta.recall.router_parse import parse

__all__ = ["DISPATCH_NAMES", "decide", "dispatch_named", "parse", "route"]

DISPATCH_NAMES = frozenset(k.value for k in DispatchKind)


def route(req: RecallRequest) -> Dispatch:
    """The dispatch of ``req`` (see the module doc); InvalidArgument for a malformed one."""
    return decide(check_request(req))


def decide(req: RecallRequest) -> Dispatch:
    """:func:`route` without the checks, for a request :func:`parse` made (well-formed)."""
    if req.unbound:
        return Dispatch(DispatchKind.NEEDS_DISAMBIGUATION, req.unbound, "unbound slots")
    if req.causal_tool is not None or req.causal_entity is not None:
        return Dispatch(DispatchKind.CAUSAL, reason="a causal tool or entity")
    if req.freetext is None and not req.asks_time:
        if req.predicate is not None and (req.subject is not None or req.topic is not None):
            return Dispatch(DispatchKind.EXACT, reason="knowledge-graph triplet query")
        if req.kind_filter:
            return Dispatch(DispatchKind.EXACT, reason="kind listing")
    if req.has_time or req.asks_time:
        return Dispatch(DispatchKind.TEMPORAL, reason="a time range or a when-question")
    if (
        req.kind_filter
        or req.realm is not None
        or req.subject is not None
        or req.predicate is not None
        or req.topic is not None
        or req.role is not None
    ):
        return Dispatch(DispatchKind.HYBRID, reason="structured slots and free text")
    return Dispatch(DispatchKind.FUZZY, reason="free text only")


def dispatch_named(name: object) -> DispatchKind:
    """The :class:`DispatchKind` called ``name`` ("exact", "fuzzy", ...); InvalidArgument else."""
    if isinstance(name, DispatchKind):
        return name
    if not isinstance(name, str) or name not in DISPATCH_NAMES:
        raise InvalidArgument(
            f"unknown dispatch {name!r}: use one of {sorted(DISPATCH_NAMES)} (or route=True/False)"
        )
    return DispatchKind(name)
