"""Field reads that rank: recall, write-gate statistics, rendering.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. The pipeline itself lives in
:mod:`chitta.recall.engine`; this module turns the public arguments into
filters (applied inside the lanes, so ``k`` results come back when ``k``
exist), embeds and codes the query, and logs the touches of what it returns
(first recall promotes a staged memory; every recall feeds ACT-R activation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.field import learned_rerank
from chitta.field import provenance as prov
from chitta.field import puts as putops
from chitta.field.core import FieldCore
from chitta.field.field_lock import EXCLUSIVE
from chitta.field.learning import learned_engine
from chitta.ops import checks as v
from chitta.organs.dense_ann import DENSE_INDEX_KINDS
from chitta.organs.shared_reads import SharedReadNeedsWrite
from chitta.policies import curation
from chitta.recall import seed_rerank
from chitta.recall.blas import one_thread
from chitta.recall.engine import LANES
from chitta.recall.hit import Hit, refine
from chitta.recall.list_query import for_list_question
from chitta.recall.query import without_speaker
from chitta.recall.render import render
from chitta.recall.settle import co_recall_pairs

MAX_K = 1000
CO_RETRIEVED_TOP = 3  # the top hits of a recall are linked by CoRetrieved edges
# ... and only they are reinforced (access time, write-gate promotion, tier): a recall's lower
# hits are mostly ones the caller does not use, and touching all k pulled later recalls toward
# earlier answers (LoCoMo dev R@10 -0.014 at k=10; docs/DECISIONS.md D-061).
TOUCH_TOP = CO_RETRIEVED_TOP
MS_PER_DAY = 86_400_000


def _time_ms(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    return v.epoch_ms(value, what)


def _query_vector(vector: Any, dim: int | None) -> Any:
    """The query vector as float32 (a fresh array only where a conversion needs one); the checks
    and errors of ``_validate.embedding``, whose answer it is for a float32 numpy vector too."""
    if (
        type(vector) is np.ndarray
        and vector.dtype == np.float32
        and vector.ndim == 1
        and vector.shape[0] == dim
        and vector.flags.c_contiguous
    ):
        if not np.isfinite(vector).all():
            raise InvalidArgument("embedding contains NaN or infinity")
        return vector
    blob = v.embedding(vector, dim)
    assert blob is not None
    return np.frombuffer(blob, "<f4").astype(np.float32)


def recall(
    core: FieldCore,
    query: str | None = None,
    *,
    vector: Any = None,
    k: int = 10,
    kinds: Iterable[str] | None = None,
    realm: str | None = None,
    session: str | None = None,
    harness: str | None = None,
    since: datetime | float | None = None,
    until: datetime | float | None = None,
    include_staged: bool = True,
    budget_bytes: int | None = None,
    explain: bool = False,
    lanes: Sequence[str] | None = None,
    touch: bool = True,
    tags: Iterable[str] | None = None,
    min_score: float | None = None,
    mood: float | None = None,
    provenance: str | Iterable[str] | None = None,
    temporal: Any = None,
) -> list[Hit]:
    """``Field.recall`` (its docstring is the reference). ``temporal``: the router's per-candidate
    time prior (chitta/recall/temporal.py) in place of the query-date prior."""
    core.check_open()
    if mood is not None:
        mood = v.valence(mood, "mood")
    prov_set = prov.provenances(provenance)
    tag_set = None
    if tags is not None:
        if isinstance(tags, str):
            tags = [tags]
        tag_set = frozenset(v.tags(tags))
        if not tag_set:
            raise InvalidArgument("tags must name at least one tag (or be None for no filter)")
    if min_score is not None and (
        isinstance(min_score, bool)
        or not isinstance(min_score, (int, float))
        or not -1.0 <= min_score <= 1.0
    ):
        raise InvalidArgument(
            f"min_score must be a relevance between -1 and 1 (a cosine), not {min_score!r}"
        )
    query = v.query(query)  # at most MAX_QUERY_BYTES
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidArgument(f"k must be an int between 1 and {MAX_K}")
    kind_set = None
    if kinds is not None:
        if isinstance(kinds, str):
            kinds = [kinds]
        kind_set = frozenset(v.choice(x, ops.MEMORY_KINDS, "kinds") for x in kinds)
    realm = v.name(realm, "realm")
    session = v.name(session, "session")
    harness = v.name(harness, "harness")
    since_ms, until_ms = _time_ms(since, "since"), _time_ms(until, "until")
    if budget_bytes is not None and (
        isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes < 0
    ):
        raise InvalidArgument("budget_bytes must be an int >= 0")
    lane_set = None
    if lanes is not None:
        lane_set = tuple(lanes)
        bad = set(lane_set) - set(LANES)
        if bad or not lane_set:
            raise InvalidArgument(f"lanes must be a non-empty subset of {LANES}")
    qvec = None
    if vector is not None:
        qvec = _query_vector(vector, putops.vector_dim(core))
    elif query is not None and core.encoding.enabled and core.index.vector_count:
        who = (
            core.index.named_speaker(query)
            if core.engine.settings.dense_query_without_speaker
            else None
        )
        qvec = core.encoding.embed_query([query if who is None else without_speaker(query, who)])[0]
    if query is None and qvec is None:
        raise InvalidArgument("recall needs a query text or a vector")
    if qvec is not None:
        norm = float(
            np.sqrt(qvec.dot(qvec))
        )  # np.linalg.norm's arithmetic (float32), without its wrapper
        qvec = qvec / norm if norm > 0 else None
    with one_thread():  # BLAS on one thread: see chitta/recall/blas.py
        return _recall(
            core,
            query,
            qvec,
            k,
            lane_set,
            budget_bytes,
            explain,
            touch,
            tag_set,
            min_score,
            mood,
            prov_set,
            temporal,
            {
                "kinds": kind_set,
                "realm": realm,
                "session": session,
                "harness": harness,
                "since_ms": since_ms,
                "until_ms": until_ms,
                "include_staged": include_staged,
            },
        )


def _recall(
    core: FieldCore,
    query: str | None,
    qvec: Any,
    k: int,
    lane_set: tuple[str, ...] | None,
    budget_bytes: int | None,
    explain: bool,
    touch: bool,
    tag_set: frozenset[str] | None,
    min_score: float | None,
    mood: float | None,
    prov_set: frozenset[str] | None,
    temporal: Any,
    filters: dict[str, Any],
) -> list[Hit]:
    engine = core.engine if lane_set is None else core.engine.with_lanes(lane_set)
    seed004 = engine.settings.reranker == seed_rerank.NAME
    if seed004:  # seed 004's reranker: its keyword candidates (chitta/recall/seed_rerank.py)
        engine = engine.with_lanes(("bm25",))
    engine = learned_engine(core, engine)  # the learned scorer's weights, when there are any
    engine = for_list_question(engine, query)
    if temporal is not None:
        engine = engine.with_temporal(temporal)
    code = None
    encoder = core.encoder_organ.encoder
    # The query's sparse code (a 384 x 16,384 product) only when the posting lane counts.
    wants_posting = engine.settings.lane_weights.get("posting", 0.0) > 0
    if wants_posting and qvec is not None and encoder is not None and encoder.dim == qvec.shape[0]:
        code = encoder.encode(qvec[None, :]).features[0]

    # Run beside other reads (the field's lock shared) unless a lane would change state
    # first or the learned scorer reranks (chitta/field/field_lock.py).
    posting = code is not None and engine.settings.lane_weights.get("posting", 0.0) > 0
    dense = qvec is not None and engine.settings.lane_weights.get("dense", 0.0) > 0
    # (the neighbour lane reads the graph organ's edges, which only writers change; the
    # PPR graph lane builds its native graph lazily: that one runs alone)
    plain = not seed004 and engine.settings.lane_weights.get("graph", 0.0) <= 0
    got: dict[str, Any] = {}

    def prepare(may_work: bool) -> str:
        got["allowed"] = _allowed(core, filters, tag_set, prov_set)
        # learned factors (or the caller's mood): 1.5x candidates of the same lanes, reranked
        got["learning"] = learning = mood is not None or learned_rerank.active(core)
        got["now"] = core.now_ms()
        if learning or not plain:
            return EXCLUSIVE
        return core.index.shared_read_verdict(may_work, posting, dense)

    def ranked() -> list[Hit]:
        allowed, learning, now = got["allowed"], got["learning"], got["now"]
        want = min(MAX_K, learned_rerank.pool(k)) if learning else k
        depth = k if learning and want > k else None  # the reranked pool: the lanes of a plain k
        if seed004:
            want = min(MAX_K, seed_rerank.POOL_FACTOR * k)
        for _ in range(3):  # memories past their expires_at never come back, curated or not
            hits = engine.recall(
                text=query,
                vector=qvec,
                code=code,
                k=want,
                allowed=allowed,
                now_ms=now,
                explain=explain,
                depth_k=None if seed004 else depth,
            )
            live = [h for h in hits if not _expired(h, now)]
            if len(live) == len(hits) or len(hits) < want or want == MAX_K:
                break
            want = min(MAX_K, 2 * want)  # some expired: look deeper for k live ones
            depth = None
        hits = live
        if seed004:
            hits = seed_rerank.rerank(hits, want, explain)
        if learning or learned_rerank.any_valence(hits[:k]):
            hits = learned_rerank.rerank(core, hits if learning else hits[:k], k, explain, mood)
        hits = hits[:k]
        relevance(core, hits, qvec)
        return hits

    found: list[Hit] | None = None
    with core.lock.reading(prepare):
        try:
            found = ranked()
        except SharedReadNeedsWrite:  # a lane had work after all: run alone instead
            found = None
    if found is None:
        with core.lock:
            prepare(True)
            found = ranked()
    hits = found
    if min_score is not None:  # hits without a relevance (no vector yet) are kept
        hits = [h for h in hits if h.relevance is None or h.relevance >= min_score]
    if budget_bytes is not None:
        hits = list(render(hits, budget_bytes).included)
    if hits:  # one id for this recall, carried by its hits (feedback(recall_id=...))
        rid = core.recalls.record(query, tuple(h.id for h in hits))
        hits = [refine(h, recall_id=rid) for h in hits]
    if touch and hits and not core.read_only:
        _touch(core, hits)
    return hits


def _allowed(
    core: FieldCore,
    filters: dict[str, Any],
    tag_set: frozenset[str] | None,
    prov_set: frozenset[str] | None,
) -> Any:
    """The ids every filter lets through, sorted (None: no filter)."""
    allowed = core.index.allowed(**filters)
    if tag_set is not None:  # inside the lanes, like every other filter
        tagged = core.memories.ids_with_tags(tag_set)
        allowed = tagged if allowed is None else np.intersect1d(allowed, tagged)
    if prov_set is not None:  # inside the lanes too
        written = prov.allowed_ids(core, prov_set)
        allowed = written if allowed is None else np.intersect1d(allowed, written)
    return allowed


def _expired(hit: Hit, now_ms: int) -> bool:
    meta = hit.memory.meta
    if not meta or curation.EXPIRES_KEY not in meta:
        return False
    at, _ = curation.expiry_ms(hit.memory)
    return at is not None and at <= now_ms


def relevance(core: FieldCore, hits: list[Hit], qvec: Any) -> None:
    """Each hit's absolute relevance: the cosine of the query's vector with the memory's
    (the dense lane's raw evidence, comparable across queries and fields of one model;
    ``score`` is relative to the other hits). None without both vectors."""
    if not hits or qvec is None:
        return
    todo = [h for h in hits if h.relevance is None]  # the native tail sets it where it can
    if not todo:
        return
    cos = core.index.cosine_array(qvec, [h.id for h in todo])
    for h, c in zip(todo, cos.tolist()):
        if not math.isnan(c):  # the memory has a vector
            refine(h, relevance=float(c))


def _touch(core: FieldCore, hits: list[Hit]) -> None:
    """Reinforce the top ``TOUCH_TOP`` hits of a recall (ACT-R counts the retrieved chunk)."""
    hits = hits[:TOUCH_TOP]
    now = core.now_ms()
    group: list[ops.Op] = [ops.UpdateState(id=h.id, at_ms=now, touch=True) for h in hits]
    # Access promotes a demoted memory one tier back toward 0 (chitta.policies.tiers).
    group.extend(
        ops.DemoteMemory(id=h.id, tier=h.memory.tier - 1, at_ms=now)
        for h in hits
        if h.memory.tier > 0
    )
    # Directed coupling (chitta.recall.settle): higher-ranked -> lower at full weight, back at 0.3x.
    group.extend(
        ops.AddAssocEdge(src=a, dst=b, edge="CoRetrieved", weight=w, at_ms=now)
        for a, b, w in co_recall_pairs([h.id for h in hits[:CO_RETRIEVED_TOP]])
    )
    core.commit_group(group)


def render_hits(core: FieldCore, hits: Sequence[Hit], budget_bytes: int | None = None) -> str:
    """``Field.render`` (its docstring is the reference)."""
    return render(hits, budget_bytes).text


def set_dense_index(core: FieldCore, kind: str) -> None:
    """``Field.set_dense_index`` (its docstring is the reference)."""
    core.check_writable()
    v.choice(kind, frozenset(DENSE_INDEX_KINDS), "kind")
    core.commit(ops.ConfigureField(key="dense_index", value=kind, at_ms=core.now_ms()))


def write_gate_stats(core: FieldCore) -> dict[str, Any]:
    """``Field.write_gate_stats`` (its docstring is the reference)."""
    core.check_open()
    staged = core.index.staged_ids()
    now = core.now_ms()
    written = (core.memories.get(mid) for mid in staged)
    oldest = min((m.written_ms for m in written if m is not None), default=None)
    return {
        "staged_count": len(staged),
        "oldest_staged_age_days": None if oldest is None else max(0.0, (now - oldest) / MS_PER_DAY),
    }
