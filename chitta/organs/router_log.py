"""The router's log: routed requests, model-hook slot fills and the falsifiability metrics.

Three ``AnalyticsEvent`` events reach this organ (others are another organ's):

- ``router_request``: one routed recall. ``query`` the text, ``outcome`` the dispatch it ran,
  ``memory_ids`` what it returned, ``ref`` a JSON map: ``k``, ``at`` (the reference time),
  ``fb`` (1: the dispatch found nothing and the fallback found something), ``ov`` (1: the
  caller forced another dispatch than the router's), ``m`` (model calls it made);
- ``router_fill``: the model hook filled slot ``outcome`` of request ``query`` with ``ref``;
- ``router_metrics``: one consolidation pass's four metrics (``ref`` a JSON map,
  chitta/policies/router_metrics.py), ``memory_ids`` the contradiction pairs it saw (a, b, ...).

What the router keeps per handle and never logs: the slot-filling hook and the event-date
cache of date-aware ranking.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import (
    Maintenance,
    Operation,
    OrganBase,
    RestoreContext,
    SnapshotContext,
)
from chitta.recall.temporal import EventDates

__all__ = ["EVENTS", "RouterLogOrgan"]

EVENTS = frozenset({"router_request", "router_fill", "router_metrics"})
KEEP_REQUESTS = 1000  # the most recent requests a pass can replay
KEEP_METRICS = 100
METRICS_EVERY_S = 3600.0


def _metrics_pass(organ: RouterLogOrgan, ctx: Any) -> int:
    from chitta.policies.router_metrics import metrics_pass  # the pass reads several organs

    return metrics_pass(ctx.core)


def _json(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _route_query(organ: RouterLogOrgan, ctx: Any, *, query: str) -> dict[str, Any]:
    from chitta.field.routed import explain_route

    return explain_route(ctx.core, query).as_dict()


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "route_query",
        _route_query,
        {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 4096,
                    "description": "a question, as you would pass it to recall",
                }
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "What recall's router makes of a question, without running it: the typed request "
        "(kind, subject, topic, time range, ...) and the dispatch it picks, with why.",
        reads=True,
    ),
)


class RouterLogOrgan(OrganBase):
    name = "router"
    handles = frozenset({OpType.AnalyticsEvent})
    maintenance: tuple[Maintenance, ...] = (Maintenance("metrics", _metrics_pass, METRICS_EVERY_S),)
    operations: tuple[Operation, ...] = OPERATIONS

    def __init__(self) -> None:
        # (seq, at_ms, query, dispatch, ids, ref map), oldest first
        self.requests: list[tuple[int, int, str, str, tuple[int, ...], dict[str, Any]]] = []
        self.seq = 0  # requests ever logged
        self.fills: list[tuple[int, str, str, str]] = []  # (at_ms, query, slot, value)
        self.fill_count = 0
        self.metrics: list[dict[str, Any]] = []
        self.ignored = 0
        self.hook: Callable[..., Any] | None = None  # per handle, never logged
        self.dates = EventDates()  # per handle: date-aware ranking's cache

    def apply(self, op: Op) -> None:
        if not isinstance(op, ops.AnalyticsEvent) or op.event not in EVENTS:
            return
        ref = _json(op.ref)
        if op.event == "router_request":
            if op.query is None or op.outcome is None:
                self.ignored += 1
                return
            ids = tuple(int(i) for i in op.memory_ids)
            self.requests.append((self.seq, int(op.at_ms), op.query, op.outcome, ids, ref))
            self.seq += 1
            del self.requests[:-KEEP_REQUESTS]
        elif op.event == "router_fill":
            if op.query is None or op.outcome is None:
                self.ignored += 1
                return
            self.fills.append((int(op.at_ms), op.query, op.outcome, str(ref.get("value"))))
            self.fill_count += 1
            del self.fills[:-KEEP_REQUESTS]
        else:
            row = dict(ref)
            row["at_ms"] = int(op.at_ms)
            row["pairs"] = [int(i) for i in op.memory_ids]
            self.metrics.append(row)
            del self.metrics[:-KEEP_METRICS]

    def since(self, seq: int) -> list[tuple[int, int, str, str, tuple[int, ...], dict[str, Any]]]:
        """The kept requests logged with sequence number >= ``seq``."""
        return [r for r in self.requests if r[0] >= seq]

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {
            "requests": [[s, a, q, d, list(i), r] for s, a, q, d, i, r in self.requests],
            "seq": self.seq,
            "fills": [list(f) for f in self.fills],
            "fill_count": self.fill_count,
            "metrics": self.metrics,
            "ignored": self.ignored,
        }

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        self.requests = [
            (int(s), int(a), str(q), str(d), tuple(int(x) for x in i), dict(r))
            for s, a, q, d, i, r in state["requests"]
        ]
        self.seq = int(state["seq"])
        self.fills = [(int(a), str(q), str(s), str(v)) for a, q, s, v in state["fills"]]
        self.fill_count = int(state["fill_count"])
        self.metrics = [dict(m) for m in state["metrics"]]
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        last = self.metrics[-1] if self.metrics else {}
        return {
            "requests": self.seq,
            "slot_fills": self.fill_count,
            "passes": len(self.metrics),
            **{k: v for k, v in last.items() if k not in ("pairs", "at_ms")},
        }
