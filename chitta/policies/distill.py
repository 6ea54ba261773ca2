"""Distillation without a model: recurring episodes become wisdom candidates.

Episodic memories (kinds ``episode`` and ``lesson``) are grouped by the words they
share. Words are lower-cased alphanumeric runs of >= 3 characters minus a short
stop list. In id order, each memory joins the first cluster whose seed (its
first member) it overlaps with Jaccard >= ``JOIN``, else seeds a new one. A
cluster of >= 2 memories is a candidate keyed ``distill:<seed id>`` (stable
while the seed lives): support = its size, sessions = its members' distinct
sessions, score = the mean Jaccard of its members to the seed (the seed counts
1), statement = the seed's text, contradictions = members with a live
``Contradicts`` edge. A model hook may rewrite the statement; none is used by
default.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence

KINDS = frozenset({"episode", "lesson"})
JOIN = 0.5
MIN_SUPPORT = 2
_WORD = re.compile(r"[0-9a-z]+")
STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "was",
        "were",
        "are",
        "has",
        "have",
        "had",
        "not",
        "but",
        "you",
        "your",
        "our",
        "its",
        "into",
        "onto",
        "then",
        "than",
        "when",
        "what",
        "which",
        "who",
        "will",
        "would",
        "can",
        "could",
        "should",
        "after",
        "before",
    ]
)


def words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.casefold()) if len(w) >= 3 and w not in STOP)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class Cluster:
    key: str
    statement: str
    members: tuple[int, ...]
    sessions: tuple[str, ...]
    score: float
    realm: str | None


def clusters(
    memories: Iterable[tuple[int, str, str | None, str | None]],
    statement: Callable[[Sequence[str]], str] | None = None,
) -> list[Cluster]:
    """Clusters of ``(id, text, session, realm)`` rows (module docstring)."""
    groups: list[tuple[frozenset[str], list[tuple[int, str, str | None, str | None, float]]]] = []
    for mid, text, session, realm in sorted(memories):
        ws = words(text)
        for seed_words, members in groups:
            j = jaccard(seed_words, ws)
            if j >= JOIN and members[0][3] == realm:
                members.append((mid, text, session, realm, j))
                break
        else:
            groups.append((ws, [(mid, text, session, realm, 1.0)]))
    out = []
    for _, members in groups:
        if len(members) < MIN_SUPPORT:
            continue
        seed = members[0]
        texts = [m[1] for m in members]
        out.append(
            Cluster(
                key=f"distill:{seed[0]}",
                statement=statement(texts) if statement is not None else seed[1],
                members=tuple(m[0] for m in members),
                sessions=tuple(sorted({m[2] for m in members if m[2] is not None})),
                score=sum(m[4] for m in members) / len(members),
                realm=seed[3],
            )
        )
    return out
