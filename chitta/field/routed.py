"""Routed recall: parse the question, route it, run the dispatch over the organs.

``Field.recall(query, route=True)`` lands here (``route=False`` runs the lanes as before;
``route="temporal"`` etc. forces a dispatch, logged as overridden when the router chose
another). Every dispatch runs without a model call:

- ``Exact``: a knowledge-graph query (subject, predicate, topic as the object; the memories
  its assertions cite) or a listing of a kind (narrowed by subject / topic words and the
  time range), newest first;
- ``Causal``: the symbol events of the entity (a file path matched by suffix, or a symbol)
  and tool, newest first: the memories they cite;
- ``Temporal``: the lanes, with date-aware ranking (chitta/recall/temporal.py);
- ``Hybrid``: the lanes (a kind the question's verb suggests reorders nothing: measured, D-055);
- ``Fuzzy`` and an unfilled ``NeedsDisambiguation``: the lanes, as an unrouted recall.

When an Exact or Causal dispatch finds nothing, the lanes answer (the fallback, counted
against the router when it finds something). The model hook (``Field.set_slot_filler``) is
asked only for a slot ``NeedsDisambiguation`` names; each fill is logged.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.field import recall as plain
from chitta.field.core import FieldCore
from chitta.organs.router_log import RouterLogOrgan
from chitta.recall import temporal
from chitta.recall.hit import Factor, Hit
from chitta.recall.reltime import relative_spans
from chitta.recall.router import decide, dispatch_named, parse, route
from chitta.recall.router_ir import (
    MAX_TEXT,
    SLOTS,
    Dispatch,
    DispatchKind,
    RecallRequest,
    check_request,
)
from chitta.recall.temporal import TemporalPrior
from chitta.recall.timeq import query_times

__all__ = [
    "MAX_TEXT",
    "ROUTE_DEFAULT",
    "RouteInfo",
    "dispatch_named",
    "explain_route",
    "routed_recall",
    "set_slot_filler",
]


# Field.recall's default: route every text query (LoCoMo dev ablation, docs/DECISIONS.md D-055).
ROUTE_DEFAULT: bool = True


@dataclasses.dataclass(frozen=True)
class RouteInfo:
    """What the router made of a question: the IR, the dispatch, and how it ran."""

    request: RecallRequest
    dispatch: Dispatch
    ran: DispatchKind  # what ran (the dispatch, a forced one, or the lanes for a hole)
    fallback: bool = False
    fills: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "dispatch": str(self.dispatch),
            "reason": self.dispatch.reason,
            "ran": self.ran.value,
            "fallback": self.fallback,
            "fills": [list(f) for f in self.fills],
            "ir": self.request.as_dict(),
        }


def _organ(core: FieldCore, name: str) -> Any:
    return next((o for o in core.organs if o.name == name), None)


def router_organ(core: FieldCore) -> RouterLogOrgan:
    organ = _organ(core, "router")
    if not isinstance(organ, RouterLogOrgan):
        raise InvalidArgument("this field has no router organ: register RouterLogOrgan")
    return organ


def set_slot_filler(
    core: FieldCore, hook: Callable[[RecallRequest, str], str | None] | None
) -> None:
    """``Field.set_slot_filler`` (its docstring is the reference)."""
    core.check_open()
    if hook is not None and not callable(hook):
        raise InvalidArgument("set_slot_filler takes a callable(request, slot) -> str or None")
    router_organ(core).hook = hook


def _fill(req: RecallRequest, slot: str, value: object) -> RecallRequest:
    """``req`` with ``slot`` bound to the hook's ``value``; InvalidArgument when unusable."""
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InvalidArgument(
            f"the slot filler returned {value!r} for {slot!r}: return a short non-empty str or None"
        )
    rest = tuple(s for s in req.unbound if s != slot)
    if slot == "time":
        spans = list(relative_spans(value, req.ref_ms))
        named = query_times(value)
        spans += list(named.spans) if named is not None else []
        months = tuple(sorted(named.months)) if named is not None else ()
        if not spans and not months:
            raise InvalidArgument(
                f"the slot filler's time {value!r} names no date: return e.g. '8 May 2023'"
            )
        lo = min(s[0] for s in spans) if spans else None
        hi = max(s[1] for s in spans) if spans else None
        return dataclasses.replace(req, time_from_ms=lo, time_to_ms=hi, months=months, unbound=rest)
    if slot == "subject":
        return dataclasses.replace(req, unbound=rest, subject=value.strip())
    if slot == "topic":
        return dataclasses.replace(req, unbound=rest, topic=value.strip())
    return dataclasses.replace(req, unbound=rest, causal_entity=value.strip())


