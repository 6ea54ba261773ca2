"""Recall's learned factors (:mod:`chitta.recall.learned`) applied to its candidates.

Active only when some learning organ holds state: recall then takes 3x its ``k``
candidates from the engine, multiplies each score by the learned factors, re-sorts
(score descending, then id) and keeps ``k``; with ``explain`` each factor that is
not 1 is appended to the hit's factors. With no such state recall is unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from chitta.recall import learned as lf
from chitta.recall.hit import Factor, Hit

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

POOL_FACTOR = 3
DEFAULT_DOMAIN = "default"
DEFAULT_SOURCE = "field"


def _organ(core: FieldCore, name: str) -> Any:
    return core.registry.by_name.get(name)


def active(core: FieldCore) -> bool:
    """Whether any learned factor can differ from 1 in this field."""
    sw, debts = _organ(core, "source_weights"), _organ(core, "debts")
    credit, pred = _organ(core, "surprise_credit"), _organ(core, "predictor")
    return bool(
        (sw is not None and sw.pairs)
        or (debts is not None and debts.debts)
        or (credit is not None and credit.state)
        or (pred is not None and pred.last is not None and pred.edges.get(pred.last))
    )


def _debt_marks(core: FieldCore) -> tuple[set[int], set[int]]:
    """(memories that are evidence of a resolved debt's answer, memories open debts question)."""
    from chitta.policies import debts as policy

    organ = _organ(core, "debts")
    resolved: set[int] = set()
    questioned: set[int] = set()
    if organ is None:
        return resolved, questioned
    for d in organ.debts.values():
        if d.status == "open":
            questioned.update(d.memory_ids)
        elif d.status == "resolved":
            verdict = policy.ready(d.hypotheses, [(p[1], p[3], p[0]) for p in d.evidence], 0.0)
            if verdict is not None:
                resolved.update(verdict.memory_ids)
    return resolved, questioned


def factors_of(
    core: FieldCore, hit: Hit, marks: tuple[set[int], set[int]]
) -> list[tuple[str, float]]:
    m = hit.memory
    out = []
    sw = _organ(core, "source_weights")
    if sw is not None:
        w = sw.weight(m.realm or DEFAULT_DOMAIN, m.source_tool or DEFAULT_SOURCE)
        out.append(("source_weight", lf.source_weight(w)))
    out.append(("epistemic_status", lf.epistemic_status(m.id in marks[0], m.id in marks[1])))
    credit = _organ(core, "surprise_credit")
    if credit is not None:
        hard, soft = credit.bands(m.id)
        out.append(("surprise_boost", lf.surprise_boost(hard, soft)))
        out.append(("integration_kernel", lf.integration_kernel(credit.credit(m.id)[0])))
    pred = _organ(core, "predictor")
    if pred is not None and pred.last is not None:
        out.append(("prediction_boost", lf.prediction_boost(pred.probability(pred.last, m.id))))
    return out


def rerank(core: FieldCore, hits: list[Hit], k: int, explain: bool) -> list[Hit]:
    marks = _debt_marks(core)
    scored = []
    for h in hits:
        score = h.score
        extra = []
        for name, value in factors_of(core, h, marks):
            if value != 1.0:
                before = score
                score *= value
                extra.append(Factor(name, "multiplier", value, 1.0, score - before))
        factors = h.factors + tuple(extra) if explain else h.factors
        scored.append(dataclasses.replace(h, score=score, factors=factors))
    scored.sort(key=lambda h: (-h.score, h.id))
    return scored[:k]
