"""Scoring factors from what the field learned: each a multiplier, 1 when its state is absent.

They rerank recall's candidates only once some learning state exists
(:mod:`chitta.field.learned_rerank`), so a field that never got feedback, outcomes,
debts or accesses ranks exactly as before.

- ``source_weight``: 0.75 + 0.5 * w, w the Beta mean of the memory's (domain, source)
  pair (:mod:`chitta.organs.source_weights`); an unrated pair (w = 0.5) gives 1.
- ``epistemic_status``: 1.10 when the memory is evidence of a resolved debt's answer,
  0.95 when an open debt questions it (cites it as where the question arose), else 1.
- ``surprise_boost``: 1 + min(0.20, 0.05 * hard + 0.02 * soft) from the memory's hard and
  soft surprise counts (:mod:`chitta.policies.credit` bands): surprising memories carry
  information the rest of the field lacks (the seed's free-energy reading).
- ``integration_kernel``: 1 + 0.10 * tanh(credit), the memory's rolling surprise credit
  (positive after confirmed predictions, negative after failed ones).
- ``prediction_boost``: 1 + 0.20 * P(last accessed memory -> this one) from the Markov
  predictor (:mod:`chitta.organs.predictor`).
- ``frustration_escalation``: while the latest outcome's session has failed >= 2 times in
  a row, memories of past fixes (kind ``lesson``, or rated useful by feedback) get
  1 + 0.05 * min(run, 6); other memories, and calmer sessions, 1.
- ``affect_valence``: 1 + 0.05 * |v| for a memory whose ``meta["valence"]`` is v in
  [-1, 1]: charged memories are the more memorable (salience), whatever their sign.
- ``mood_congruence``: 1 + 0.10 * v * mood when recall is given the caller's ``mood``
  (same scale): memories of the caller's mood rise, those of the opposite one sink,
  in [0.90, 1.10]. Both are 1 for a memory without a valence (and the second without a mood).
  The seed names the two factors without numbers; these are chitta's (D-048).
"""

from __future__ import annotations

import math

SOURCE_BASE = 0.75
SOURCE_SPAN = 0.5
RESOLVED_EVIDENCE = 1.10
QUESTIONED = 0.95
SURPRISE_HARD = 0.05
SURPRISE_SOFT = 0.02
SURPRISE_CAP = 0.20
KERNEL_SPAN = 0.10
PREDICTION_SPAN = 0.20
FRUSTRATION_MIN_RUN = 2
FRUSTRATION_STEP = 0.05
FRUSTRATION_MAX_RUN = 6
AFFECT_SPAN = 0.05
MOOD_SPAN = 0.10


def source_weight(weight: float) -> float:
    return SOURCE_BASE + SOURCE_SPAN * min(1.0, max(0.0, weight))


def epistemic_status(resolved_evidence: bool, questioned: bool) -> float:
    if resolved_evidence:
        return RESOLVED_EVIDENCE
    return QUESTIONED if questioned else 1.0


def surprise_boost(hard: int, soft: int) -> float:
    return 1.0 + min(SURPRISE_CAP, SURPRISE_HARD * hard + SURPRISE_SOFT * soft)


def integration_kernel(credit: float) -> float:
    return 1.0 + KERNEL_SPAN * math.tanh(credit)


def prediction_boost(probability: float) -> float:
    return 1.0 + PREDICTION_SPAN * min(1.0, max(0.0, probability))


def frustration_escalation(failure_run: int, is_fix: bool) -> float:
    if not is_fix or failure_run < FRUSTRATION_MIN_RUN:
        return 1.0
    return 1.0 + FRUSTRATION_STEP * min(failure_run, FRUSTRATION_MAX_RUN)


def affect_valence(valence: float) -> float:
    return 1.0 + AFFECT_SPAN * min(1.0, abs(valence))


def mood_congruence(valence: float, mood: float) -> float:
    return 1.0 + MOOD_SPAN * max(-1.0, min(1.0, valence * mood))


def memory_valence(meta: object) -> float | None:
    """A memory's valence from its meta; None when it has none (or an unusable one,
    e.g. written by another tool before the check existed)."""
    if not isinstance(meta, dict):
        return None
    v = meta.get("valence")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not -1.0 <= v <= 1.0:
        return None
    return float(v)