def _hits(core: FieldCore, ids: list[int], k: int, lane: str) -> list[Hit]:
    out: list[Hit] = []
    for rank, mid in enumerate(ids[:k], 1):
        memory = core.memories.get(mid)
        if memory is None:
            continue
        score = 1.0 / rank
        out.append(Hit(mid, memory.text, score, memory, {lane: rank}, score))
    return out


def _mentions(text: str, words: str | None) -> bool:
    return words is None or all(w in text for w in words.casefold().split())


def _exact(core: FieldCore, req: RecallRequest, k: int) -> list[int]:
    if req.predicate is not None:
        kg = _organ(core, "knowledge")
        if kg is None:
            return []
        as_of = req.time_to_ms - 1 if req.time_to_ms is not None else None
        found = kg.query(req.subject, req.predicate, req.topic, as_of=as_of)
        if not found and req.subject is not None:  # "prefer" meets "prefers", "preferred"
            stem = req.predicate[: max(4, len(req.predicate) - 2)]
            found = [
                tv
                for tv in kg.query(req.subject, None, req.topic, as_of=as_of)
                if tv[0].predicate.casefold().startswith(stem)
            ]
        ids: list[int] = []
        for triplet, _view in found:
            for a in sorted(triplet.assertions, key=lambda a: (-a[0], -a[1])):
                if a[3] is not None and a[3] not in ids and core.memories.is_live(a[3]):
                    ids.append(int(a[3]))
        return ids
    allowed = core.index.allowed(kinds=frozenset(req.kind_filter), realm=req.realm)
    picked = []
    for mid in [] if allowed is None else allowed.tolist():
        m = core.memories.get(int(mid))
        text = "" if m is None else m.text.casefold()
        if m is not None and _mentions(text, req.subject) and _mentions(text, req.topic):
            picked.append(m)
    if req.has_time and picked:  # an event date in the range (or months): the temporal rule
        prior = TemporalPrior(
            req, core.memories.text, router_organ(core).dates, core.memories.updated_ms, 1.0, 0.0
        )
        inside = prior(
            np.array([m.id for m in picked], np.uint64),
            np.array([m.created_ms for m in picked], np.int64),
        )
        picked = [m for m, x in zip(picked, inside.tolist()) if x != 1.0]
    return [m.id for m in sorted(picked, key=lambda m: (-m.created_ms, -m.id))]


def _causal(core: FieldCore, req: RecallRequest) -> list[int]:
    events = _organ(core, "symbol_events")
    if events is None:
        return []
    found = []
    entity = req.causal_entity
    if entity is None:
        found = list(events.events)
    elif entity.endswith("()"):
        found = events.of_symbol(entity[:-2])
    else:
        for path in events.by_file:
            if path == entity or path.endswith("/" + entity):
                found.extend(events.of_file(path))
    if req.causal_tool is not None:
        found = [e for e in found if e.kind == req.causal_tool]
    ids: list[int] = []
    for e in sorted(found, key=lambda e: -e.at_ms):
        if (
            e.memory_id is not None
            and e.memory_id not in ids
            and core.memories.is_live(e.memory_id)
        ):
            ids.append(int(e.memory_id))
    return ids


