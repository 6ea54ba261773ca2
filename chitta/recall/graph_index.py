"""The graph lane's index: entities and memories as nodes of a native graph that
takes each fact or association change as a delta (D-053, D-060).

Edges (parallel edges add up; chitta/recall/graph_lane.py's docstring):

- a non-alias triplet ``s -p-> o`` of the latest view: ``s -> o`` at its weight,
  ``o -> s`` at ``REVERSE`` x it; each source memory ``m``: ``s -> m``, ``o -> m``,
  ``m -> s``, ``m -> o`` at its weight;
- an association edge ``a -> b`` (not Supersedes / Contradicts) at its accumulated
  weight, one way.

Each triplet owns its edge slots in the native graph: a reinforcement sets their
weight, a new source memory appends four, an invalidation sets them to 0 (a
tombstone the PageRank never follows) and a later assertion back. Entity nodes are
made in the order of the triplets that first name them (``seq``), memory nodes keyed
by memory id: the native graph keeps each node's out-edges in that order, so the
bounded BFS and its node cap see the same graph whether it was built at once
(:meth:`GraphStore.build`, at open) or by deltas (:meth:`GraphStore.update`).
A change of alias classes (an ``alias_of`` fact, declared, never extracted) merges
entity nodes: then the index is built again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.organs.graph import SUPPRESSING_EDGES
from chitta.organs.knowledge import ALIAS_OF, entity_key, predicate_key

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is 3.11+

    from chitta.organs.graph import GraphOrgan
    from chitta.organs.knowledge import Key, KnowledgeOrgan

__all__ = ["ENTITY", "MEMORY", "REVERSE", "GraphStore"]

REVERSE = 0.3  # a fact read backwards, like co-retrieval's reverse coupling (seed 000)
ENTITY, MEMORY = 0, 1  # node kinds (the native order key's first part)
_U32, _U64, _F64 = np.uint32, np.uint64, np.float64


class _Fact:
    """One triplet's nodes and slots: [s->o, o->s] then four per source memory."""

    __slots__ = ("o", "s", "slots", "sources", "w")

    def __init__(self, s: int, o: int) -> None:
        self.s, self.o = s, o
        self.w = 0.0  # the weight its slots carry now (0: invisible)
        self.sources: list[int] = []
        self.slots: list[int] = []


