"""The provenance organ: each memory's writer class and its candidate band.

``ProvenanceEvent`` ops (chitta/ops/provenance.py): ``assign`` records memory
``id``'s provenance and whether it is a candidate (the quarantine band of
open-weight-generated output); ``witness`` promotes a candidate on a closed-loop
signal. A memory no ``assign`` names is ``unknown`` and established (written
before the axis). The organ stores what the ops carry; the rules choosing the
values are chitta/policies/provenance.py, applied by the write path
(chitta/field/provenance.py). Operations: :mod:`chitta.organs.provenance_ops`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext
from chitta.organs.provenance_ops import OPERATIONS

SIDECAR = "provenance.rec"
MAGIC = b"CHITPROV"
UNKNOWN = "unknown"

# a witness: [signal, at_ms, note]
Witness = list[Any]


class ProvenanceOrgan(OrganBase):
    name = "provenance"
    handles = frozenset({OpType.ProvenanceEvent})
    operations = OPERATIONS

    def __init__(self) -> None:
        self.of: dict[int, str] = {}  # id -> provenance (absent: unknown)
        self.candidates: set[int] = set()  # ids in the candidate band
        self.witnesses: dict[int, list[Witness]] = {}  # id -> the signals that promoted it
        self.ignored = 0  # witness events naming no candidate (another writer promoted it first)
        self.version = 0  # bumped on every applied event (caches key on it)
        # The reconciler's R1 proposer for this handle (chitta.policies.reconcile.set_proposer):
        # a hook, not state (never snapshotted; what it proposes is logged only once validated).
        self.proposer: Any = None
        self.filter_cache: Any = (
            None  # the recall filter's last answer (chitta/field/provenance.py)
        )

    def apply(self, op: Op) -> None:
        if type(op) is not ops.ProvenanceEvent:
            return
        e: ops.ProvenanceEvent = op
        mid = int(e.id)
        self.version += 1
        if e.event == "assign":
            self.of[mid] = e.provenance or UNKNOWN
            if e.candidate:
                self.candidates.add(mid)
            else:
                self.candidates.discard(mid)
        elif e.event == "witness":
            if mid not in self.candidates:
                self.ignored += 1
                return
            self.candidates.discard(mid)
            self.witnesses.setdefault(mid, []).append([e.signal, int(e.at_ms), e.note])

    # ---- queries -----------------------------------------------------------------------
    def provenance(self, mid: int) -> str:
        """The provenance of memory ``mid`` (``unknown`` when none was recorded)."""
        return self.of.get(mid, UNKNOWN)

    def is_candidate(self, mid: int) -> bool:
        return mid in self.candidates

    def ids_of(self, provenances: Iterable[str]) -> list[int]:
        """Ids recorded with one of ``provenances`` (``unknown`` ids are not listed here:
        they are every id the organ does not hold), ascending."""
        want = set(provenances)
        return sorted(m for m, p in self.of.items() if p in want)

    def known_ids(self) -> list[int]:
        """Every id with a recorded provenance, ascending."""
        return sorted(self.of)

    # ---- checkpoints ---------------------------------------------------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [
            [mid, self.of[mid], mid in self.candidates, self.witnesses.get(mid, [])]
            for mid in sorted(self.of)
        ]
        extra = sorted(self.witnesses.keys() - self.of.keys())  # witnessed, never assigned
        rows.extend([mid, None, False, self.witnesses[mid]] for mid in extra)
        ctx.write_records(SIDECAR, MAGIC, 1, rows)
        return {"rows": len(rows), "ignored": self.ignored, "version": self.version}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        rows = ctx.read_records(SIDECAR, MAGIC, 1)
        if len(rows) != int(state["rows"]):
            raise ValueError("provenance: the sidecar and the state disagree")
        for mid, prov, candidate, witnesses in rows:
            mid = int(mid)
            if prov is not None:
                self.of[mid] = str(prov)
            if candidate:
                self.candidates.add(mid)
            if witnesses:
                self.witnesses[mid] = [[str(s), int(t), n] for s, t, n in witnesses]
        self.ignored, self.version = int(state["ignored"]), int(state["version"])

    def stats(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for p in self.of.values():
            counts[p] = counts.get(p, 0) + 1
        return {
            "recorded": len(self.of),
            "candidates": len(self.candidates),
            "witnessed": len(self.witnesses),
            **{f"provenance_{p}": n for p, n in sorted(counts.items())},
        }
