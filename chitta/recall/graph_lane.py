"""The graph lane: personalised PageRank from the entities a query names.

One directed, weighted graph of entities and memories (node ids: entities
first, then memories), rebuilt when the knowledge or graph organ changes:

- a triplet ``s -p-> o`` of the latest view: ``s -> o`` at its weight and
  ``o -> s`` at ``REVERSE`` x its weight (direction respected, a fact still
  reachable from its object);
- each of its source memories ``m``: ``s -> m``, ``o -> m`` and ``m -> s``,
  ``m -> o`` at the triplet's weight (a memory is where its facts meet);
- an association edge ``a -> b`` (chitta.organs.graph; not Supersedes /
  Contradicts) at its accumulated weight, one way, as stored.

A query's seed entities are the entity names its word n-grams spell (alias
classes count as one entity). PageRank (alpha ``ALPHA``, personalisation
uniform over the seeds) runs natively (``chitta._core._PprGraph``, csrc/graph)
on the subgraph within ``MAX_HOPS`` out-edges of the seeds; the lane is that
subgraph's live memories by score. The query expansion is the names of the
entities one hop out of the seeds (a BM25 lane of its own in the engine).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.organs.graph import SUPPRESSING_EDGES
from chitta.organs.knowledge import ALIAS_OF, entity_key, predicate_key
from chitta.recall.query import QUERY_STOPWORDS

if TYPE_CHECKING:
    from chitta.field.core import FieldCore
    from chitta.organs.graph import GraphOrgan
    from chitta.organs.knowledge import KnowledgeOrgan

__all__ = ["ALPHA", "MAX_HOPS", "REVERSE", "GraphIndex", "GraphLaneResult", "graph_lane_hook"]

ALPHA = 0.85  # seed 004, Module 6: r = alpha x M x r + (1 - alpha) x personalization
MAX_HOPS = 2  # entity -> entity -> a memory of that entity: two facts apart (D-053)
REVERSE = 0.3  # a fact read backwards, like co-retrieval's reverse coupling (seed 000)
MAX_NODES = 1024  # the BFS stops adding nodes here, nearest first (bounds the cost: D-053)
TOL = 1e-9  # L1 change at which the power iteration stops
MAX_NGRAM = 4  # words in an entity name found in a query
_WORD = re.compile(r"[^\W_][\w'’./+#-]*")
_PROPER = re.compile(r"(?<![\w'’])[A-Z][\w’'-]*")
MENTION = 1.0  # a memory <-> a name it contains, both ways (opt-in: RecallSettings.graph_mentions)


def proper_names(text: str) -> list[str]:
    """Capitalised words of ``text`` that are not function words (a leading ``Name:``
    speaker label excluded): the entities of the co-occurrence graph."""
    head = text.split(":", 1)
    if len(head) == 2 and 0 < len(head[0]) <= 40 and head[0].istitle():
        text = head[1]
    out = []
    for w in _PROPER.findall(text):
        w = w.rstrip("'’-")
        w = w[:-2] if w.endswith(("'s", "’s")) else w
        if len(w) > 1 and w.casefold() not in QUERY_STOPWORDS:
            out.append(w)
    return out


@dataclasses.dataclass(frozen=True)
class GraphLaneResult:
    ids: npt.NDArray[np.uint64]  # memories, best first
    scores: npt.NDArray[np.float64]  # their PageRank
    seeds: tuple[str, ...]  # the names of the entities the query named
    expansion: str  # names of the entities one hop out of the seeds ("" when none)
    path: Callable[[int], str | None]  # memory id -> "Jeff -uses-> Rust -> memory 7"


class GraphIndex:
    """The lane's graph, built once from the organs' state (see the module docstring)."""

    def __init__(
        self,
        knowledge: KnowledgeOrgan | None,
        graph: GraphOrgan | None,
        mentions: Iterable[tuple[int, str]] = (),
    ) -> None:
        self.entity: dict[str, int] = {}  # entity key (any alias) -> node
        self.names: list[str] = []  # node -> shown name (entities only)
        self.memory_node: dict[int, int] = {}
        self.node_memory: list[int] = []
        # (u, v) -> (predicate, forward?) of the heaviest fact between two entity nodes
        self.label: dict[tuple[int, int], tuple[str, bool, float]] = {}
        self.facts_of: dict[int, list[tuple[int, int, str]]] = {}  # memory node -> its facts
        src: list[int] = []
        dst: list[int] = []
        wts: list[float] = []

        def edge(u: int, v: int, w: float) -> None:
            src.append(u)
            dst.append(v)
            wts.append(w)

        facts: list[tuple[int, int, str, float, list[int]]] = []
        if knowledge is not None:
            classes = knowledge.classes()
            for t, view in knowledge.query():
                if predicate_key(t.predicate) == ALIAS_OF:
                    continue
                s = self._entity(knowledge, classes, entity_key(t.subject))
                o = self._entity(knowledge, classes, entity_key(t.object))
                facts.append((s, o, t.predicate, float(view["weight"]), view["source_memory_ids"]))
            for alias, shown in classes.items():  # every alias finds its class's node
                if shown in self.entity:
                    self.entity.setdefault(alias, self.entity[shown])
        mentioned = [
            (mid, [self._mention(n) for n in proper_names(text)]) for mid, text in mentions
        ]
        self.n_entities = len(self.names)
        for mid, nodes in mentioned:  # entity co-occurrence: a memory and the names it contains
            m = self._memory(mid)
            for e in sorted(set(nodes)):
                edge(e, m, MENTION)
                edge(m, e, MENTION)
        for s, o, pred, w, sources in facts:
            edge(s, o, w)
            edge(o, s, REVERSE * w)
            for pair, fwd in (((s, o), True), ((o, s), False)):
                if self.label.get(pair, ("", True, -1.0))[2] < w:
                    self.label[pair] = (pred, fwd, w)
            for mid in sources:
                m = self._memory(mid)
                self.facts_of.setdefault(m, []).append((s, o, pred))
                for e in (s, o):
                    edge(e, m, w)
                    edge(m, e, w)
        if graph is not None:
            for a, outs in graph.out_edges():
                for b, kind, w in outs:
                    if kind not in SUPPRESSING_EDGES and w > 0:
                        edge(self._memory(a), self._memory(b), w)
        n = self.n_entities + len(self.node_memory)
        self.memory_ids = np.array(self.node_memory, np.uint64)
        self.native = _core._PprGraph(
            n,
            np.array(src, np.uint32),
            np.array(dst, np.uint32),
            np.array(wts, np.float64),
        )

    def _entity(self, kg: KnowledgeOrgan, classes: dict[str, str], key: str) -> int:
        shown = classes.get(key, key)
        node = self.entity.get(shown)
        if node is None:
            node = self.entity[shown] = len(self.names)
            self.names.append(kg.names.get(shown, shown))
        self.entity.setdefault(key, node)
        return node

    def _mention(self, name: str) -> int:
        key = entity_key(name)
        node = self.entity.get(key)
        if node is None:
            node = self.entity[key] = len(self.names)
            self.names.append(name)
        return node

    def _memory(self, mid: int) -> int:
        # Memory nodes follow every entity: the facts (all entities) are collected first.
        node = self.memory_node.get(mid)
        if node is None:
            node = self.memory_node[mid] = self.n_entities + len(self.node_memory)
            self.node_memory.append(mid)
        return node

    def seeds(self, text: str) -> list[int]:
        """The entity nodes the query's word n-grams name, in the order found."""
        words = [w.rstrip(".") for w in _WORD.findall(text.casefold())]
        words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in words]
        found: list[int] = []
        i = 0
        while i < len(words):
            for n in range(min(MAX_NGRAM, len(words) - i), 0, -1):
                gram = " ".join(words[i : i + n])
                node = self.entity.get(gram)
                if node is not None and not (n == 1 and gram in QUERY_STOPWORDS):
                    if node not in found:
                        found.append(node)
                    i += n
                    break
            else:
                i += 1
        return found

    def run(
        self, seeds: list[int], alpha: float = ALPHA, max_hops: int = MAX_HOPS
    ) -> tuple[Any, Any, Any]:
        nodes, scores, parents, _ = self.native.ppr(
            np.array(seeds, np.uint32),
            alpha=alpha,
            max_hops=max_hops,
            tol=TOL,
            max_nodes=MAX_NODES,
        )
        return nodes, scores, parents

    def path(self, node: int, parent: dict[int, int]) -> str:
        chain = [node]
        while parent.get(chain[-1], -1) >= 0 and len(chain) < 16:
            chain.append(parent[chain[-1]])
        chain.reverse()
        out = [self._name(chain[0])]
        for u, v in itertools.pairwise(chain):
            pred = self.label.get((u, v))
            if pred is not None:
                arrow = f"-{pred[0]}->" if pred[1] else f"<-{pred[0]}-"
            else:
                arrow = "->"
            if v >= self.n_entities and u < self.n_entities:  # the fact of v that u is in
                for s, o, pred_name in self.facts_of.get(v, ()):
                    if u in (s, o) and s != o:
                        other = o if u == s else s
                        arrow = f"-{pred_name}->" if u == s else f"<-{pred_name}-"
                        out.append(f"{arrow} {self._name(other)}")
                        break
                arrow = "->"
            out.append(f"{arrow} {self._name(v)}")
        return " ".join(out)

    def _name(self, node: int) -> str:
        if node < self.n_entities:
            return self.names[node]
        return f"memory {self.node_memory[node - self.n_entities]}"

    def lane(
        self,
        text: str,
        pool: int,
        allowed: Any,
        is_live: Callable[[int], bool],
        max_hops: int = MAX_HOPS,
    ) -> GraphLaneResult | None:
        seeds = self.seeds(text)
        if not seeds:
            return None
        nodes, scores, parents = self.run(seeds, max_hops=max_hops)
        e = self.n_entities
        mem = nodes >= e
        mn, ms = nodes[mem], scores[mem]
        order = np.lexsort((mn, -ms))  # by score, ties by node (arrival)
        mids = self.memory_ids[mn[order] - e]
        best = ms[order]
        if allowed is not None:
            keep = np.isin(mids, allowed)
            mids, best = mids[keep], best[keep]
        live: list[int] = []
        for i, m in enumerate(mids.tolist()):
            if is_live(m):
                live.append(i)
                if len(live) == pool:
                    break
        seed_arr = np.array(seeds, np.uint32)
        hop = nodes[(nodes < e) & np.isin(parents, seed_arr) & ~np.isin(nodes, seed_arr)]

        def path(mid: int) -> str | None:  # only explain asks: built on demand
            up = {
                n: (-1 if p == 0xFFFFFFFF else p) for n, p in zip(nodes.tolist(), parents.tolist())
            }
            node = self.memory_node.get(mid)
            return None if node is None or node not in up else self.path(node, up)

        return GraphLaneResult(
            ids=mids[live],
            scores=best[live],
            seeds=tuple(self.names[s] for s in seeds),
            expansion=" ".join(self.names[int(v)] for v in np.sort(hop)),
            path=path,
        )


def graph_lane_hook(core: FieldCore) -> Callable[[str, int, Any], GraphLaneResult | None]:
    """For the recall engine: (query text, pool, allowed ids) -> the lane, or None when
    the query names no entity of the field's graph."""
    cache: list[Any] = [None, None]

    def lane(text: str, pool: int, allowed: Any) -> GraphLaneResult | None:
        knowledge = core.registry.by_name.get("knowledge")
        version: tuple[Any, ...] = (getattr(knowledge, "version", None), core.graph.version)
        mentions = core.engine.settings.graph_mentions
        if mentions:
            version = (*version, len(core.memories), core.memories.forgotten)
        if cache[0] != version:
            texts = (
                ((m, core.memories.text(m) or "") for m in core.memories.live_ids())
                if mentions
                else ()
            )
            cache[:] = [version, GraphIndex(knowledge, core.graph, texts)]  # type: ignore[arg-type]
        index: GraphIndex = cache[1]
        if not index.n_entities:
            return None
        # co-occurrence puts a name between two memories: one hop more (seed -> m -> name -> m)
        hops = MAX_HOPS + 1 if mentions else MAX_HOPS
        return index.lane(text, pool, allowed, core.memories.is_live, hops)

    return lane
