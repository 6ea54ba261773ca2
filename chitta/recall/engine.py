"""The recall pipeline: lanes -> weighted RRF -> factor scoring -> hits.

Lanes (each returns ranked ids, filters applied inside via ``allowed``):
- ``bm25``: keyword relevance of the query text;
- ``dense``: cosine of the query vector (exact scan, or binary codes + exact
  rescoring on large fields);
- ``posting``: shared active features of the query's sparse code;
- ``neighbour``: memories one edge away (any association, co-retrieval
  included) from the strongest candidates of the other lanes;
- ``graph``: personalised PageRank from the entities the query names over the
  knowledge graph and the association edges (chitta/recall/graph_lane.py), with
  ``graph_expansion``: BM25 of the entities one hop out of them.

Fused candidates are scored together. By default the tail (fusion, the
candidates' state from the organs' columns, scores, top k) runs natively
(``chitta/recall/native_tail.py``, ``csrc/recall``); with ``explain=True`` (or
``engine.native = False``) the Python path runs: the state is gathered into
one ``CandidateBatch`` (columns) and ``Scorer.score_batch`` scores them all.
Both return the same hits, bit for bit. Only the ``k`` returned get a
``Memory``, lane ranks and (with ``explain``) the per-candidate
``Scorer.score`` explanation.

The engine reads organs only through their public methods and writes nothing;
the Field logs the touches of what it returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from chitta.errors import InvalidArgument
from chitta.model import Memory
from chitta.organs.index.fusion import rrf_fuse
from chitta.recall.convex import check_alpha, convex_from_ranks
from chitta.recall.expand import check_expansion
from chitta.recall.factors import suppression
from chitta.recall.hit import Factor, Hit
from chitta.recall.lane_floor import dense_floor
from chitta.recall.native_tail import rank_native, supports_native
from chitta.recall.query import keyword_query
from chitta.recall.scorer import CandidateBatch, Scorer, access_columns
from chitta.recall.timeq import dated_mask

if TYPE_CHECKING:
    from chitta.organs.memories import ScoringStates

U64 = npt.NDArray[np.uint64]

LANES = ("bm25", "dense", "posting", "neighbour", "graph")


@dataclasses.dataclass(frozen=True)
class RecallSettings:
    lane_weights: Mapping[str, float] = dataclasses.field(
        # LoCoMo dev (DECISIONS.md D-021): chosen on one half of the questions. Posting 0: with the
        # random initial projection the lane cost recall; it runs when asked for by name (with_lanes).
        default_factory=lambda: {
            "bm25": 1.0,
            "dense": 0.5,
            "posting": 0.0,
            "neighbour": 0.3,
            # Opt-in (weight 0: off): its index is rebuilt whole after any change to the KG or
            # the association edges, O(facts) per recall once writes and recalls interleave,
            # and on LoCoMo it moves nothing (D-053). Weight 1.0 or lanes=(..., "graph") turns it on.
            "graph": 0.0,
        }
    )
    # The graph lane's query expansion (BM25 of the entity names one hop out), relative weight.
    graph_expansion_weight: float = 0.5
    # True: the graph lane also links every memory to the capitalised names in its text (entity
    # co-occurrence; chitta/recall/graph_lane.py). Opt-in: LoCoMo dev in docs/DECISIONS.md D-053.
    graph_mentions: bool = False
    rrf_k: int = 20  # measured on LoCoMo dev: 20 beats 60 (hybrid R@10 0.573 vs 0.529), D-021
    keyword_query: bool = (
        True  # the bm25 lane drops the query's function words (chitta.recall.query)
    )
    pool: int = 50  # candidates asked of each lane: max(pool, 5 * k)
    # With convex fusion (fusion_alpha set and a query vector) the keyword lane goes deeper: max(keyword_pool,
    # the lanes' pool) candidates, and fusion keeps as many. LoCoMo dev, MiniLM, recall(k=10): R@10 (1-4)
    # 0.783 -> 0.794; a dense lane of 100 adds nothing, and under RRF the depth adds nothing either
    # (0.769 -> 0.770), so RRF recalls do not pay for it (docs/DECISIONS.md D-026).
    keyword_pool: int = 100
    neighbour_seeds: int = 5  # strongest fused candidates whose neighbours are added
    # A query naming one speaker (meta["speaker"]) multiplies that speaker's candidates' fused score by
    # 1 + speaker_prior (chitta.recall.query.named_speaker; LoCoMo dev: DECISIONS.md D-022). 0: off.
    speaker_prior: float = 0.3
    # The speaker prior of a list question ("What activities does Mel do?": evidence spread over
    # many memories of one speaker; chitta.recall.list_query; LoCoMo dev: docs/DECISIONS.md
    # D-076). None: speaker_prior for every query.
    list_speaker_prior: float | None = 0.8
    # A query naming dates ("in May 2023", "on 3 June, 2023": chitta.recall.timeq) multiplies the fused
    # score of candidates whose event time lies in them (or up to time_prior_slack_days after) by
    # 1 + time_prior (LoCoMo dev: docs/DECISIONS.md D-023). 0: off.
    time_prior: float = 1.0
    time_prior_slack_days: float = 0.0
    # None: weighted RRF. A number in [0, 1]: convex score fusion of the keyword and dense lanes,
    # alpha x BM25 share (chitta.recall.convex; embedders may name one: chitta.recall.presets).
    fusion_alpha: float | None = None
    # True: when both the keyword and the dense lane run and the dense lane searches the saved HNSW
    # graph, start that search on the process's search thread, run BM25, then collect it (the hits
    # are the same either way). On by default: with a free core a 100K hybrid recall takes 0.73-0.74
    # instead of 0.92-0.96 ms wall p50 (10K 0.51-0.54 vs 0.66-0.70); with every core busy it costs
    # ~2-4% (docs/DECISIONS.md D-020).
    concurrent_lanes: bool = True
    # > 0: with convex fusion, the query's vector picks the expansion_words field words nearest to it
    # (cosine >= expansion_min_cosine; chitta.recall.expand) and their BM25 score over the best, times
    # expansion_weight, joins each candidate's fused score (an "expansion" lane). 0: off. Embedders may
    # name a weight (chitta.recall.presets; LoCoMo dev: docs/DECISIONS.md D-027, D-028).
    expansion_weight: float = 0.0
    expansion_words: int = 5
    expansion_min_cosine: float = 0.3
    # True: when Field.recall embeds the query text itself and the text names one speaker, the dense
    # lane's vector is of the text without that name (chitta.recall.query.without_speaker). Opt-in:
    # on LoCoMo dev a tie alone, a gain with the expansion above (docs/DECISIONS.md D-027).
    dense_query_without_speaker: bool = False
    # "scorer": chitta's scoring (the factors of chitta.recall.scorer); "seed004": seed 004's
    # composite over 3x keyword candidates (chitta.recall.seed_rerank; LoCoMo: D-056).
    reranker: str = "scorer"
    # True: the first candidate of the dense and of the expansion lane, when the keyword lane
    # missed it, ranks no lower than second or third before the factors (chitta.recall.lane_floor:
    # a buried paraphrase; LoCoMo dev in docs/DECISIONS.md).
    dense_floor: bool = True

    def __post_init__(self) -> None:
        check_alpha(self.fusion_alpha)  # InvalidArgument unless None or a number in [0, 1]
        for name in ("pool", "keyword_pool"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
                raise InvalidArgument(f"{name} must be an int in [1, 100000], got {value!r}")
        check_expansion(self.expansion_weight, self.expansion_words, self.expansion_min_cosine)
        g = self.graph_expansion_weight
        if isinstance(g, bool) or not isinstance(g, (int, float)) or not 0 <= g <= 100:
            raise InvalidArgument(f"graph_expansion_weight must be a number in [0, 100], got {g!r}")
        if not isinstance(self.graph_mentions, bool):
            raise InvalidArgument("graph_mentions must be a bool")
        lp = self.list_speaker_prior
        if lp is not None and (
            isinstance(lp, bool) or not isinstance(lp, (int, float)) or not 0 <= lp <= 100
        ):
            raise InvalidArgument(
                f"list_speaker_prior must be None or a number in [0, 100], got {lp!r}"
            )
        if not isinstance(self.dense_floor, bool):
            raise InvalidArgument("dense_floor must be a bool")
        if not isinstance(self.dense_query_without_speaker, bool):
            raise InvalidArgument("dense_query_without_speaker must be a bool")
        if self.reranker not in ("scorer", "seed004"):
            raise InvalidArgument(
                f"reranker must be 'scorer' or 'seed004', got {self.reranker!r:.40}"
            )


class MemoriesView(Protocol):
    def get(self, mid: int) -> Memory | None: ...
    def memories(self, ids: list[int]) -> list[Memory | None]: ...
    def is_live(self, mid: int) -> bool: ...
    def scoring_states(self, ids: list[int]) -> ScoringStates: ...


class IndexView(Protocol):
    def keyword(self, query: str, k: int, allowed: U64 | None) -> U64: ...
    def dense(self, vector: Any, k: int, allowed: U64 | None) -> tuple[U64, Any]: ...
    def posting(self, features: Any, k: int, allowed: U64 | None) -> U64: ...
    def cosine_array(self, vector: Any, ids: list[int]) -> npt.NDArray[np.float64]: ...
    def is_staged(self, mid: int) -> bool: ...
    def speaker_ids(self, query: str) -> U64 | None: ...


class GraphView(Protocol):
    edges: int  # how many distinct edges there are (none: no neighbour lane)
    suppression_targets: set[int]  # memories with an incoming Supersedes / Contradicts edge

    def neighbours(self, mid: int) -> list[tuple[int, str, bool, float]]: ...


class RecallEngine:
    def __init__(
        self,
        memories: MemoriesView,
        index: IndexView,
        graph: GraphView,
        scorer: Scorer | None = None,
        settings: RecallSettings | None = None,
    ) -> None:
        self.memories = memories
        self.index = index
        self.graph = graph
        self.scorer = scorer or Scorer()
        self.settings = settings or RecallSettings()
        # The fused tail (fusion, candidates' state, scores, top k) in native code when the organs
        # expose their columns (chitta/recall/native_tail.py); False: the Python reference path.
        self.native = True
        self.vocabulary: Any = (
            None  # chitta.recall.expand.Vocabulary when the settings expand queries
        )
        # id -> the staleness multiplier of each stale memory (chitta/policies/code_trust.py)
        self.staleness: Callable[[], Mapping[int, float]] | None = None
        # query text -> id -> the code prior of memories about a symbol it names
        # (chitta/policies/code_lane.py); their ids form the "code" lane
        self.code_lane: Callable[[str], Mapping[int, float]] | None = None
        # id -> the provenance multiplier of each memory whose multiplier is not 1
        # (open-weight writers, the candidate band: chitta/field/provenance.py)
        self.provenance: Callable[[], Mapping[int, float]] | None = None
        # (query text, pool, allowed) -> chitta.recall.graph_lane.GraphLaneResult or None
        self.graph_lane: Callable[[str, int, U64 | None], Any] | None = None
        # (candidate ids, their event times) -> a multiplier of each one's fused score, in place
        # of the query-date prior: the router's date-aware ranking (chitta/recall/temporal.py)
        self.temporal: Callable[[U64, npt.NDArray[np.int64]], npt.NDArray[np.float64]] | None = None

    def lane_weight(self, name: str) -> float:
        """The fusion weight of lane ``name`` (the expansion lane's is ``expansion_weight``)."""
        if name == "expansion":
            return float(self.settings.expansion_weight)
        if name == "code":
            return 1.0
        if name == "graph_expansion":
            return float(self.settings.graph_expansion_weight) * self.lane_weight("graph")
        return float(self.settings.lane_weights.get(name, 0.0))

    def with_lanes(self, names: tuple[str, ...]) -> RecallEngine:
        """The same engine restricted to ``names`` (other lanes get weight 0; a
        named lane whose default weight is 0 gets weight 1)."""
        weights = {
            n: ((w or 1.0) if n in names else 0.0) for n, w in self.settings.lane_weights.items()
        }
        return self._copy(dataclasses.replace(self.settings, lane_weights=weights))

    def with_temporal(
        self, prior: Callable[[U64, npt.NDArray[np.int64]], npt.NDArray[np.float64]]
    ) -> RecallEngine:
        """The same engine whose time prior is ``prior`` (a per-candidate multiplier)."""
        engine = self._copy(self.settings)
        engine.temporal = prior
        return engine

    def _copy(self, settings: RecallSettings) -> RecallEngine:
        """This engine with ``settings``, every hook carried over."""
        engine = RecallEngine(self.memories, self.index, self.graph, self.scorer, settings)
        engine.native = self.native
        engine.vocabulary = self.vocabulary
        engine.staleness = self.staleness
        engine.code_lane = self.code_lane
        engine.provenance = self.provenance
        engine.graph_lane = self.graph_lane
        engine.temporal = self.temporal
        return engine

    def lanes(
        self,
        *,
        text: str | None,
        vector: npt.NDArray[np.float32] | None,
        code: npt.NDArray[np.uint32] | None,
        pool: int,
        allowed: U64 | None,
        keyword_scores: dict[str, Any] | None = None,
        keyword_pool: int | None = None,
        pending: dict[str, Any] | None = None,
    ) -> dict[str, U64]:
        weights = self.settings.lane_weights
        out: dict[str, U64] = {}
        keyword = bool(text) and weights.get("bm25", 0) > 0
        deep = max(pool, keyword_pool or 0)  # the keyword lane's depth
        dense_wait = None
        if (
            vector is not None
            and weights.get("dense", 0) > 0
            and keyword
            and self.settings.concurrent_lanes
        ):
            start = getattr(
                self.index, "dense_start", None
            )  # None: the organ cannot start it early
            dense_wait = start(vector, pool, allowed) if start is not None else None
            if pending is not None and text:  # the expansion lane's word search, behind BM25 too
                flush = getattr(self.index, "keyword_flush", None)  # words of texts not indexed yet
                if flush is not None:
                    flush()
                pending["expansion"] = self.vocabulary.expansion_start(
                    vector, text, self.settings.expansion_words, self.settings.expansion_min_cosine
                )
        if text and keyword:
            query = keyword_query(text) if self.settings.keyword_query else text
            scored = (
                getattr(self.index, "keyword_scored", None) if keyword_scores is not None else None
            )
            if (
                scored is not None and keyword_scores is not None
            ):  # convex fusion needs the BM25 scores
                out["bm25"], keyword_scores["bm25"] = scored(query, deep, allowed)
            else:
                out["bm25"] = self.index.keyword(query, deep, allowed)
        if dense_wait is not None:
            out["dense"] = dense_wait()[0]
        elif vector is not None and weights.get("dense", 0) > 0:
            out["dense"] = self.index.dense(vector, pool, allowed)[0]
        if code is not None and weights.get("posting", 0) > 0:
            out["posting"] = self.index.posting(code, pool, allowed)
        if weights.get("neighbour", 0) > 0 and out and self.graph.edges:
            seeds, _ = self._fuse(out)
            out["neighbour"] = self._neighbours(
                seeds[: self.settings.neighbour_seeds], pool, allowed
            )
        return out

    def _fuse(self, lanes: Mapping[str, U64]) -> tuple[U64, npt.NDArray[np.float64]]:
        names = [n for n in lanes if len(lanes[n])]
        if not names:
            return np.zeros(0, np.uint64), np.zeros(0, np.float64)
        ids, scores = rrf_fuse(
            [lanes[n] for n in names],
            k=self.settings.rrf_k,
            weights=[self.lane_weight(n) for n in names],
        )
        return ids, scores

    def _neighbours(self, seeds: U64, pool: int, allowed: U64 | None) -> U64:
        allowed_set = None if allowed is None else set(allowed.tolist())
        seen = set(seeds.tolist())
        ranked: list[int] = []
        for seed in seeds.tolist():
            for other, _kind, _out, _w in self.graph.neighbours(seed):
                if other in seen or (allowed_set is not None and other not in allowed_set):
                    continue
                if not self.memories.is_live(other):
                    continue
                seen.add(other)
                ranked.append(other)
                if len(ranked) >= pool:
                    return np.array(ranked, np.uint64)
        return np.array(ranked, np.uint64)

    def recall(
        self,
        *,
        text: str | None,
        vector: npt.NDArray[np.float32] | None,
        code: npt.NDArray[np.uint32] | None,
        k: int,
        allowed: U64 | None,
        now_ms: int,
        explain: bool = False,
        depth_k: int | None = None,
    ) -> list[Hit]:
        # How deep the lanes look follows ``depth_k`` (default ``k``): a caller that reranks more
        # than it returns (the learned factors) asks for k = its pool over the same candidates.
        lane_pool = max(self.settings.pool, 5 * (k if depth_k is None else depth_k))
        kw: dict[str, Any] | None = (
            {} if self.settings.fusion_alpha is not None and vector is not None else None
        )
        # convex fusion scores deeper keyword candidates; fusion keeps the deepest lane's count
        pool = max(lane_pool, self.settings.keyword_pool) if kw is not None else lane_pool
        # the expansion lane's word search needs only the vector: lanes() starts it beside the dense search
        expanding = (
            kw is not None
            and self.vocabulary is not None
            and self.settings.expansion_weight > 0
            and text
        )
        pending: dict[str, Any] | None = {} if expanding else None
        lanes = self.lanes(
            text=text,
            vector=vector,
            code=code,
            pool=lane_pool,
            allowed=allowed,
            keyword_scores=kw,
            keyword_pool=pool,
            pending=pending,
        )
        coded = self.code_lane(text) if self.code_lane is not None and text else None
        if coded:  # the code lane: memories about the symbols the query names
            found = np.array(sorted(coded, key=lambda m: (-coded[m], m)), np.uint64)
            if allowed is not None:
                found = found[np.isin(found, allowed)]
            lanes["code"] = found[:lane_pool]
        graphed = self._graph(lanes, text, lane_pool, allowed)
        names = [n for n in lanes if len(lanes[n])]
        if not names:
            return []
        # convex fusion blends the keyword and dense lanes: only when both ran (a lane alone stays itself)
        alpha = self.settings.fusion_alpha
        convex: tuple[Any, ...] | None = (
            (kw["bm25"], alpha)
            if kw and alpha is not None and "bm25" in names and "dense" in names
            else None
        )
        if (
            convex is not None
            and self.vocabulary is not None
            and self.settings.expansion_weight > 0
            and text
        ):
            started = pending.get("expansion") if pending is not None else None
            convex = (*convex, *self._expand(lanes, names, text, vector, pool, allowed, started))
        stale = self.staleness() if self.staleness is not None else None
        weighed = self.provenance() if self.provenance is not None else None
        if weighed and not any(m in weighed for n in names for m in lanes[n].tolist()):
            weighed = None  # no candidate carries the factor: every multiplier is 1
        if (
            self.native
            and not explain
            and not stale
            and not coded
            and not weighed
            and supports_native(self)
        ):
            return rank_native(
                self,
                lanes,
                names,
                text=text,
                vector=vector,
                k=k,
                pool=pool,
                now_ms=now_ms,
                convex=convex,
            )
        hits = self._rank_python(
            lanes,
            names,
            text=text,
            vector=vector,
            k=k,
            pool=pool,
            now_ms=now_ms,
            explain=explain,
            convex=convex,
            stale=stale or None,
            coded=coded or None,
            weighed=weighed or None,
        )
        if explain and graphed is not None:  # the path each graph hit was reached by
            for h in hits:
                if "graph" in h.lanes:
                    object.__setattr__(h, "graph_path", graphed.path(h.id))
        return hits

    def _graph(
        self, lanes: dict[str, U64], text: str | None, pool: int, allowed: U64 | None
    ) -> Any:
        """Add the graph lane and its query expansion to ``lanes``; the lane's result (None
        when it did not run or the query names no entity of the graph)."""
        if self.graph_lane is None or not text or self.lane_weight("graph") <= 0:
            return None
        found = self.graph_lane(text, pool, allowed)
        if found is None:
            return None
        if len(found.ids):
            lanes["graph"] = found.ids
        if found.expansion and self.lane_weight("graph_expansion") > 0:
            lanes["graph_expansion"] = self.index.keyword(found.expansion, pool, allowed)
        return found

    def _expand(
        self,
        lanes: dict[str, U64],
        names: list[str],
        text: str,
        vector: Any,
        pool: int,
        allowed: U64 | None,
        started: Any = None,
    ) -> tuple[Any, float]:
        """Run the expansion lane (chitta.recall.expand) over the candidates: adds it to ``lanes`` /
        ``names`` and returns its BM25 scores and weight for convex fusion, or (None, 0.0) when no
        field word is near or no candidate holds one. ``started``: the word search ``lanes`` began
        on the search thread (its finishing call); None: search here."""
        if started is not None:
            query = started()
        else:
            query = self.vocabulary.expansion(
                vector, text, self.settings.expansion_words, self.settings.expansion_min_cosine
            )
        scored = getattr(self.index, "keyword_scored", None)
        if not query or scored is None:
            return None, 0.0
        # re-scores the keyword and dense lanes' candidates only (the BM25 index scores so few from its
        # forward lists: cost ~ candidates x words); new candidates added nothing on LoCoMo (D-027)
        # both lanes' ids, sorted (BM25 breaks score ties by the order it is given) but not deduplicated
        # (an id in both is scored once): a tenth of np.union1d's cost
        cands = np.sort(np.concatenate((lanes["bm25"], lanes["dense"])))
        ids, scores = scored(query, len(cands), cands)
        if not len(ids):
            return None, 0.0
        lanes["expansion"] = ids
        names.append("expansion")
        return scores, float(self.settings.expansion_weight)

    def _rank_python(
        self,
        lanes: Mapping[str, U64],
        names: list[str],
        *,
        text: str | None,
        vector: npt.NDArray[np.float32] | None,
        k: int,
        pool: int,
        now_ms: int,
        explain: bool,
        convex: tuple[Any, ...] | None = None,
        stale: Mapping[int, float] | None = None,
        coded: Mapping[int, float] | None = None,
        weighed: Mapping[int, float] | None = None,
    ) -> list[Hit]:
        """Fusion, the candidates' state, scores and hits in Python: the reference of
        ``rank_native`` (chitta/recall/native_tail.py) and the ``explain=True`` path."""
        ids, fused, ranks = rrf_fuse(
            [lanes[n] for n in names],
            k=self.settings.rrf_k,
            weights=[self.lane_weight(n) for n in names],
            limit=pool,
            return_ranks=True,
        )
        if (
            convex is not None
        ):  # convex score fusion in place of RRF's scores (chitta.recall.convex)
            fused = convex_from_ranks(
                ranks, names, self.index.cosine_array(vector, ids.tolist()), convex
            )
        if self.settings.dense_floor:  # a paraphrase keyword matches cannot bury
            floored = dense_floor(fused, ranks, names)
            fused = fused if floored is None else floored
        best = float(
            fused.max()
        )  # before the speaker prior: a favoured speaker's candidates may pass 1
        boosted: npt.NDArray[np.bool_] | None = None
        prior = 1.0 + self.settings.speaker_prior
        if text and self.settings.speaker_prior > 0:
            said = self.index.speaker_ids(text)
            if said is not None:
                boosted = np.isin(ids, said)
                fused = np.where(boosted, fused * prior, fused)
        id_list: list[int] = ids.tolist()
        code_prior: npt.NDArray[np.float64] | None = None
        if coded:  # the code prior, beside the speaker prior
            code_prior = np.array([coded.get(m, 1.0) for m in id_list], np.float64)
            fused = fused * code_prior
        batch, keep = self._candidates(id_list, fused, vector)
        if not keep:
            return []
        tprior: Any = 1.0 + self.settings.time_prior
        if self.temporal is not None:  # the router's date-aware ranking
            tprior = self.temporal(ids[keep], batch.created_ms)
            timed = tprior != 1.0
            batch = dataclasses.replace(batch, fused=batch.fused * tprior)
        else:
            timed = (
                dated_mask(text, batch.created_ms, slack_days=self.settings.time_prior_slack_days)
                if self.settings.time_prior > 0
                else None
            )
            if timed is not None:
                batch = dataclasses.replace(
                    batch, fused=np.where(timed, batch.fused * tprior, batch.fused)
                )
        scores = self.scorer.score_batch(batch, best_fused=best, now_ms=now_ms)
        kept_ids = ids[keep]
        provenance: npt.NDArray[np.float64] | None = None
        if weighed:  # the provenance factor: a multiplier before staleness
            provenance = np.array([weighed.get(int(m), 1.0) for m in kept_ids.tolist()], np.float64)
            scores = scores * provenance
        staleness: npt.NDArray[np.float64] | None = None
        if stale:  # the staleness factor: a multiplier after all the others
            staleness = np.array([stale.get(int(m), 1.0) for m in kept_ids.tolist()], np.float64)
            scores = scores * staleness
        order = np.lexsort((kept_ids, -scores))  # score desc, then id asc
        hits: list[Hit] = []
        top = order[:k].tolist()  # build full memories only for what is returned, in one call
        memories = self.memories.memories([id_list[keep[j]] for j in top])
        for j, memory in zip(top, memories):
            pos = keep[j]
            mid = id_list[pos]
            if memory is None:
                continue
            lane_ranks = {
                names[c]: int(ranks[pos, c]) for c in range(len(names)) if ranks[pos, c] > 0
            }
            factors: tuple[Factor, ...] = ()
            if explain:
                view = batch.view(j)
                factors = self.scorer.score(view, best_fused=best, now_ms=now_ms)[1]
                if (
                    boosted is not None and boosted[pos]
                ):  # what the speaker prior added, as its own line
                    plain = dataclasses.replace(view, fused=view.fused / prior)
                    gain = (
                        float(scores[j])
                        - self.scorer.score(plain, best_fused=best, now_ms=now_ms)[0]
                    )
                    factors += (Factor("speaker", "prior", prior, 1.0, gain),)
                if timed is not None and timed[j]:  # and what the time prior added
                    tp = float(tprior if np.ndim(tprior) == 0 else tprior[j])
                    plain = dataclasses.replace(view, fused=view.fused / tp)
                    gain = (
                        float(scores[j])
                        - self.scorer.score(plain, best_fused=best, now_ms=now_ms)[0]
                    )
                    factors += (Factor("time", "prior", tp, 1.0, gain),)
                if code_prior is not None and code_prior[pos] != 1.0:  # and the code prior
                    cp = float(code_prior[pos])
                    plain = dataclasses.replace(view, fused=view.fused / cp)
                    gain = float(scores[j]) - self.scorer.score(
                        plain, best_fused=best, now_ms=now_ms
                    )[0] * (float(provenance[j]) if provenance is not None else 1.0) * (
                        float(staleness[j]) if staleness is not None else 1.0
                    )
                    factors += (Factor("code", "prior", cp, 1.0, gain),)
                if provenance is not None and provenance[j] != 1.0:
                    pm = float(provenance[j])
                    before = float(scores[j]) / pm
                    if staleness is not None:
                        before /= float(staleness[j])
                    factors += (Factor("provenance", "multiplier", pm, 1.0, before * (pm - 1)),)
                if staleness is not None and staleness[j] != 1.0:
                    m = float(staleness[j])
                    factors += (
                        Factor("staleness", "multiplier", m, 1.0, float(scores[j]) * (1 - 1 / m)),
                    )
            hits.append(
                Hit(
                    id=mid,
                    text=memory.text,
                    score=float(scores[j]),
                    memory=memory,
                    lanes=lane_ranks,
                    fused=float(batch.fused[j]),
                    factors=factors,
                )
            )
        return hits

    def _candidates(
        self,
        id_list: list[int],
        fused: npt.NDArray[np.float64],
        vector: npt.NDArray[np.float32] | None,
    ) -> tuple[CandidateBatch, list[int]]:
        """The scoring state of the live candidates, and their positions in ``id_list``."""
        st = self.memories.scoring_states(id_list)
        created, confidence, strength, tier = st.created_ms, st.confidence, st.strength, st.tier
        if st.live.all():
            keep = list(range(len(id_list)))
            kinds, access = st.kind, st.access_ms
        else:
            keep = np.flatnonzero(st.live).tolist()
            id_list = [id_list[p] for p in keep]
            kinds, access = [st.kind[p] for p in keep], [st.access_ms[p] for p in keep]
            fused, created, confidence, strength, tier = (
                fused[keep],
                created[keep],
                confidence[keep],
                strength[keep],
                tier[keep],
            )
        suppressed = np.ones(len(id_list), np.float64)
        targets = self.graph.suppression_targets
        if targets:
            edges_of, is_live = self.graph.neighbours, self.memories.is_live
            for pos, mid in enumerate(id_list):
                if mid in targets:
                    suppressed[pos] = suppression(edges_of(mid), is_live)
        if vector is not None:
            cosine = self.index.cosine_array(vector, id_list)
        else:
            cosine = np.full(len(id_list), np.nan)
        access_offsets, access_ms = access_columns(access)
        staged_of = self.index.is_staged
        batch = CandidateBatch(
            fused=fused,
            cosine=cosine,
            access_offsets=access_offsets,
            access_ms=access_ms,
            created_ms=created,
            confidence=confidence,
            strength=strength,
            staged=np.array([staged_of(mid) for mid in id_list], np.bool_),
            tier=tier,
            kind=kinds,
            suppressed=suppressed,
        )
        return batch, keep
