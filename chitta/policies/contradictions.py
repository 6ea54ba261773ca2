"""The reconciler R0: candidate contradictions found by structure alone.

No model is called. Live memories are grouped by ``(realm, first six words)``
(words: ``\\w+`` runs of the case-folded text; a shorter text uses all it has).
Within a group, every pair of memories is a candidate:

- kinds differ (a ``decision`` and an ``observation`` opening alike): score
  ``KIND_MISMATCH = 0.6``;
- same kind, different bodies (canonical texts differ): score
  ``DIVERGENCE = 0.4``;
- same kind and the same canonical text: a duplicate, not a conflict (skipped;
  ``dedup`` handles it).

Pairs already resolved by a ``Supersedes`` or ``Contradicts`` edge (either
direction) are skipped. Generation stops at ``MAX_PAIRS = 50`` pairs (groups in
order of their oldest member, pairs in id order), so a large store costs no
O(n^2) scan. The result is sorted by score (highest first), then ids.

R0 only proposes: ``Field.detect_contradictions()`` writes nothing; a caller
records a verdict with ``Field.contradict(a, b)`` or ``Field.supersede(old, new)``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

from chitta.model import Memory
from chitta.policies.dedup import canonical_text

KIND_MISMATCH = 0.6
DIVERGENCE = 0.4
MAX_PAIRS = 50
PREFIX_WORDS = 6

_WORD = re.compile(r"\w+")


@dataclasses.dataclass(frozen=True, slots=True)
class ContradictionPair:
    """A candidate conflict: memories ``a`` < ``b`` (ids) with the same opening."""

    a: int
    b: int
    score: float
    reason: str  # "kind_mismatch" or "divergence"
    realm: str | None
    prefix: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def prefix(text: str, words: int = PREFIX_WORDS) -> str:
    """The first ``words`` words of the case-folded text, space-joined."""
    return " ".join(_WORD.findall(canonical_text(text))[:words])


def detect_contradictions(
    memories: Iterable[Memory],
    *,
    resolved: Callable[[int, int], bool] = lambda a, b: False,
    max_pairs: int = MAX_PAIRS,
) -> list[ContradictionPair]:
    """Candidate contradictions among ``memories`` (see the module docstring).
    ``resolved(a, b)`` says whether an edge already settles the pair."""
    groups: dict[tuple[str | None, str], list[Memory]] = {}
    for m in sorted(memories, key=lambda m: m.id):
        key = (m.realm, prefix(m.text))
        if key[1]:
            groups.setdefault(key, []).append(m)
    pairs: list[ContradictionPair] = []
    for (realm, pre), members in groups.items():
        if len(members) < 2:
            continue
        canon = [canonical_text(m.text) for m in members]
        for i, a in enumerate(members):
            for j in range(i + 1, len(members)):
                b = members[j]
                if a.kind != b.kind:
                    score, reason = KIND_MISMATCH, "kind_mismatch"
                elif canon[i] != canon[j]:
                    score, reason = DIVERGENCE, "divergence"
                else:
                    continue
                if resolved(a.id, b.id):
                    continue
                pairs.append(ContradictionPair(a.id, b.id, score, reason, realm, pre))
                if len(pairs) >= max_pairs:
                    return _ordered(pairs)
    return _ordered(pairs)


def _ordered(pairs: list[ContradictionPair]) -> list[ContradictionPair]:
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))
