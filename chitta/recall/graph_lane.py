"""The graph lane: personalised PageRank from the entities a query names.

One directed, weighted graph of entities and memories, built once and then
updated by each fact or association change (chitta/recall/graph_index.py):

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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from chitta.recall.graph_index import ENTITY, MEMORY, REVERSE, GraphStore
from chitta.recall.query import QUERY_STOPWORDS

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

__all__ = ["ALPHA", "MAX_HOPS", "REVERSE", "GraphIndex", "GraphLaneResult", "graph_lane_hook"]

ALPHA = 0.85  # seed 004, Module 6: r = alpha x M x r + (1 - alpha) x personalization
MAX_HOPS = 2  # entity -> entity -> a memory of that entity: two facts apart (D-053)
MAX_NODES = 1024  # the BFS stops adding nodes here, nearest first (bounds the cost: D-053)
TOL = 1e-9  # the bound on the scores' L1 error at which the iteration stops (D-073)
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


class GraphIndex(GraphStore):
    """The lane's graph (chitta/recall/graph_index.py) and the lane read from it."""

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
            u_entity, v_entity = self._kind[u] == ENTITY, self._kind[v] == ENTITY
            label = self.label(u, v) if u_entity and v_entity else None
            arrow = "->" if label is None else (f"-{label[0]}->" if label[1] else f"<-{label[0]}-")
            if u_entity and not v_entity:  # the fact of v's memory that u is in
                fact = self.fact_of(u, int(self._mid[v]))
                if fact is not None:
                    pred, fwd, other = fact
                    out.append(f"{f'-{pred}->' if fwd else f'<-{pred}-'} {self._name(other)}")
            out.append(f"{arrow} {self._name(v)}")
        return " ".join(out)

    def _name(self, node: int) -> str:
        if self._kind[node] == ENTITY:
            return self.names[node]
        return f"memory {int(self._mid[node])}"

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
        mids, best, hop, nodes, parents = self.native.ppr_ranked(
            np.array(seeds, np.uint32), ALPHA, max_hops, 100, TOL, MAX_NODES, MEMORY
        )  # memories by score (ties by id); entities one hop out of the seeds
        if allowed is not None:
            keep = np.isin(mids, allowed)
            mids, best = mids[keep], best[keep]
        live: list[int] = []
        for i, m in enumerate(mids.tolist()):
            if is_live(m):
                live.append(i)
                if len(live) == pool:
                    break

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
            expansion=" ".join(self.names[v] for v in hop.tolist()),
            path=path,
        )


def _with_mentions(core: FieldCore, knowledge: Any) -> GraphIndex:
    """A whole build with the co-occurrence edges (opt-in; rebuilt when memories change)."""
    index = GraphIndex.build(knowledge, core.graph)
    pairs: list[tuple[int, int, float]] = []
    for mid in core.memories.live_ids():
        names = [index.mention(n) for n in proper_names(core.memories.text(mid) or "")]
        m = index.memory(mid)
        for e in sorted(set(names)):
            pairs += [(e, m, MENTION), (m, e, MENTION)]
    index.link(pairs)
    return index


def graph_lane_hook(core: FieldCore) -> Callable[[str, int, Any], GraphLaneResult | None]:
    """For the recall engine: (query text, pool, allowed ids) -> the lane, or None when
    the query names no entity of the field's graph. The index is built once (the first
    recall that runs the lane) and then takes each change as a delta."""
    cache: list[Any] = [None, None]  # [the mention build's version or None, the index]

    def lane(text: str, pool: int, allowed: Any) -> GraphLaneResult | None:
        knowledge = core.registry.by_name.get("knowledge")
        index: GraphIndex | None = cache[1]
        if core.engine.settings.graph_mentions:
            version = (
                getattr(knowledge, "version", None),
                core.graph.version,
                len(core.memories),
                core.memories.forgotten,
            )
            if cache[0] != version:
                cache[:] = [version, _with_mentions(core, knowledge)]
        elif index is None or cache[0] is not None or index.stale(knowledge, core.graph):  # type: ignore[arg-type]
            cache[:] = [None, GraphIndex.build(knowledge, core.graph)]  # type: ignore[arg-type]
        else:
            index.update()
        index = cache[1]
        assert index is not None
        if not index.n_entities:
            return None
        # co-occurrence puts a name between two memories: one hop more (seed -> m -> name -> m)
        hops = MAX_HOPS + 1 if core.engine.settings.graph_mentions else MAX_HOPS
        return index.lane(text, pool, allowed, core.memories.is_live, hops)

    return lane