class GraphStore:
    """The lane's graph (see the module docstring); node ids in arrival order."""

    def __init__(self, knowledge: KnowledgeOrgan | None, graph: GraphOrgan | None) -> None:
        self.knowledge, self.graph = knowledge, graph
        empty = np.zeros(0, _U32)
        self.native = _core._PprGraph(0, empty, empty, np.zeros(0, _F64))
        self.entity: dict[str, int] = {}  # entity key (any alias) -> node
        self.keys: list[str] = []  # node -> its class's key ("" for a memory)
        self.names: list[str] = []  # node -> shown name ("" for a memory)
        self.memory_node: dict[int, int] = {}
        self.n_entities = 0
        self._kind = np.zeros(1024, np.uint8)
        self._mid = np.zeros(1024, _U64)  # node -> memory id (0 for an entity)
        self._facts: dict[Key, _Fact] = {}
        self._assoc: dict[tuple[int, int, str], int] = {}  # edge -> its slot
        self._classes: dict[str, str] | None = None
        self._members: dict[str, list[str]] = {}
        self._slots = 0
        self._new_nodes: list[tuple[int, int]] = []
        self._add: tuple[list[int], list[int], list[float]] = ([], [], [])
        self._set: tuple[list[int], list[float]] = ([], [])

    # -- building and updating ---------------------------------------------------------

    @classmethod
    def build(cls, knowledge: KnowledgeOrgan | None, graph: GraphOrgan | None) -> Self:
        """The index of the organs' state, made at once (and their change tracking on)."""
        index = cls(knowledge, graph)
        if knowledge is not None:
            knowledge.changed = set()
            index._facts_changed(list(knowledge.triplets))
        if graph is not None:
            graph.changed = set()
            index._edges_changed(
                [(a, b, kind) for a, outs in graph.out_edges() for b, kind, _ in outs]
            )
        index._flush()
        return index

    def stale(self, knowledge: KnowledgeOrgan | None, graph: GraphOrgan | None) -> bool:
        """True when only a new build can catch up: another organ object, tracking lost
        (a restore) or an alias class changed."""
        if knowledge is not self.knowledge or graph is not self.graph:
            return True
        if knowledge is not None:
            if knowledge.changed is None:
                return True
            if any(k[1] == ALIAS_OF for k in knowledge.changed):
                return True
        return graph is not None and graph.changed is None

    def update(self) -> None:
        """Apply the organs' changes since the last build or update, as deltas."""
        kg, graph = self.knowledge, self.graph
        if kg is not None and kg.changed:
            keys, kg.changed = kg.changed, set()
            self._facts_changed(sorted(keys, key=lambda k: kg.triplets[k].seq))
        if graph is not None and graph.changed:
            edges, graph.changed = graph.changed, set()
            self._edges_changed(sorted(edges))
        self._flush()

    def _facts_changed(self, keys: list[Key]) -> None:
        kg = self.knowledge
        assert kg is not None
        classes = kg.classes()
        if classes is not self._classes:
            self._classes, self._members = classes, {}
            for name, shown in classes.items():
                self._members.setdefault(shown, []).append(name)
        for key in keys:
            if key[1] == ALIAS_OF:
                continue
            t = kg.triplets[key]
            view = t.view(None, None)
            w = 0.0 if view is None else float(view["weight"])
            fact = self._facts.get(key)
            if fact is None:
                s = self._entity(key[0], classes)
                fact = self._facts[key] = _Fact(s, self._entity(key[2], classes))
                fact.slots = self._edges([(s, fact.o, w), (fact.o, s, REVERSE * w)])
                fact.w = w
            elif w != fact.w:
                mine = fact.slots
                self._set[0].extend(mine)
                self._set[1].extend([w, REVERSE * w] + [w] * (len(mine) - 2))
                fact.w = w
            for mid in [] if view is None else view["source_memory_ids"]:
                if mid in fact.sources:
                    continue
                fact.sources.append(mid)
                m, s, o = self._memory(mid), fact.s, fact.o
                fact.slots += self._edges([(s, m, w), (o, m, w), (m, s, w), (m, o, w)])

    def _edges_changed(self, edges: list[tuple[int, int, str]]) -> None:
        graph = self.graph
        assert graph is not None
        for a, b, kind in edges:
            if kind in SUPPRESSING_EDGES:
                continue
            w = max(graph.weight(a, b, kind), 0.0)
            slot = self._assoc.get((a, b, kind))
            if slot is None:
                na, nb = self._memory(a), self._memory(b)
                self._assoc[a, b, kind] = self._edges([(na, nb, w)])[0]
            else:
                self._set[0].append(slot)
                self._set[1].append(w)

    def mention(self, name: str) -> int:
        """The entity node of ``name`` (co-occurrence: the key alone, no alias class)."""
        key = entity_key(name)
        node = self.entity.get(key)
        if node is None:
            node = self.entity[key] = self._node(ENTITY, self.n_entities, key, name)
            self.n_entities += 1
        return node

    def link(self, pairs: list[tuple[int, int, float]]) -> None:
        """Add edges (node, node, weight) of the caller's own (the co-occurrence graph)."""
        self._edges(pairs)
        self._flush()

    def _entity(self, key: str, classes: dict[str, str]) -> int:
        shown = classes.get(key, key)
        node = self.entity.get(shown)
        if node is None:
            kg = self.knowledge
            assert kg is not None
            node = self._node(ENTITY, self.n_entities, shown, kg.names.get(shown, shown))
            self.n_entities += 1
            for alias in (shown, *self._members.get(shown, ())):
                self.entity.setdefault(alias, node)
        self.entity.setdefault(key, node)
        return node

    def memory(self, mid: int) -> int:
        return self._memory(mid)

    def _memory(self, mid: int) -> int:
        node = self.memory_node.get(mid)
        if node is None:
            node = self.memory_node[mid] = self._node(MEMORY, mid, "", "")
        return node

    def _node(self, kind: int, key: int, ckey: str, name: str) -> int:
        node = len(self.keys)
        self.keys.append(ckey)
        self.names.append(name)
        if node >= len(self._kind):
            self._kind = np.concatenate([self._kind, np.zeros_like(self._kind)])
            self._mid = np.concatenate([self._mid, np.zeros_like(self._mid)])
        self._kind[node] = kind
        self._mid[node] = key if kind == MEMORY else 0
        self._new_nodes.append((kind, key))
        return node

    def _edges(self, edges: list[tuple[int, int, float]]) -> list[int]:
        first = self._slots
        for u, v, w in edges:
            self._add[0].append(u)
            self._add[1].append(v)
            self._add[2].append(w)
        self._slots += len(edges)
        return list(range(first, self._slots))

    def _flush(self) -> None:
        """Hand the pending nodes, edges and weights to the native graph."""
        if self._new_nodes:
            kinds, keys = zip(*self._new_nodes, strict=True)
            self.native.add_nodes(np.array(kinds, np.uint8), np.array(keys, _U64))
            self._new_nodes = []
        if self._add[0]:
            src, dst, w = self._add
            first = self.native.add_edges(np.array(src, _U32), np.array(dst, _U32), np.array(w))
            assert first + len(src) == self._slots, "the native graph's slots went out of step"
            self._add = ([], [], [])
        if self._set[0]:
            self.native.set_weights(np.array(self._set[0], _U64), np.array(self._set[1], _F64))
            self._set = ([], [])

    # -- reading -----------------------------------------------------------------------

    def is_memory(self, nodes: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
        out: npt.NDArray[np.bool_] = self._kind[nodes] == MEMORY
        return out

    def memory_ids(self, nodes: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint64]:
        return self._mid[nodes]

    def label(self, u: int, v: int) -> tuple[str, bool] | None:
        """(predicate, read forward?) of the heaviest current fact between two entity
        nodes (ties: the first asserted), or None."""
        kg = self.knowledge
        if kg is None:
            return None
        a, b = self.keys[u], self.keys[v]
        found = [(t, vw, True) for t, vw in kg.query(a, None, b)]
        found += [(t, vw, False) for t, vw in kg.query(b, None, a)]
        found = [f for f in found if predicate_key(f[0].predicate) != ALIAS_OF]
        if not found:
            return None
        t, _, fwd = min(found, key=lambda f: (-f[1]["weight"], f[0].seq))
        return t.predicate, fwd

    def fact_of(self, u: int, mid: int) -> tuple[str, bool, int] | None:
        """(predicate, u is the subject?, the other entity's node) of the heaviest current
        fact of memory ``mid`` that entity node ``u`` is in (with another entity)."""
        kg = self.knowledge
        if kg is None:
            return None
        key = self.keys[u]
        found = [(t, vw, True) for t, vw in kg.query(key)]
        found += [(t, vw, False) for t, vw in kg.query(None, None, key)]
        best: tuple[tuple[float, int], tuple[str, bool, int]] | None = None
        for t, vw, fwd in found:
            if mid not in vw["source_memory_ids"] or predicate_key(t.predicate) == ALIAS_OF:
                continue
            other = self.entity.get(entity_key(t.object if fwd else t.subject))
            if other is None or other == u:
                continue
            rank = (-float(vw["weight"]), t.seq)
            if best is None or rank < best[0]:
                best = (rank, (t.predicate, fwd, other))
        return None if best is None else best[1]

    def stats(self) -> dict[str, Any]:
        return {"nodes": self.native.nodes, "slots": self.native.edges, "facts": len(self._facts)}
