"""Learning from outcomes: the ``feedback`` and ``record_outcome`` operations.

Functions over a :class:`~chitta.field.calls.CallContext`, run by the feedback
organ's operations (so every door has them). They read the organs, ask the
policies what the outcome teaches, and commit the fact and what was learned as
one atomic batch:

- ``feedback``: ``RecordFeedback`` + ``UpdateSourceWeight`` (the Beta posterior of
  the memory's ``(domain, source)`` pair, one more useful or not useful) +, when
  the recall ``query`` is given and still returns the memory, ``UpdateScorerModel``
  (:mod:`chitta.policies.scorer_learning`'s rule on the memory's factor values).
- ``record_outcome``: ``RecordSurprise`` + per memory ``UpdateSurpriseCredit``
  (:mod:`chitta.policies.credit`'s gate) and, when the gate fires, an
  ``UpdateState`` with the memory's new absolute strength.

Replay stores what the ops carry; nothing here runs again on reopen. Bad input
(an unknown or forgotten memory, a value out of range) raises before anything is
written.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.ops import checks as v
from chitta.policies import credit
from chitta.policies import scorer_learning as sl

if TYPE_CHECKING:
    from chitta.field.calls import CallContext
    from chitta.field.core import FieldCore
    from chitta.recall.engine import RecallEngine

DEFAULT_DOMAIN = "default"
DEFAULT_SOURCE = "field"
SCORER_POOL = 50  # hits searched for the memory a feedback names
MAX_NOTE = 4096


def _organ(core: FieldCore, name: str) -> Any:
    return core.registry.organ(name)


def _live(core: FieldCore, value: object) -> Any:
    mid = v.memory_id(value)
    memory = core.memories.get(mid)
    if memory is None:
        raise NotFound(
            f"no live memory with id {mid}; give an id a recall returned (it may be forgotten)"
        )
    return memory


def _short(value: object, what: str) -> str | None:
    if value is None:
        return None
    text = v.text(value, what)
    if len(text) > MAX_NOTE:
        raise InvalidArgument(f"{what} is {len(text)} characters; keep it under {MAX_NOTE}")
    return text


def model_of(organ: Any) -> sl.Model:
    """The scorer model organ's snapshot as a policy Model."""
    return sl.Model(
        model_version=organ.model_version,
        baseline_version=organ.baseline_version,
        deltas=organ.deltas(),
        ewma_loss=organ.ewma_loss,
        outcome_count=organ.outcome_count,
    )


def model_op(model: sl.Model, at_ms: int) -> ops.UpdateScorerModel:
    return ops.UpdateScorerModel(
        model_version=model.model_version,
        baseline_version=model.baseline_version,
        at_ms=at_ms,
        factors=tuple(
            ops.FactorDelta(
                factor=name, delta=model.deltas.get(name, 0.0), min_delta=lo, max_delta=hi
            )
            for name, (_, lo, hi) in sorted(sl.LEARNED.items())
        ),
        ewma_loss=model.ewma_loss,
        outcome_count=model.outcome_count,
    )


def learned_engine(core: FieldCore, engine: RecallEngine) -> RecallEngine:
    """``engine`` scoring with the learned weights (itself when no model was learned
    or the model is stale against the engine's config)."""
    organ: Any = core.registry.by_name.get("scorer_model")
    if organ is None or organ.model_version == 0:
        return engine
    cached = organ.engine_cache
    if cached is not None and cached[0] == organ.model_version and cached[1] is engine:
        return cached[2]  # type: ignore[no-any-return]
    base = engine.scorer.settings
    settings = sl.settings_with(model_of(organ), base)
    out = engine
    if settings != base:
        from chitta.recall.scorer import Scorer

        out = copy.copy(engine)
        out.scorer = Scorer(settings)
    organ.engine_cache = (organ.model_version, engine, out)
    return out


def _scorer_update(core: FieldCore, mid: int, query: str, useful: bool) -> sl.Model | None:
    from chitta.field.recall import recall

    hits = recall(core, query, k=SCORER_POOL, explain=True, touch=False)
    hit = next((h for h in hits if h.id == mid), None)
    if hit is None or not hits:
        return None
    values = {f.name: f.value for f in hit.factors}
    top = max(h.score for h in hits)
    score = hit.score / top if top > 0 else 0.0
    organ = _organ(core, "scorer_model")
    current = sl.baseline_version(core.engine.scorer.settings)
    return sl.learn(model_of(organ), values, score, useful, current)


