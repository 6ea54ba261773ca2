"""Demotion tiers: memories nobody uses slide toward dormancy.

Tier 0 is hot; 1 cooling; 2 cold; 3 dormant. A pass (``Field.demote_pass()``,
also run by ``Field.maintain()``) moves each live memory down to the tier its
access history earns, logging one ``DemoteMemory`` op per move; the tier is
persisted state (replay restores it, nothing recomputes it on load). A pass
never raises a tier; access does: every recall that returns a memory in tier
``t > 0`` logs a ``DemoteMemory`` to ``t - 1`` with its touch.

The target tier of a memory::

    idle_days  = (now - max(last_access, written)) / 1 day
    hold       = 1 + ln(1 + access_count)          # frequency shields
    effective  = idle_days * rate / hold           # rate: decay_rate (surprise), 1 if unset
    tier       = number of TIER_IDLE_DAYS thresholds <= effective

with ``TIER_IDLE_DAYS = (7, 30, 90)``: a never-recalled memory cools after a
week idle, goes cold after a month and dormant after three; one recalled 10
times (hold ~3.4) takes ~24 days to cool. Idle time counts from the last
access, else from when the memory was written (imported history does not
start cold).
"""

from __future__ import annotations

import math

TIER_IDLE_DAYS: tuple[float, ...] = (7.0, 30.0, 90.0)
MAX_TIER = len(TIER_IDLE_DAYS)
MS_PER_DAY = 86_400_000.0


def hold(access_count: int) -> float:
    """How much frequent access stretches the idle thresholds (1 for none)."""
    return 1.0 + math.log1p(max(0, access_count))


def target_tier(
    *, now_ms: int, written_ms: int, last_access_ms: int, access_count: int, rate: float = 1.0
) -> int:
    """The tier a memory's access recency and frequency earn (see the module docstring)."""
    since = max(written_ms, last_access_ms)
    idle_days = max(0.0, (now_ms - since) / MS_PER_DAY)
    effective = idle_days * max(rate, 0.0) / hold(access_count)
    return sum(1 for threshold in TIER_IDLE_DAYS if effective >= threshold)


def demotion(current: int, target: int) -> int | None:
    """The tier to move to, or None when the pass leaves the memory where it is."""
    return target if target > current else None


def promotion(current: int) -> int | None:
    """The tier an access moves a memory to (one step toward 0), or None at tier 0."""
    return current - 1 if current > 0 else None