def routed_recall(
    core: FieldCore, query: str, route_arg: object, kw: dict[str, Any]
) -> tuple[list[Hit], RouteInfo]:
    """Run ``query`` through the router (see the module doc); ``kw`` are recall's arguments."""
    forced = None if route_arg is True else dispatch_named(route_arg)
    k, touch, explain = kw.get("k", 10), kw.get("touch", True), kw.get("explain", False)
    organ = router_organ(core)
    ref_ms = core.now_ms()
    req = parse(query, ref_ms, realm=kw.get("realm"))
    decided = decide(req)
    fills: list[tuple[str, str]] = []
    hook = organ.hook
    if decided.kind is DispatchKind.NEEDS_DISAMBIGUATION and hook is not None and forced is None:
        for slot in decided.unbound:
            value = hook(req, slot)
            if value is None:
                continue
            req = _fill(req, slot, value)
            fills.append((slot, str(value).strip()))
        decided = route(req)  # checked: the hook wrote into it
    kind = forced or decided.kind
    hits, fallback = _run(core, req, kind, query, kw, organ)
    if len(hits) > k:
        hits = hits[:k]
    if hits and hits[0].recall_id is None:  # an Exact/Causal answer: its recall id for feedback
        rid = core.recalls.record(query, tuple(h.id for h in hits))
        hits = [dataclasses.replace(h, recall_id=rid) for h in hits]
    info = RouteInfo(req, decided, kind, fallback, tuple(fills))
    # explain: a "dispatch:<kind>" factor on each hit where the dispatch ranked differently
    # from the plain lanes (Fuzzy, an unfilled hole and a Hybrid without a kind run as they)
    plain_lanes = kind in (
        DispatchKind.FUZZY,
        DispatchKind.NEEDS_DISAMBIGUATION,
        DispatchKind.HYBRID,
    )
    if explain and not plain_lanes:
        tag = Factor(f"dispatch:{kind.value}", "router", 1.0, 0.0, 0.0)
        hits = [dataclasses.replace(h, factors=(*h.factors, tag)) for h in hits]
    if not core.read_only and (touch or fills):
        group: list[ops.Op] = [
            ops.AnalyticsEvent(
                event="router_fill",
                at_ms=ref_ms,
                query=query,
                outcome=slot,
                ref=json.dumps({"value": value}),
            )
            for slot, value in fills
        ]
        if touch:
            meta = {"k": k, "at": ref_ms, "fb": int(fallback), "m": len(fills),
                    "ov": int(forced is not None and forced is not decided.kind)}  # fmt: skip
            group.append(
                ops.AnalyticsEvent(
                    event="router_request",
                    at_ms=ref_ms,
                    query=query,
                    outcome=kind.value,
                    memory_ids=tuple(h.id for h in hits),
                    ref=json.dumps(meta, sort_keys=True),
                )
            )
        core.commit_group(group)
    return hits, info


def _run(
    core: FieldCore,
    req: RecallRequest,
    kind: DispatchKind,
    query: str,
    kw: dict[str, Any],
    organ: RouterLogOrgan,
) -> tuple[list[Hit], bool]:
    k = kw.get("k", 10)
    if kind in (DispatchKind.EXACT, DispatchKind.CAUSAL):
        with core.lock:
            ids = _exact(core, req, k) if kind is DispatchKind.EXACT else _causal(core, req)
        if ids:
            hits = _hits(core, ids, k, kind.value)
            if kw.get("touch", True) and hits and not core.read_only:
                plain._touch(core, hits)
            return hits, False
        hits = plain.recall(core, query, **kw)
        return hits, bool(hits)
    if kind is DispatchKind.TEMPORAL:
        settings = core.engine.settings
        prior = TemporalPrior(
            req, core.memories.text, organ.dates, core.memories.updated_ms, settings.time_prior,
            when_prior=temporal.WHEN_PRIOR, slack_days=settings.time_prior_slack_days,
        )  # fmt: skip
        return plain.recall(core, query, temporal=prior, **kw), False
    return plain.recall(core, query, **kw), False


def explain_route(core: FieldCore, query: object, ref_ms: int | None = None) -> RouteInfo:
    """``Field.explain_route`` (its docstring is the reference)."""
    core.check_open()
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("explain_route needs a question (a non-empty str)")
    if ref_ms is not None and (isinstance(ref_ms, bool) or not isinstance(ref_ms, int)):
        raise InvalidArgument("ref_ms must be None or epoch milliseconds (int)")
    req = parse(query, core.now_ms() if ref_ms is None else ref_ms)
    decided = route(req)
    return RouteInfo(req, decided, decided.kind)


def check_slot(slot: object) -> str:
    if slot not in SLOTS:
        raise InvalidArgument(f"unknown slot {slot!r}: one of {sorted(SLOTS)}")
    return str(slot)


def run_request(core: FieldCore, req: RecallRequest, kw: dict[str, Any]) -> list[Hit]:
    """Run a hand-built request (checked first) by its route, without logging it."""
    check_request(req)
    kind = route(req).kind
    hits, _ = _run(core, req, kind, req.text, {**kw, "touch": False}, router_organ(core))
    return hits
