"""Graph organ: typed association edges between memories.

Owns the adjacency built from AddAssocEdge ops (both directions are indexed;
the edge keeps its direction). Never imports another organ.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import Maintenance, Operation, RestoreContext, SnapshotContext
from chitta.organs.graph_ops import OPERATIONS

SUPPRESSING_EDGES = frozenset({"Supersedes", "Contradicts"})  # chitta.recall.factors.suppression


class GraphOrgan:
    name = "graph"
    handles = frozenset({OpType.AddAssocEdge})
    maintenance: tuple[Maintenance, ...] = ()
    operations: tuple[Operation, ...] = OPERATIONS  # settle, attractor_settle

    def __init__(self) -> None:
        # id -> {(other, edge kind, outgoing?): weight}
        self._adj: dict[int, dict[tuple[int, str, bool], float]] = defaultdict(dict)
        self.edges = 0
        # Targets of a Supersedes / Contradicts edge: the only memories recall scoring may suppress.
        self.suppression_targets: set[int] = set()
        self.version = 0  # bumped by every applied edge
        # (src, dst, kind) of each applied edge, for the graph lane's index to take as deltas
        # (chitta/recall/graph_index.py); None: nobody tracks (the index builds anew).
        self.changed: set[tuple[int, int, str]] | None = None

    def apply(self, op: Op) -> None:
        if type(op) is ops.AddAssocEdge:
            e: ops.AddAssocEdge = op
            self.version += 1
            fwd = (e.dst, e.edge, True)
            if fwd not in self._adj[e.src]:
                self.edges += 1
            # A repeated edge accumulates weight (co-retrieval strengthens the link).
            self._adj[e.src][fwd] = self._adj[e.src].get(fwd, 0.0) + e.weight
            back = (e.src, e.edge, False)
            self._adj[e.dst][back] = self._adj[e.dst].get(back, 0.0) + e.weight
            if e.edge in SUPPRESSING_EDGES:
                self.suppression_targets.add(e.dst)
            if self.changed is not None:
                self.changed.add((e.src, e.dst, e.edge))

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        for op in run:
            self.apply(op)

    def neighbours(self, mid: int) -> list[tuple[int, str, bool, float]]:
        """(other id, edge kind, outgoing from mid?, accumulated weight), heaviest first."""
        adj = self._adj.get(mid)
        if not adj:
            return []
        out = [(other, kind, outgoing, w) for (other, kind, outgoing), w in adj.items()]
        out.sort(key=lambda t: (-t[3], t[0]))
        return out

    def out_edges(self) -> list[tuple[int, list[tuple[int, str, float]]]]:
        """Every memory with outgoing edges: (id, [(dst, kind, accumulated weight)]), by id."""
        out = []
        for src in sorted(self._adj):
            outs = sorted(
                ((dst, kind, w) for (dst, kind, fwd), w in self._adj[src].items() if fwd),
                key=lambda t: (t[0], t[1]),
            )
            if outs:
                out.append((src, outs))
        return out

    def weight(self, src: int, dst: int, kind: str) -> float:
        """The accumulated weight of the directed edge src -> dst of ``kind`` (0.0: none)."""
        return self._adj.get(src, {}).get((dst, kind, True), 0.0)

    def has_edge(self, src: int, dst: int, kind: str) -> bool:
        return (dst, kind, True) in self._adj.get(src, {})

    # ---- checkpoints (chitta/field/checkpoint) ------------------------------------------------
    def snapshot(self, ctx: SnapshotContext | None = None) -> dict[str, Any]:
        """Every edge once, as stored: [src, dst, kind, accumulated weight]."""
        out = [
            [src, dst, kind, w]
            for src, adj in self._adj.items()
            for (dst, kind, fwd), w in adj.items()
            if fwd
        ]
        return {"edges": out}

    def restore(self, state: dict[str, Any], ctx: RestoreContext | None = None) -> None:
        for src, dst, kind, w in state["edges"]:
            self._adj[src][(dst, kind, True)] = w
            self._adj[dst][(src, kind, False)] = w
            if kind in SUPPRESSING_EDGES:
                self.suppression_targets.add(dst)
        self.edges = len(state["edges"])
        self.changed = None
        self.version += 1

    def stats(self) -> dict[str, Any]:
        return {"edges": self.edges}
