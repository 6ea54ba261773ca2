"""Admission: the pure predicate between nomination / classification and filing.

Given the nominated paths with their relevance, the classified (or operator
named) paths in the order given, the legal paths (declared topics) and the
paths that are full (at their fact cap), a filing is:

1. every classified path that is legal and not full, first occurrence first;
2. then every nominated path that is legal, not full, and passes **both floors**
   (relevance >= ``floor_score`` and >= ``floor_ratio`` x the best nominated
   relevance), by relevance descending, ties by rendered path;
3. the union capped at ``filing_cap`` paths (**the filing cap over the union**);
4. **exactly one primary**: the first path; the others are secondary. An empty
   union admits nothing (no filing).

Everything left out is reported with the reason. No I/O, no state: the write
path runs it once before filing and again inside the filing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

from chitta.curated.paths import TopicPath

__all__ = ["Admission", "Rules", "admit"]


@dataclasses.dataclass(frozen=True)
class Rules:
    floor_score: float
    floor_ratio: float
    filing_cap: int


@dataclasses.dataclass(frozen=True)
class Admission:
    primary: TopicPath | None
    secondary: tuple[TopicPath, ...]
    refused: tuple[tuple[TopicPath, str], ...]  # (path, "illegal" | "full" | "floor" | "cap")

    @property
    def paths(self) -> tuple[TopicPath, ...]:
        return () if self.primary is None else (self.primary, *self.secondary)


def admit(
    nominated: Sequence[tuple[TopicPath, float]],
    classified: Sequence[TopicPath],
    legal: Collection[TopicPath],
    full: Collection[TopicPath],
    rules: Rules,
) -> Admission:
    refused: list[tuple[TopicPath, str]] = []
    chosen: list[TopicPath] = []

    def usable(path: TopicPath) -> bool:
        if path not in legal:
            refused.append((path, "illegal"))
            return False
        if path in full:
            refused.append((path, "full"))
            return False
        return True

    for path in classified:
        if path not in chosen and usable(path):
            chosen.append(path)
    best = max((score for _, score in nominated), default=0.0)
    floor = max(rules.floor_score, rules.floor_ratio * best)
    for path, score in sorted(nominated, key=lambda ps: (-ps[1], ps[0].render())):
        if path in chosen:
            continue
        if score < floor:
            refused.append((path, "floor"))
        elif usable(path):
            chosen.append(path)
    refused += [(path, "cap") for path in chosen[rules.filing_cap :]]
    chosen = chosen[: rules.filing_cap]
    if not chosen:
        return Admission(None, (), tuple(refused))
    return Admission(chosen[0], tuple(chosen[1:]), tuple(refused))