def feedback(
    ctx: CallContext,
    *,
    useful: Any,
    memory_id: Any = None,
    recall_id: Any = None,
    query: str | None = None,
    source: str | None = None,
    session: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Record whether a recalled memory was useful and learn from it (module docstring).
    ``recall_id`` (what a recall's hits carry) supplies the query, and the memory when
    that recall returned one hit; a memory_id it did not return is refused."""
    core = ctx.core
    core.check_writable()
    if not isinstance(useful, bool):
        raise InvalidArgument(f"useful must be true or false, not {useful!r:.40}")
    if recall_id is not None:
        recalled_query, hit_ids = core.recalls.get(recall_id)
        if memory_id is None:
            if len(hit_ids) != 1:
                raise InvalidArgument(
                    f"recall {recall_id} returned {len(hit_ids)} memories: give memory_id too"
                )
            memory_id = hit_ids[0]
        if v.memory_id(memory_id) not in hit_ids:
            raise InvalidArgument(
                f"memory {memory_id} was not among the hits of recall {recall_id}; "
                "give the id of one of them"
            )
        query = recalled_query if query is None else query
    elif memory_id is None:
        raise InvalidArgument("feedback needs memory_id (or the recall_id of a recall's hits)")
    memory = _live(core, memory_id)
    query, note = v.query(query), _short(note, "note")
    session = v.name(session, "session")
    src = v.name(source, "source") or memory.source_tool or DEFAULT_SOURCE
    domain = memory.realm or DEFAULT_DOMAIN
    now = ctx.now_ms()
    alpha, beta = _organ(core, "source_weights").posterior(domain, src)
    alpha, beta = alpha + useful, beta + (not useful)
    weight = alpha / (alpha + beta)
    group: list[ops.Op] = [
        ops.RecordFeedback(
            domain=domain,
            source=src,
            useful=useful,
            at_ms=now,
            memory_id=memory.id,
            query=query,
            session=session,
            note=note,
        ),
        ops.UpdateSourceWeight(
            domain=domain, source=src, weight=weight, at_ms=now, alpha=alpha, beta=beta
        ),
    ]
    model = _scorer_update(core, memory.id, query, useful) if query is not None else None
    if model is not None:
        group.append(model_op(model, now))
    ctx.commit(*group)
    return {
        "memory_id": str(memory.id),
        "domain": domain,
        "source": src,
        "source_weight": weight,
        "model_version": _organ(core, "scorer_model").model_version,
        "scorer_learned": model is not None,
    }


def record_outcome(
    ctx: CallContext,
    *,
    expected: Any,
    actual: Any,
    surprise: Any = None,
    memory_ids: Any = (),
    source: str | None = None,
    session: str | None = None,
) -> dict[str, Any]:
    """Record an outcome against a prediction and run the credit gate (module docstring).

    The direction is +1 when ``actual`` matches ``expected`` (case and spacing aside),
    else -1; ``surprise`` defaults to 0 for a match and 1 otherwise."""
    core = ctx.core
    core.check_writable()
    exp, act = v.text(expected, "expected"), v.text(actual, "actual")
    if not isinstance(memory_ids, (list, tuple)):
        raise InvalidArgument("memory_ids must be a list of memory ids")
    memories = [_live(core, mid) for mid in memory_ids]
    if len({m.id for m in memories}) != len(memories):
        raise InvalidArgument("memory_ids names a memory twice; give each once")
    match = credit.matches(exp, act)
    s = (0.0 if match else 1.0) if surprise is None else v.unit_float(surprise, "surprise")
    direction = 1 if match else -1
    now = ctx.now_ms()
    group: list[ops.Op] = [
        ops.RecordSurprise(
            expected=exp,
            actual=act,
            surprise=s,
            at_ms=now,
            source=v.name(source, "source"),
            memory_ids=tuple(m.id for m in memories),
            session=v.name(session, "session"),
        )
    ]
    organ = _organ(core, "surprise_credit")
    changed = []
    for m in memories:
        before, streak = organ.credit(m.id)
        out = credit.step(before, streak, s, direction)
        group.append(
            ops.UpdateSurpriseCredit(
                id=m.id,
                credit=out.credit,
                streak=out.streak,
                at_ms=now,
                strength_delta=out.delta,
                surprise=s,
            )
        )
        strength = m.strength
        if out.delta != 0.0:
            strength = credit.new_strength(m.strength, out.delta)
            group.append(ops.UpdateState(id=m.id, at_ms=now, strength=strength))
        changed.append(
            {
                "id": str(m.id),
                "credit": out.credit,
                "streak": out.streak,
                "strength_delta": out.delta,
                "strength": strength,
            }
        )
    ctx.commit(*group)
    return {"direction": direction, "surprise": s, "band": credit.band(s), "memories": changed}
