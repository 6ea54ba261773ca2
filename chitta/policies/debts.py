"""Epistemic debts: when the attached evidence settles a question.

Evidence is ``(confidence, hypothesis)`` pieces (``hypothesis`` an index into the
debt's hypotheses, or None for the question as a whole). Pieces bearing on the
same target combine as independent witnesses (noisy-OR)::

    support(target) = 1 - prod(1 - confidence_i)   over the pieces for that target

A debt with hypotheses is ready when its best-supported hypothesis reaches the
threshold (the seed's 0.70) and no other hypothesis is as well supported; a debt
without hypotheses is ready when the whole-question support reaches it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

RESOLVE_THRESHOLD = 0.70
SCAN_EVERY_S = 1800.0  # the learning cycle's scan: every 30 minutes (setting: maintenance_every_s)


def support(confidences: Sequence[float]) -> float:
    out = 1.0
    for c in confidences:
        out *= 1.0 - c
    return 1.0 - out


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    hypothesis: int | None  # the winning hypothesis (None: the question as a whole)
    confidence: float
    pieces: int
    memory_ids: tuple[int, ...]


def ready(
    hypotheses: Sequence[str],
    evidence: Sequence[tuple[float, int | None, Sequence[int]]],
    threshold: float = RESOLVE_THRESHOLD,
) -> Verdict | None:
    """The verdict when the evidence ``(confidence, hypothesis, memory_ids)`` meets
    ``threshold`` (module docstring), else None."""
    targets: list[int | None] = list(range(len(hypotheses))) if hypotheses else [None]
    scored = []
    for t in targets:
        pieces = [e for e in evidence if e[1] == t]
        scored.append((support([e[0] for e in pieces]), t, pieces))
    scored.sort(key=lambda x: -x[0])
    best, target, pieces = scored[0]
    if best < threshold or (len(scored) > 1 and scored[1][0] >= best):
        return None
    ids = tuple(sorted({m for e in pieces for m in e[2]}))
    return Verdict(target, best, len(pieces), ids)


def resolution_text(hypotheses: Sequence[str], verdict: Verdict) -> str:
    """A readable resolution for the UpdateDebt op."""
    what = (
        "the question is answered"
        if verdict.hypothesis is None
        else f"hypothesis {verdict.hypothesis}: {hypotheses[verdict.hypothesis]!r} holds"
    )
    mems = ", ".join(str(m) for m in verdict.memory_ids) or "none"
    return (
        f"{what} (confidence {verdict.confidence:.2f} from {verdict.pieces} piece(s) of "
        f"evidence; memories {mems})"
    )
