"""Recall's learned factors (:mod:`chitta.recall.learned`) applied to its candidates.

Active only when some learning organ holds state or the caller gives a ``mood``:
recall then takes 1.5x its ``k`` candidates (``pool``) from the engine, multiplies each score by
the learned factors, re-sorts (score descending, then id) and keeps ``k``; with
``explain`` each factor that is not 1 is appended to the hit's factors. Without
either, only hits that carry a valence are re-weighted (among the ``k`` found), and
a field with none ranks exactly as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.recall import learned as lf
from chitta.recall.hit import Factor, Hit, refine

if TYPE_CHECKING:
    from chitta.field.core import FieldCore


def pool(k: int) -> int:
    """How many candidates a recall of ``k`` takes when the learned factors rerank them:
    1.5x (D-057: at 100K, k = 30 costs ~0.1 ms more than 10, k = 15 ~0.01)."""
    return k + (k + 1) // 2


DEFAULT_DOMAIN = "default"
DEFAULT_SOURCE = "field"


def _organ(core: FieldCore, name: str) -> Any:
    return core.registry.by_name.get(name)


def active(core: FieldCore) -> bool:
    """Whether any learned factor can differ from 1 in this field."""
    sw, debts = _organ(core, "source_weights"), _organ(core, "debts")
    credit, pred = _organ(core, "surprise_credit"), _organ(core, "predictor")
    fb = _organ(core, "feedback")
    return bool(
        (fb is not None and fb.failure_run >= lf.FRUSTRATION_MIN_RUN)
        or (sw is not None and sw.pairs)
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


def any_valence(hits: list[Hit]) -> bool:
    return any(lf.memory_valence(h.memory.meta) is not None for h in hits)


class _Sources:
    """The organs the factors read (and the caller's mood), looked up once per recall."""

    def __init__(self, core: FieldCore, mood: float | None = None) -> None:
        self.mood = mood
        self.sw = _organ(core, "source_weights")
        self.credit = _organ(core, "surprise_credit")
        pred = _organ(core, "predictor")
        self.pred = pred if pred is not None and pred.last is not None else None
        # the predictor's transitions out of the last access, read once: p = weight / total
        self.pred_out: dict[int, float] = (
            (self.pred.edges.get(self.pred.last) or {}) if self.pred else {}
        )
        self.pred_total = sum(self.pred_out.values())
        self.pair_factor: dict[tuple[str, str], float] = {}  # (domain, source) -> its factor
        self.resolved, self.questioned = _debt_marks(core)
        if self.sw is not None and not self.sw.pairs:
            self.sw = None  # every pair at the prior: the factor is 1
        if self.credit is not None and not self.credit.state:
            self.credit = None
        fb = _organ(core, "feedback")
        self.feedback = fb if fb is not None and fb.failure_run >= lf.FRUSTRATION_MIN_RUN else None
        # every memory with per-memory state, in one set (these sets are small): ``only_pair``
        special = self.resolved | self.questioned | self.pred_out.keys()
        if self.credit is not None:
            special |= self.credit.state.keys()
        if self.feedback is not None:
            special |= self.feedback.by_memory.keys()
        self.special = special

    def pair(self, m: Any) -> float:
        """The source-weight factor of a memory's (domain, source) pair (1 without rated pairs)."""
        if self.sw is None:
            return 1.0
        pair = (m.realm or DEFAULT_DOMAIN, m.source_tool or DEFAULT_SOURCE)
        f = self.pair_factor.get(pair)
        if f is None:
            f = self.pair_factor[pair] = lf.source_weight(self.sw.weight(*pair))
        return f

    def only_pair(self, m: Any) -> bool:
        """Whether every factor but the source weight is 1 for this memory: no per-memory
        state (debt marks, surprise credit, a predicted transition, feedback while failures
        run, a lesson then) and no valence. Most hits: they skip ``factors_of``."""
        return (
            m.id not in self.special
            and not (m.meta and "valence" in m.meta)
            and (self.feedback is None or m.kind != "lesson")
        )


def factors_of(src: _Sources, hit: Hit) -> list[tuple[str, float]]:
    """The learned factors of one hit (those whose state is absent are left out: 1)."""
    m = hit.memory
    out = []
    if src.sw is not None:
        out.append(("source_weight", src.pair(m)))
    if src.resolved or src.questioned:
        out.append(
            ("epistemic_status", lf.epistemic_status(m.id in src.resolved, m.id in src.questioned))
        )
    if src.credit is not None and m.id in src.credit.state:
        hard, soft = src.credit.bands(m.id)
        out.append(("surprise_boost", lf.surprise_boost(hard, soft)))
        out.append(("integration_kernel", lf.integration_kernel(src.credit.credit(m.id)[0])))
    if src.pred is not None:
        p = src.pred_out.get(m.id, 0.0) / src.pred_total if src.pred_total > 0 else 0.0
        out.append(("prediction_boost", lf.prediction_boost(p)))
    if src.feedback is not None:
        fix = m.kind == "lesson" or src.feedback.useful_counts(m.id)[0] > 0
        out.append(
            ("frustration_escalation", lf.frustration_escalation(src.feedback.failure_run, fix))
        )
    valence = lf.memory_valence(m.meta)
    if valence is not None:
        out.append(("affect_valence", lf.affect_valence(valence)))
        if src.mood is not None:
            out.append(("mood_congruence", lf.mood_congruence(valence, src.mood)))
    return out


def rerank(
    core: FieldCore, hits: list[Hit], k: int, explain: bool, mood: float | None = None
) -> list[Hit]:
    src = _Sources(core, mood)
    scored: list[tuple[float, int, int, list[Factor]]] = []
    only_pair, pair = src.only_pair, src.pair
    none: list[Factor] = []  # shared: hits on the quick path carry no factors
    for i, h in enumerate(hits):
        score = h.score
        m = h.memory
        if not explain and only_pair(m):  # the same product, without the list
            f = pair(m)
            scored.append((-(score * f) if f != 1.0 else -score, h.id, i, none))
            continue
        extra: list[Factor] = []
        for name, value in factors_of(src, h):
            if value != 1.0:
                before = score
                score *= value
                if explain:
                    extra.append(Factor(name, "multiplier", value, 1.0, score - before))
        scored.append((-score, h.id, i, extra))
    scored.sort()  # score descending, then id (ids are unique: the rest never compares)
    out = []
    for neg, _, i, extra in scored[:k]:
        h = hits[i]
        if extra:
            refine(h, score=-neg, factors=h.factors + tuple(extra))
        elif -neg != h.score:  # only a changed hit is touched
            object.__setattr__(h, "score", -neg)
        out.append(h)
    return out
