"""The wisdom passes: distillation, the lifecycle FSM, contradictions by hand.

Functions over a :class:`~chitta.field.calls.CallContext`, run by the wisdom
organ's operations and its maintenance pass. ``distill`` clusters the live
episodic memories (:mod:`chitta.policies.distill`) and upserts a candidate per
cluster whose counts changed, then ``advance`` applies the FSM gates
(:mod:`chitta.policies.wisdom`): a promotion writes the ``wisdom`` memory and
its ``UpdateWisdomLifecycle`` in one atomic batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.field import puts as putops
from chitta.field import read
from chitta.policies import distill as policy
from chitta.policies import wisdom as fsm

if TYPE_CHECKING:
    from chitta.field.calls import CallContext


def _organ(ctx: CallContext) -> Any:
    return ctx.core.registry.organ("wisdom")


def _contradicted(ctx: CallContext, mid: int) -> bool:
    core = ctx.core
    return any(
        kind == "Contradicts" and core.memories.is_live(other)
        for other, kind, _out, _w in core.graph.neighbours(mid)
    )


def distill(ctx: CallContext) -> dict[str, Any]:
    """Upsert a candidate per recurring cluster, then advance every candidate."""
    core = ctx.core
    core.check_writable()
    rows = [
        (m.id, m.text, m.session, m.realm) for m in read.memories(core) if m.kind in policy.KINDS
    ]
    organ = _organ(ctx)
    now = ctx.now_ms()
    upserts = []
    for c in policy.clusters(rows):
        old = organ.candidates.get(c.key)
        contradictions = sum(_contradicted(ctx, mid) for mid in c.members)
        if old is not None:
            contradictions = max(contradictions, old[3])  # a count by hand stays until cleared
        new = [
            c.statement,
            len(c.members),
            list(c.sessions),
            contradictions,
            c.score,
            list(c.members),
            c.realm,
        ]
        if old is not None and old[:7] == new:
            continue
        upserts.append(
            ops.UpsertWisdomCandidate(
                cluster_key=c.key,
                statement=c.statement,
                at_ms=now,
                support=len(c.members),
                sessions=c.sessions,
                contradictions=contradictions,
                score=c.score,
                evidence=c.members,
                realm=c.realm,
            )
        )
    if upserts:
        ctx.commit(*upserts)
    return {"upserted": len(upserts), **advance(ctx)}


def advance(ctx: CallContext) -> dict[str, int]:
    """Move every candidate its gates allow (promotion writes its memory)."""
    organ = _organ(ctx)
    moved = {"promoted": 0, "trusted": 0, "demoted": 0}
    for key in sorted(organ.candidates):
        r = organ.candidates[key]
        step = fsm.next_stage(r[7], r[1], len(r[2]), r[4], r[3])
        if step is None:
            continue
        stage, reason = step
        now = ctx.now_ms()
        if stage == "provisional":
            core = ctx.core
            mid = core.new_id()
            put = putops.put_op(
                core,
                mid,
                r[0],
                "wisdom",
                r[6],
                None,
                "distill",
                (),
                1.0,
                None,
                {"wisdom_cluster": key, "evidence": [str(m) for m in r[5]]},
                None,
            )
            group = putops.with_vectors(core, [put])
            group.append(
                ops.UpdateWisdomLifecycle(
                    cluster_key=key, stage=stage, at_ms=now, memory_id=mid, reason=reason
                )
            )
            ctx.commit(*group)
            moved["promoted"] += 1
        else:
            ctx.commit(
                ops.UpdateWisdomLifecycle(cluster_key=key, stage=stage, at_ms=now, reason=reason)
            )
            moved[stage] += 1
    return moved


def _row(ctx: CallContext, cluster_key: object) -> tuple[str, list[Any]]:
    if not isinstance(cluster_key, str):
        raise InvalidArgument(f"cluster_key must be a str, not {type(cluster_key).__name__}")
    row = _organ(ctx).candidates.get(cluster_key)
    if row is None:
        raise NotFound(f"no wisdom candidate {cluster_key!r}; list them with wisdom_candidates")
    return cluster_key, row


def _upsert(ctx: CallContext, key: str, r: list[Any], contradictions: int) -> ops.Op:
    return ops.UpsertWisdomCandidate(
        cluster_key=key,
        statement=r[0],
        at_ms=ctx.now_ms(),
        support=r[1],
        sessions=tuple(r[2]),
        contradictions=contradictions,
        score=r[4],
        evidence=tuple(r[5]),
        realm=r[6],
    )


def contradict(ctx: CallContext, *, cluster_key: str) -> dict[str, Any]:
    key, r = _row(ctx, cluster_key)
    ctx.commit(_upsert(ctx, key, r, r[3] + 1))
    advance(ctx)
    return _organ(ctx).view(key)  # type: ignore[no-any-return]


def clear(ctx: CallContext, *, cluster_key: str) -> dict[str, Any]:
    key, r = _row(ctx, cluster_key)
    group = [_upsert(ctx, key, r, 0)]
    if r[7] == "demoted":
        group.append(
            ops.UpdateWisdomLifecycle(
                cluster_key=key,
                stage="candidate",
                at_ms=ctx.now_ms(),
                reason="contradictions cleared",
            )
        )
    ctx.commit(*group)
    return _organ(ctx).view(key)  # type: ignore[no-any-return]


def maintain(ctx: CallContext) -> int:
    """Maintenance: distill and advance; returns how many candidates changed."""
    out = distill(ctx)
    return int(sum(out.values()))
