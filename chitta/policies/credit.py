"""Surprise credit: a hysteresis gate from outcome surprise to memory strength.

Constants are the seed's. A signal is a surprise ``s`` in [0, 1] with a
direction ``d`` (+1: the outcome confirmed what the memories predicted, -1: it
contradicted them). One event updates a memory's state ``(credit, streak)``::

    evidence  = ((s - 0.20) / 0.80) ** 2 for s > 0.20, else 0      (quadratic)
    credit    = 0.85 * credit + d * evidence                         (decay per event)
    streak    = streak + d if sign(streak) == d, else d   (signed run of same-direction
                signals; an event with no evidence leaves it as it was)
    fires     = |credit| >= 0.75 and |streak| >= 2 and sign(streak) == sign(credit)
    delta     = sign(credit) * 0.08 * min(1, |credit|)  when it fires, else 0
    credit    = 0.35 * credit  after a delta is applied (bleed: no rapid re-trigger)

The new strength is ``max(0, strength + delta)``. The magnitude bands feeding
the integration-kernel factor: ``s >= HARD`` is a hard surprise, ``s >= SOFT`` a
soft one. The seed names the two thresholds without values; 0.80 and 0.50 are
chitta's choice (HARD: the evidence is >= 0.5625; SOFT: >= 0.1406).
"""

from __future__ import annotations

import dataclasses
import math

EVIDENCE_FLOOR = 0.20
EVIDENCE_SPAN = 0.80
CREDIT_DECAY = 0.85
GATE_CREDIT = 0.75
GATE_STREAK = 2
MAX_DELTA = 0.08
BLEED = 0.35
HARD = 0.80
SOFT = 0.50


def evidence(surprise: float) -> float:
    """((s - 0.20) / 0.80) ** 2 for s in (0.20, 1], 0 at or below 0.20."""
    s = min(1.0, max(0.0, float(surprise)))
    if s <= EVIDENCE_FLOOR:
        return 0.0
    return ((s - EVIDENCE_FLOOR) / EVIDENCE_SPAN) ** 2


def band(surprise: float) -> str:
    """'hard', 'soft' or 'none': the magnitude band of a surprise."""
    if surprise >= HARD:
        return "hard"
    return "soft" if surprise >= SOFT else "none"


@dataclasses.dataclass(frozen=True, slots=True)
class CreditStep:
    credit: float  # after decay, evidence and (when it fired) bleed
    streak: int
    delta: float  # the strength change the gate let through (0 when it held)


def step(credit: float, streak: int, surprise: float, direction: int) -> CreditStep:
    """One event of the gate (the module docstring's rule)."""
    if direction not in (1, -1):
        raise ValueError("direction is +1 or -1")
    e = evidence(surprise)
    credit = CREDIT_DECAY * credit + direction * e
    if e > 0:
        streak = streak + direction if streak * direction > 0 else direction
    sign = 1 if credit > 0 else -1
    fires = abs(credit) >= GATE_CREDIT and abs(streak) >= GATE_STREAK and streak * sign > 0
    if not fires:
        return CreditStep(credit, streak, 0.0)
    delta = sign * MAX_DELTA * min(1.0, abs(credit))
    return CreditStep(BLEED * credit, streak, delta)


def matches(expected: str, actual: str) -> bool:
    """Whether an outcome confirmed its prediction (case and spacing aside): direction +1."""
    return " ".join(expected.casefold().split()) == " ".join(actual.casefold().split())


def new_strength(strength: float, delta: float) -> float:
    value = strength + delta
    return max(0.0, value) if math.isfinite(value) else strength
