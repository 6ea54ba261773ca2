"""The learned scorer model: the latest ``UpdateScorerModel`` snapshot.

Each op is a whole model (every factor's delta and clamp, ``model_version``,
``baseline_version``, EWMA loss, outcome count); an op whose ``model_version``
is not above the held one is ignored (counted), so the held model only moves
forward and replay in any order of equal logs agrees. The learning rule and
``effective_weight`` are :mod:`chitta.policies.scorer_learning`'s; this organ
stores what the ops carry and never re-learns.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext


def _show(organ: ScorerModelOrgan, ctx: Any) -> dict[str, Any]:
    from chitta.policies.scorer_learning import baseline_version

    return {**organ.state(), "stale": organ.stale(baseline_version())}


class ScorerModelOrgan(OrganBase):
    name = "scorer_model"
    handles = frozenset({OpType.UpdateScorerModel})
    operations: tuple[Operation, ...] = (
        Operation(
            "scorer_model",
            _show,
            {"type": "object", "properties": {}, "additionalProperties": False},
            "Show the learned scorer model: per-factor weight deltas and clamps, model and "
            "baseline versions, EWMA loss, outcome count, and whether the deltas are stale.",
            reads=True,
        ),
    )

    def __init__(self) -> None:
        self.model_version = 0
        self.baseline_version = 0
        self.factors: dict[str, tuple[float, float, float]] = {}  # name -> delta, min, max
        self.ewma_loss = 0.0
        self.outcome_count = 0
        self.at_ms = 0
        self.ignored = 0
        # (model_version, engine, engine with the learned weights): chitta.field.learning's
        # cache of the last engine it built; not state (never snapshotted)
        self.engine_cache: tuple[int, Any, Any] | None = None

    def apply(self, op: Op) -> None:
        if type(op) is not ops.UpdateScorerModel:
            return
        if op.model_version <= self.model_version:
            self.ignored += 1
            return
        self.model_version = int(op.model_version)
        self.baseline_version = int(op.baseline_version)
        self.factors = {
            f.factor: (float(f.delta), float(f.min_delta), float(f.max_delta)) for f in op.factors
        }
        self.ewma_loss = float(op.ewma_loss)
        self.outcome_count = int(op.outcome_count)
        self.at_ms = int(op.at_ms)

    def deltas(self) -> dict[str, float]:
        """Each factor's delta clamped to its own range."""
        return {k: min(hi, max(lo, d)) for k, (d, lo, hi) in self.factors.items()}

    def stale(self, current_baseline: int) -> bool:
        return self.model_version > 0 and self.baseline_version != current_baseline

    def effective_weight(self, factor: str, baseline: float, current_baseline: int) -> float:
        """``baseline`` plus the factor's clamped delta (the baseline alone when stale)."""
        if self.stale(current_baseline) or factor not in self.factors:
            return baseline
        return baseline + self.deltas()[factor]

    def state(self) -> dict[str, Any]:
        return {
            "model_version": self.model_version,
            "baseline_version": self.baseline_version,
            "factors": {
                k: {"delta": d, "min_delta": lo, "max_delta": hi}
                for k, (d, lo, hi) in sorted(self.factors.items())
            },
            "ewma_loss": self.ewma_loss,
            "outcome_count": self.outcome_count,
        }

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {
            "model": [
                self.model_version,
                self.baseline_version,
                self.ewma_loss,
                self.outcome_count,
                self.at_ms,
                self.ignored,
            ],
            "factors": [[k, d, lo, hi] for k, (d, lo, hi) in sorted(self.factors.items())],
        }

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        mv, bv, loss, count, at, ignored = state["model"]
        self.model_version, self.baseline_version = int(mv), int(bv)
        self.ewma_loss, self.outcome_count, self.at_ms = float(loss), int(count), int(at)
        self.ignored = int(ignored)
        self.factors = {
            str(k): (float(d), float(lo), float(hi)) for k, d, lo, hi in state["factors"]
        }

    def stats(self) -> dict[str, Any]:
        return {"model_version": self.model_version, "outcome_count": self.outcome_count}
