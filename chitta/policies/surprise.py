"""Surprise and decay: memories the encoder reconstructs badly fade slower.

The sparse encoder reports a memory's *surprise* in [0, 1]: the normalised
residual of reconstructing its vector from its 64 winning atoms
(``SparseEncoder.encode(vectors).surprise``). Following the seed, a
high-surprise memory carries information the rest of the field does not, so it
resists decay; a low-surprise one is redundant and fades faster.

The rule maps surprise ``s`` to a multiplier on the memory's decay rate::

    decay_multiplier(s) = 2 ** (1 - 2 * clip(s, 0, 1))

so ``s = 0`` decays twice as fast as the default, ``s = 0.5`` at the default
rate (1.0), and ``s = 1`` at half of it. The result is stored as the memory's
``decay_rate`` (an ``UpdateState`` op); :mod:`chitta.policies.tiers`
multiplies a memory's idle time by it, so a rate of 2 reaches each demotion
threshold in half the time. ``decay_rate == 0`` means "not set yet" and counts
as 1.0.
"""

from __future__ import annotations

import math

MIN_MULTIPLIER = 0.5
MAX_MULTIPLIER = 2.0
CHANGE_EPSILON = 0.01  # a recomputed rate closer than this to the stored one is not re-logged


def decay_multiplier(surprise: float) -> float:
    """The decay-rate multiplier for a surprise in [0, 1] (NaN counts as 0.5: no evidence)."""
    s = float(surprise)
    if math.isnan(s):
        s = 0.5
    s = min(1.0, max(0.0, s))
    return float(2.0 ** (1.0 - 2.0 * s))


def effective_rate(decay_rate: float) -> float:
    """A stored ``decay_rate`` as the factor idle time is multiplied by (0: unset -> 1)."""
    return decay_rate if decay_rate > 0 else 1.0


def needs_update(stored: float, new: float) -> bool:
    """Whether a recomputed rate differs enough from the stored one to log it."""
    return abs(effective_rate(stored) - new) >= CHANGE_EPSILON or stored <= 0
