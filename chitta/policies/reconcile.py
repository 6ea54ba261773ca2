"""The reconciler: R0 (structural, deterministic) and the R1 proposer hook.

R0 (``reconcile_all``) walks every edge between live memories once and reports
- ``illegal_edges``: edges the kind-legality matrix forbids
  (chitta/policies/edge_legality.py; rule ``no-fact-from-speculation``);
- ``laundering``: guarded edges from a candidate to an established memory
  (chitta/policies/provenance.py ``GUARDED_EDGES``; rule ``candidate-laundering``),
as written before the rules were enforced (or by an older chitta). It calls no
model and writes nothing of its own; ``unresolved`` counts the findings (R0
reports, a person or a proposer acts).

R1: an optional proposer (none by default; :func:`set_proposer`) is called with
the R0 report and the live memories and returns :class:`Proposal` edges. Each is
validated by R0 (both ids live and distinct, the edge known, the weight in range,
the matrix, the laundering guard, not already present); only the valid ones are
committed, as one atomic group of ``AddAssocEdge`` ops; the rest come back in
``rejected`` with the reason. Nothing a proposer says is written unvalidated.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.model import Memory
from chitta.policies import edge_legality
from chitta.policies import provenance as prov

if TYPE_CHECKING:
    from chitta.field.calls import CallContext
    from chitta.field.core import FieldCore

__all__ = [
    "LAUNDERING",
    "EdgeFinding",
    "Proposal",
    "Proposer",
    "ReconcileReport",
    "reconcile_all",
    "scan",
    "set_proposer",
    "validate",
]

LAUNDERING = "candidate-laundering"
MAX_EDGE_WEIGHT = 1e6  # as Field.link


@dataclasses.dataclass(frozen=True, slots=True)
class EdgeFinding:
    """An edge ``src -edge-> dst`` that breaks ``rule``."""

    src: int
    dst: int
    edge: str
    src_kind: str
    dst_kind: str
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, slots=True)
class Proposal:
    """An edge an R1 proposer suggests (``reason``: its own words, not logged)."""

    src: int
    dst: int
    edge: str = "RelatedTo"
    weight: float = 1.0
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ReconcileReport:
    illegal_edges: list[EdgeFinding]
    laundering: list[EdgeFinding]
    edges_scanned: int
    accepted: list[Proposal] = dataclasses.field(default_factory=list)
    rejected: list[tuple[Any, str]] = dataclasses.field(default_factory=list)

    @property
    def unresolved(self) -> int:
        return len(self.illegal_edges) + len(self.laundering)

    def as_dict(self) -> dict[str, Any]:
        return {
            "illegal_edges": [f.as_dict() for f in self.illegal_edges],
            "laundering": [f.as_dict() for f in self.laundering],
            "unresolved": self.unresolved,
            "edges_scanned": self.edges_scanned,
            "accepted": [p.as_dict() for p in self.accepted],
            "rejected": [
                {"proposal": p.as_dict() if isinstance(p, Proposal) else repr(p)[:200], "reason": r}
                for p, r in self.rejected
            ],
        }


Proposer = Callable[[ReconcileReport, Sequence[Memory]], Iterable[Any]]


def _kind(core: FieldCore, mid: int) -> str | None:
    state = core.memories.scoring_state(mid)
    return None if state is None else state[0]


def scan(core: FieldCore) -> ReconcileReport:
    """R0: the findings over every edge between live memories (sorted by src, dst, edge)."""
    from chitta.field.provenance import organ

    p = organ(core)
    candidates = p.candidates if p is not None else set()
    illegal: list[EdgeFinding] = []
    laundering: list[EdgeFinding] = []
    scanned = 0
    for src in sorted(core.memories.live_ids()):
        ks = _kind(core, src)
        for dst, edge, outgoing, _w in core.graph.neighbours(src):
            if not outgoing:
                continue
            kd = _kind(core, dst)
            if ks is None or kd is None:  # an edge to a forgotten memory
                continue
            scanned += 1
            rule = edge_legality.edge_rule(edge, ks, kd)
            if rule is not None:
                illegal.append(EdgeFinding(src, dst, edge, ks, kd, rule))
            if edge in prov.GUARDED_EDGES and src in candidates and dst not in candidates:
                laundering.append(EdgeFinding(src, dst, edge, ks, kd, LAUNDERING))
    key = lambda f: (f.src, f.dst, f.edge)
    return ReconcileReport(sorted(illegal, key=key), sorted(laundering, key=key), scanned)


def validate(core: FieldCore, proposal: object, taken: set[tuple[int, int, str]]) -> str | None:
    """Why R0 refuses ``proposal`` (None: it may be committed). ``taken``: edges already
    accepted in this pass."""
    from chitta.field.provenance import check_laundering

    if not isinstance(proposal, Proposal):
        return f"not a Proposal but {type(proposal).__name__}"
    src, dst, edge, w = proposal.src, proposal.dst, proposal.edge, proposal.weight
    if edge not in ops.EDGE_KINDS:
        return f"unknown edge {edge!r}"
    for mid in (src, dst):
        if isinstance(mid, bool) or not isinstance(mid, int) or not core.memories.is_live(mid):
            return f"no live memory {mid!r}"
    if src == dst:
        return "an edge from a memory to itself"
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
        return f"weight {w!r} is not a finite number"
    if not 0 < w <= MAX_EDGE_WEIGHT:
        return f"weight {w!r} is outside (0, {MAX_EDGE_WEIGHT:g}]"
    ks, kd = _kind(core, src), _kind(core, dst)
    rule = edge_legality.edge_rule(edge, ks or "", kd or "")
    if rule is not None:
        return f"illegal edge: rule {rule} ({ks} -{edge}-> {kd})"
    try:
        check_laundering(core, src, dst, edge)
    except InvalidArgument:
        return f"illegal edge: rule {LAUNDERING} (candidate {src} -> established {dst})"
    if core.graph.has_edge(src, dst, edge) or (src, dst, edge) in taken:
        return "the edge exists already"
    return None


def set_proposer(field: Any, proposer: Proposer | None) -> None:
    """Install (or, with None, remove) the R1 proposer ``reconcile_all`` runs on this
    field handle. It is not state: nothing is logged until its proposals pass R0."""
    if proposer is not None and not callable(proposer):
        raise InvalidArgument("a proposer is a function (report, memories) -> proposals, or None")
    from chitta.field.provenance import organ

    o = organ(field.core)
    if o is None:
        raise InvalidArgument("this field has no provenance organ registered; nothing to hook")
    o.proposer = proposer


def reconcile_all(ctx: CallContext) -> ReconcileReport:
    """R0, then R1 when a proposer is installed (module docstring)."""
    from chitta.field import read
    from chitta.field.provenance import organ

    core = ctx.core
    report = scan(core)
    o = organ(core)
    proposer = None if o is None else o.proposer
    if proposer is None:
        return report
    accepted: list[Proposal] = []
    rejected: list[tuple[Any, str]] = []
    taken: set[tuple[int, int, str]] = set()
    for proposal in proposer(report, list(read.memories(core))):
        reason = validate(core, proposal, taken)
        if reason is None:
            assert isinstance(proposal, Proposal)
            accepted.append(proposal)
            taken.add((proposal.src, proposal.dst, proposal.edge))
        else:
            rejected.append((proposal, reason))
    if accepted:
        now = ctx.now_ms()
        ctx.commit(
            *[
                ops.AddAssocEdge(
                    src=p.src, dst=p.dst, edge=p.edge, weight=float(p.weight), at_ms=now
                )
                for p in accepted
            ]
        )
    return dataclasses.replace(report, accepted=accepted, rejected=rejected)
