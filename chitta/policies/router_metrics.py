"""The router's four falsifiability metrics, one row per consolidation pass.

Over the requests logged since the previous pass (``router_request``, at most the last
1,000; chitta/organs/router_log.py):

- **token-displacement ratio**: requests answered with zero model calls / all requests
  (a model call is a slot the hook filled);
- **deterministic replay rate**: requests whose re-run gives the same dispatch and the same
  ids / all: each is parsed again against its logged reference time, routed, and run again
  (``touch=False``, nothing logged) with its logged ``k`` (a write between the request and the
  pass can change its ids: the rate says how stable answers are over a pass);
- **router error rate**: requests whose dispatch was overridden by the caller, or that found
  nothing where the fallback (the lanes) found something / all;
- **contradiction yield**: contradiction pairs (``Field.detect_contradictions``) not seen in
  the previous pass.

Ratios are None when no request was logged. The row is logged as a ``router_metrics`` op and
shown in ``Field.stats().router``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.recall.router import dispatch_named, parse, route

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

__all__ = ["metrics_pass", "replay_request"]


def replay_request(core: FieldCore, query: str, ran: str, meta: dict[str, Any]) -> list[int]:
    """The ids ``query`` gets when run again as it was logged: its reference time, ``k``, the
    slots the hook filled (from their ``router_fill`` ops: the model is not asked again) and
    the dispatch that ran; nothing is touched or logged."""
    from chitta.field import recall as plain
    from chitta.field import routed

    at = int(meta.get("at", 0))
    k = min(max(int(meta.get("k", 10)), 1), plain.MAX_K)
    organ = routed.router_organ(core)
    req = parse(query, at)
    for f_at, f_query, slot, value in organ.fills:
        if f_at == at and f_query == query and slot in req.unbound:
            req = routed._fill(req, slot, value)
    hits, _ = routed._run(core, req, dispatch_named(ran), query, {"k": k, "touch": False}, organ)
    return [h.id for h in hits[:k]]


def metrics_pass(core: FieldCore) -> int:
    """Compute and log one metrics row (see the module doc); returns the requests it covered."""
    from chitta.field import lifecycle, routed

    organ = routed.router_organ(core)
    last = organ.metrics[-1] if organ.metrics else {}
    start = int(last.get("next_seq", 0))
    requests = organ.since(start)
    n = len(requests)
    model = same = errors = 0
    for _seq, _at, query, ran, ids, meta in requests:
        if int(meta.get("m", 0)) > 0:
            model += 1
        if int(meta.get("fb", 0)) or int(meta.get("ov", 0)):
            errors += 1
        overridden = int(meta.get("ov", 0)) == 1
        filled = int(meta.get("m", 0)) > 0
        # the dispatch a replay decides (without the fills: they may change it) must agree
        agrees = (
            overridden or filled or route(parse(query, int(meta.get("at", 0)))).kind.value == ran
        )
        if agrees and replay_request(core, query, ran, meta) == list(ids):
            same += 1
    pairs = lifecycle.find_contradictions(core)
    seen = set(zip(last.get("pairs", [])[::2], last.get("pairs", [])[1::2]))
    now = [(p.a, p.b) for p in pairs]
    new = sum(1 for p in now if p not in seen)
    row = {
        "requests": n,
        "token_displacement": None if n == 0 else (n - model) / n,
        "replay_rate": None if n == 0 else same / n,
        "router_error_rate": None if n == 0 else errors / n,
        "contradiction_yield": new,
        "next_seq": organ.seq,
    }
    if not core.read_only:
        core.commit(
            ops.AnalyticsEvent(
                event="router_metrics",
                at_ms=core.now_ms(),
                value=float(n),
                ref=json.dumps(row, sort_keys=True),
                memory_ids=tuple(x for pair in now for x in pair),
            )
        )
    return n
