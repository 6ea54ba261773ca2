"""The edge-legality matrix: which typed edges may join which memory kinds.

A static table over every edge type (``chitta.ops.EDGE_KINDS``) x (source kind,
target kind) (``chitta.ops.MEMORY_KINDS``), checked before an edge is logged
(``Field.link``, ``supersede``, ``contradict``, ``confirm``). One rule, from the
seed: an observation or a decision may not rest on a thought, the pairs
(Observation, Thought) and (Decision, Thought) being illegal for evidential edges
(rationalisation: speculation laundered into fact).

A pair is read (claim, evidence): the memory whose standing rests on the edge,
then the memory it rests on. Which end is which depends on the edge:

- ``DerivedFrom`` (src was made from dst): claim = src, evidence = dst;
- ``Supports`` (src is evidence for dst): claim = dst, evidence = src;
- ``Confirms`` (src re-observes dst): claim = dst, evidence = src.

Every other edge (SameSession, CoRetrieved, Contradicts, Supersedes, AliasOf,
RelatedTo) is not evidential and legal between any kinds, so the edges the field
writes itself (CoRetrieved, AliasOf, SameSession) always pass. docs/KINDS.md
holds the full table.
"""

from __future__ import annotations

from chitta.errors import InvalidArgument
from chitta.ops import EDGE_KINDS, MEMORY_KINDS

__all__ = ["EVIDENTIAL", "ILLEGAL_PAIRS", "RULE", "check_edge", "edge_rule", "is_legal", "table"]

RULE = "no-fact-from-speculation"
"""The name of the one rule, as error messages give it."""

ILLEGAL_PAIRS: frozenset[tuple[str, str]] = frozenset(
    {("observation", "thought"), ("decision", "thought")}
)
"""(claim kind, evidence kind) pairs no evidential edge may join."""

EVIDENTIAL: dict[str, bool] = {"DerivedFrom": True, "Supports": False, "Confirms": False}
"""The evidential edges; True when the claim is the source (else the target)."""


def edge_rule(edge: str, src_kind: str, dst_kind: str) -> str | None:
    """The rule an edge ``src -edge-> dst`` between these kinds breaks, or None if legal."""
    claim_is_src = EVIDENTIAL.get(edge)
    if claim_is_src is None:
        return None
    pair = (src_kind, dst_kind) if claim_is_src else (dst_kind, src_kind)
    return RULE if pair in ILLEGAL_PAIRS else None


def is_legal(edge: str, src_kind: str, dst_kind: str) -> bool:
    return edge_rule(edge, src_kind, dst_kind) is None


def check_edge(edge: str, src: int, src_kind: str, dst: int, dst_kind: str) -> None:
    """Raise InvalidArgument naming the rule when ``src -edge-> dst`` is illegal."""
    if edge_rule(edge, src_kind, dst_kind) is None:
        return
    claim, evidence = ((src, src_kind), (dst, dst_kind))[:: 1 if EVIDENTIAL[edge] else -1]
    raise InvalidArgument(
        f"illegal edge {src} ({src_kind}) -{edge}-> {dst} ({dst_kind}): rule {RULE}: "
        f"{claim[1]} {claim[0]} would rest on thought {evidence[0]} (speculation laundered "
        "into fact; docs/KINDS.md). Link the evidence the thought stands on instead, store "
        "the claim as a thought, or use a RelatedTo edge; nothing was logged"
    )


def table() -> dict[tuple[str, str, str], bool]:
    """Every cell: (edge, source kind, target kind) -> legal."""
    return {
        (e, s, d): is_legal(e, s, d)
        for e in sorted(EDGE_KINDS)
        for s in sorted(MEMORY_KINDS)
        for d in sorted(MEMORY_KINDS)
    }
