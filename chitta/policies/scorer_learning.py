"""The learned scorer: a clamped weight-delta overlay on the static scoring config.

Each learned factor is one weight of :class:`chitta.recall.factors.FactorSettings`
(``LEARNED``: the name of the factor, the settings attribute, its clamp). The
scorer asks :func:`effective_weight` for ``baseline + delta``, where the delta is
clamped to the factor's ``[min_delta, max_delta]`` and is used only while the
model's ``baseline_version`` equals the current config's (:func:`baseline_version`,
a CRC-32 of the static weights): a config change makes every delta stale and the
scorer falls back to the baseline until the model is relearned.

The learning rule (one feedback on one recalled memory, with the factor values
``x_f`` in [0, 1] recall explained for it and its score ``p``, clipped to [0, 1];
label ``y`` = 1 if the memory was useful, else 0)::

    error  = y - p
    delta_f <- clamp(delta_f + RATE * error * (x_f - 0.5), min_delta_f, max_delta_f)
    ewma_loss <- (1 - EWMA_ALPHA) * ewma_loss + EWMA_ALPHA * error ** 2
    outcome_count += 1;  model_version += 1

so a factor that is high on useful memories and low on useless ones gains
weight. Each update is logged as a whole-model ``UpdateScorerModel`` snapshot;
replay stores the snapshot and never re-learns.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping

from chitta.recall.factors import FactorSettings

RATE = 0.05
EWMA_ALPHA = 0.1
# factor name -> (FactorSettings attribute, min_delta, max_delta). The context weights
# (activation + freshness) stay <= 0.45 together, so the context blend keeps >= 0.55.
LEARNED: Mapping[str, tuple[str, float, float]] = {
    "similarity": ("w_similarity", -0.02, 0.08),
    "activation": ("w_activation", -0.05, 0.15),
    "freshness": ("w_freshness", -0.10, 0.15),
}


def baseline_version(settings: FactorSettings | None = None) -> int:
    """A u32 naming the static weights the deltas are learned against."""
    s = settings or FactorSettings()
    key = ",".join(f"{name}={getattr(s, attr)!r}" for name, (attr, _, _) in sorted(LEARNED.items()))
    return zlib.crc32(key.encode())


def clamp(factor: str, delta: float) -> float:
    _, lo, hi = LEARNED[factor]
    return min(hi, max(lo, delta))


@dataclasses.dataclass(frozen=True, slots=True)
class Model:
    """One snapshot: what an ``UpdateScorerModel`` op carries."""

    model_version: int = 0
    baseline_version: int = 0
    deltas: Mapping[str, float] = dataclasses.field(default_factory=dict)
    ewma_loss: float = 0.0
    outcome_count: int = 0

    def stale(self, current_baseline: int) -> bool:
        return self.model_version > 0 and self.baseline_version != current_baseline

    def effective_weight(self, factor: str, baseline: float, current_baseline: int) -> float:
        """``baseline + delta`` (the clamped delta; none when stale or unknown)."""
        if factor not in LEARNED or self.stale(current_baseline):
            return baseline
        return baseline + clamp(factor, self.deltas.get(factor, 0.0))


def learn(
    model: Model, values: Mapping[str, float], score: float, useful: bool, current: int
) -> Model:
    """The next snapshot after one feedback (the module docstring's rule) against the
    config of baseline version ``current``. A stale model restarts from zero deltas."""
    deltas = {} if model.stale(current) else dict(model.deltas)
    p = min(1.0, max(0.0, score))
    error = (1.0 if useful else 0.0) - p
    for factor in sorted(LEARNED):
        x = min(1.0, max(0.0, values.get(factor, 0.5)))
        deltas[factor] = clamp(factor, deltas.get(factor, 0.0) + RATE * error * (x - 0.5))
    return Model(
        model_version=model.model_version + 1,
        baseline_version=current,
        deltas=deltas,
        ewma_loss=(1 - EWMA_ALPHA) * model.ewma_loss + EWMA_ALPHA * error * error,
        outcome_count=model.outcome_count + 1,
    )


def settings_with(model: Model, base: FactorSettings) -> FactorSettings:
    """``base`` with each learned weight replaced by its effective weight."""
    if model.model_version == 0:
        return base
    current = baseline_version(base)
    changes = {
        attr: model.effective_weight(name, getattr(base, attr), current)
        for name, (attr, _, _) in LEARNED.items()
    }
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
