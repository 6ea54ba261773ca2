"""Source weights: a learned recall weight per ``(domain, source)`` pair.

Each pair holds a Beta posterior (``alpha`` = useful + 1, ``beta`` = not useful
+ 1) and its weight, the posterior mean ``alpha / (alpha + beta)``. The values
are computed by the feedback policy (:mod:`chitta.field.learning`) and logged
as ``UpdateSourceWeight`` (absolute values); this organ only stores them, the
last op of a pair wins. A pair never seen weighs 0.5 (the uniform prior).
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.ops import Op, OpType
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext

PRIOR_WEIGHT = 0.5


def beta_weight(alpha: float, beta: float) -> float:
    """The posterior mean of Beta(alpha, beta)."""
    return alpha / (alpha + beta)


def _list(organ: SourceWeightsOrgan, ctx: Any, *, domain: str | None = None) -> dict[str, Any]:
    if domain is not None and not isinstance(domain, str):
        raise InvalidArgument(f"domain must be a str, not {type(domain).__name__}")
    rows = [
        {"domain": d, "source": s, "weight": w, "alpha": a, "beta": b}
        for (d, s), (w, a, b) in sorted(organ.pairs.items())
        if domain is None or d == domain
    ]
    return {"weights": rows, "total": len(rows)}


class SourceWeightsOrgan(OrganBase):
    name = "source_weights"
    handles = frozenset({OpType.UpdateSourceWeight})
    operations: tuple[Operation, ...] = (
        Operation(
            "source_weights",
            _list,
            {
                "type": "object",
                "properties": {"domain": {"type": "string", "description": "only this domain"}},
                "additionalProperties": False,
            },
            "List the learned recall weight (Beta posterior mean) of every (domain, source) "
            "pair that feedback has rated.",
            reads=True,
        ),
    )

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], tuple[float, float, float]] = {}

    def apply(self, op: Op) -> None:
        if type(op) is ops.UpdateSourceWeight:
            self.pairs[(op.domain, op.source)] = (float(op.weight), float(op.alpha), float(op.beta))

    def weight(self, domain: str, source: str) -> float:
        entry = self.pairs.get((domain, source))
        return PRIOR_WEIGHT if entry is None else entry[0]

    def posterior(self, domain: str, source: str) -> tuple[float, float]:
        entry = self.pairs.get((domain, source))
        return (1.0, 1.0) if entry is None else (entry[1], entry[2])

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {"pairs": [[d, s, w, a, b] for (d, s), (w, a, b) in sorted(self.pairs.items())]}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        for d, s, w, a, b in state["pairs"]:
            self.pairs[(str(d), str(s))] = (float(w), float(a), float(b))

    def stats(self) -> dict[str, Any]:
        return {"pairs": len(self.pairs)}
