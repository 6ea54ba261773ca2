"""The recall tail in native code: fusion -> candidates' state -> scores -> top k.

:func:`rank_native` does what :meth:`RecallEngine._rank_python
<chitta.recall.engine.RecallEngine>` does (that path stays the reference and
the ``explain=True`` path), with the per-candidate work in two native calls
(``csrc/recall/candidates.h``):

1. ``_core._recall_gather``: weighted RRF over the lanes' lists (the same
   ``fusion::RrfFuse`` as :func:`chitta.organs.index.fusion.rrf_fuse`), then each
   fused candidate's row in the memories organ's and the recall index's
   columns (their native id -> row maps): live or not, creation time,
   confidence, strength, tier, kind weight, staged flag, matrix row.
2. ``cands.rank``: the scores (``scoring::ScoreCandidates``, bit-for-bit
   :meth:`Scorer.score <chitta.recall.scorer.Scorer.score>`) and the best
   ``k`` by (score desc, id asc), numpy's ``lexsort`` order.

The gather also computes the candidates' cosines with numpy's own float32
dot (``cblas_sdot``, found by :mod:`chitta.recall.native_dot`), so they are
the reference's bit for bit; without it they are computed here with numpy.
Between the two calls, Python adds only what is rare: the speaker and time
priors (when the query names a speaker or a date), suppression (when the
graph has Supersedes/Contradicts edges) and access traces (when any memory
was recalled with ``touch``). ``Memory`` objects are built for the ``k``
returned only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.recall.convex import convex_from_ranks
from chitta.recall.factors import suppression
from chitta.recall.hit import Hit
from chitta.recall.lane_floor import dense_floor
from chitta.recall.native_convex import convex_native
from chitta.recall.native_dot import sdot_address
from chitta.recall.timeq import dated_mask

if TYPE_CHECKING:
    from chitta.recall.engine import RecallEngine

U64 = npt.NDArray[np.uint64]
_HIT_SLOTS = tuple(
    Hit.__dict__[f.name] for f in dataclasses.fields(Hit)
)  # member descriptors, field order


def supports_native(engine: RecallEngine) -> bool:
    """Whether the engine's organs expose the columns the native tail reads."""
    return hasattr(engine.memories, "recall_columns") and hasattr(engine.index, "recall_columns")


_dot_state: list[
    bool
] = []  # [whether numpy's sdot was found and handed to _core], once per process


def _dot_ready() -> bool:
    if not _dot_state:
        address = sdot_address()
        if address is not None:
            _core._recall_set_dot(address)
        _dot_state.append(address is not None)
    return _dot_state[0]


def _in_place(vecs: Any, vector: npt.NDArray[Any]) -> bool:
    """Whether the gather can read the unit rows and the query as they are (float32, C order)."""
    return (
        isinstance(vecs, np.ndarray)
        and vecs.dtype == np.float32
        and vecs.ndim == 2
        and vecs.flags.c_contiguous
        and vector.dtype == np.float32
        and vector.ndim == 1
        and vector.flags.c_contiguous
    )


def _cosines(
    vector: npt.NDArray[np.float32], vrow: npt.NDArray[np.int64], vecs: Any, dim: int | None
) -> Any:
    """As ``DenseLane.cosine_array``: one dot per row (bit-for-bit its values), NaN without a vector."""
    out = np.full(len(vrow), np.nan, np.float64)
    have = np.flatnonzero(vrow >= 0)
    if len(have) and dim is not None and vector.shape[0] == dim:
        picked = vecs[vrow[have]]
        out[have] = (picked[:, None, :] @ vector[:, None])[:, 0, 0]
    return out


