"""The router's golden set (tests/helpers/router_golden.py): >= 95% of the hand-written
questions get exactly the expected IR and dispatch."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from router_golden import G_LATER, REF
from router_golden import G as G_FIRST

from chitta.recall.router import parse, route
from chitta.recall.router_ir import RecallRequest

G = G_FIRST + G_LATER
REF_MS = int(datetime.fromisoformat(REF).replace(tzinfo=timezone.utc).timestamp() * 1000)


def _day_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=timezone.utc).timestamp() * 1000)


def expected_ir(spec: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in spec.items() if k not in ("time", "free")}
    if "time" in spec:
        lo, hi = spec["time"].split("/")
        out["time_from_ms"], out["time_to_ms"] = _day_ms(lo), _day_ms(hi)
    return out


def got_ir(req: RecallRequest) -> dict[str, Any]:
    got = req.as_dict()
    got.pop("freetext", None)
    return got


def mismatches() -> list[str]:
    bad = []
    for text, dispatch, spec in G:
        req = parse(text, REF_MS)
        want = expected_ir(spec)
        got = got_ir(req)
        free = req.freetext is not None
        d = str(route(req))
        if got != want or free != spec.get("free", False) or d != dispatch:
            bad.append(f"{text!r}: {d} {got} free={free}; want {dispatch} {want}")
    return bad


def test_golden_set_is_large_enough() -> None:
    assert len(G) >= 150
    assert len({t for t, _, _ in G}) == len(G)  # no question twice


def test_golden_set_at_least_95_percent_exact() -> None:
    bad = mismatches()
    rate = 1 - len(bad) / len(G)
    print(f"router golden set: {len(G) - len(bad)}/{len(G)} exact ({rate:.1%})")
    assert rate >= 0.95, "\n".join(bad)


def test_golden_set_covers_every_dispatch() -> None:
    kinds = {d.split("(")[0] for _, d, _ in G}
    assert kinds == {"Exact", "Fuzzy", "Temporal", "Causal", "Hybrid", "NeedsDisambiguation"}