def rank_native(
    engine: RecallEngine,
    lanes: Mapping[str, U64],
    names: Sequence[str],
    *,
    text: str | None,
    vector: npt.NDArray[np.float32] | None,
    k: int,
    pool: int,
    now_ms: int,
    convex: tuple[Any, ...] | None = None,
) -> list[Hit]:
    settings = engine.settings
    mem_cols, kind_values = engine.memories.recall_columns()  # type: ignore[attr-defined]
    idx_cols, vecs, dim = engine.index.recall_columns()  # type: ignore[attr-defined]
    scorer = engine.scorer
    kinds = scorer.settings.kind_weights
    kind_weight = np.array([kinds.get(v, 1.0) for v in kind_values], np.float64)
    weights = [engine.lane_weight(n) for n in names]
    # The cosines in the gather (numpy's own sdot, called natively) where it can read the rows in place.
    native_cos = (
        vector is not None and _in_place(vecs, vector) and dim == vector.shape[0] and _dot_ready()
    )
    cands = _core._recall_gather(
        [lanes[n] for n in names],
        weights,
        float(settings.rrf_k),
        pool,
        (*mem_cols, kind_weight),
        idx_cols,
        vector if native_cos else None,
        vecs if native_cos else None,
    )
    n = cands.size
    if n == 0:
        return []
    best = cands.best  # before the speaker prior, as the reference
    kept_ids = cands.kept_ids
    fused = None
    cosine = None if vector is None or native_cos else _cosines(vector, cands.vector_row, vecs, dim)
    if convex is not None:  # convex score fusion in place of RRF's scores (chitta.recall.convex)
        fused = convex_native(
            cands, names, None if native_cos else cosine, convex
        )  # csrc/scoring/convex.h
        if fused is None:  # inputs it does not take: the Python reference
            fused = convex_from_ranks(
                cands.ranks, names, cands.cosine if native_cos else cosine, convex, cands.keep
            )
        best = float(fused.max())
    if settings.dense_floor:  # a paraphrase keyword matches cannot bury (never above the best)
        rows = cands.ranks if cands.keep is None else cands.ranks[cands.keep]
        floored = dense_floor(cands.kept_fused if fused is None else fused, rows, names)
        fused = fused if floored is None else floored
    if text and settings.speaker_prior > 0:
        said = engine.index.speaker_ids(text)
        if said is not None:
            plain = cands.kept_fused if fused is None else fused
            fused = np.where(np.isin(kept_ids, said), plain * (1.0 + settings.speaker_prior), plain)
    if engine.temporal is not None:  # the router's date-aware ranking (chitta/recall/temporal.py)
        plain = cands.kept_fused if fused is None else fused
        fused = plain * engine.temporal(kept_ids, cands.created_ms)
    elif settings.time_prior > 0 and text:
        timed = dated_mask(text, cands.created_ms, slack_days=settings.time_prior_slack_days)
        if timed is not None:
            plain = cands.kept_fused if fused is None else fused
            fused = np.where(timed, plain * (1.0 + settings.time_prior), plain)
    suppressed = None
    targets = engine.graph.suppression_targets
    if targets:
        id_list = kept_ids.tolist()
        hit = [p for p, mid in enumerate(id_list) if mid in targets]
        if hit:
            suppressed = np.ones(n, np.float64)
            edges_of, is_live = engine.graph.neighbours, engine.memories.is_live
            for p in hit:
                suppressed[p] = suppression(edges_of(id_list[p]), is_live)
    traces = engine.memories.touch_traces(kept_ids)  # type: ignore[attr-defined]
    t_off, t_ms = (None, None) if traces is None else traces
    s = scorer.settings
    top_ids, top_scores, top_fused, top_ranks, _ = cands.rank(
        fused,
        cosine,
        suppressed,
        t_off,
        t_ms,
        best,
        int(now_ms),
        (
            s.w_fused,
            s.w_similarity,
            s.w_activation,
            s.w_freshness,
            s.freshness_rate,
            s.actr_decay,
            s.staged_multiplier,
            s.tier_step,
        ),
        k,
    )
    memories = engine.memories.memories(top_ids)
    # The relevance (the query's cosine with the memory's unit vector) where the gather
    # computed it: numpy's sdot on the same rows, the value Field.recall's relevance() gives.
    gathered = cands.cosine if native_cos else None
    relevances: list[float | None] = [None] * len(top_ids)
    if gathered is not None:
        at = dict(zip(kept_ids.tolist(), gathered.tolist()))
        relevances = [None if math.isnan(c := at[mid]) else c for mid in top_ids]
    # Hit(id=, text=, score=, memory=, lanes=, fused=, factors=(), relevance=,
    # recall_id=None, graph_path=None)
    # without the frozen __init__
    new_hit, slots, no_factors = _core._new_slotted, _HIT_SLOTS, ()
    return [
        new_hit(
            Hit,
            slots,
            (
                mid,
                memory.text,
                score,
                memory,
                {name: r for name, r in zip(names, rk) if r > 0},
                f,
                no_factors,
                rel,
                None,
                None,
            ),
        )
        for mid, memory, score, f, rk, rel in zip(
            top_ids, memories, top_scores, top_fused, top_ranks, relevances
        )
        if memory is not None
    ]
