"""Recall settings that suit a field's embedder.

``RecallSettings()``'s lane weights were chosen with the default MiniLM
embedder (LoCoMo dev, tune half: bm25 1.0, dense 0.5). A much stronger
embedder earns a larger share of the fusion: an embedder may say so with a
``recall_dense_weight`` attribute (``NomicEmbedder``: 1.0, ``MpnetEmbedder``: 0.75, chosen on the same
tune half and confirmed on the held-out half, see docs/DECISIONS.md
D-024), and the BM25 share of convex score fusion with a
``recall_fusion_alpha`` attribute (``OnnxMiniLM``: 0.55, ``NomicEmbedder``:
0.3; D-025; chitta.recall.convex), and the weight of the vocabulary expansion lane with a
``recall_expansion_weight`` attribute (``OnnxMiniLM``: 0.2; the setting itself
is off by default; D-027, D-028; chitta.recall.expand), and whether the dense lane embeds the
query without the speaker it names with a ``recall_dense_query_without_speaker`` bool.
:func:`settings_for` applies them; a field opened without
``recall_settings`` uses it. Explicit ``recall_settings`` always win.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from chitta.recall.engine import RecallSettings


def settings_for(embedder: Any, base: RecallSettings | None = None) -> RecallSettings:
    """``base`` (default ``RecallSettings()``) with the dense lane weight
    (``recall_dense_weight``: finite, non-negative) and the convex fusion alpha
    (``recall_fusion_alpha``: in [0, 1]) and the expansion weight (``recall_expansion_weight``:
    finite, non-negative) and the name-free dense query (``recall_dense_query_without_speaker``: a
    bool) the embedder asks for; a preference it
    does not name, or names out of range, leaves ``base``'s value."""
    base = base or RecallSettings()
    weight = getattr(embedder, "recall_dense_weight", None) if embedder is not None else None
    if not (
        isinstance(weight, bool)
        or not isinstance(weight, (int, float))
        or not math.isfinite(weight)
        or weight < 0
    ):
        base = dataclasses.replace(base, lane_weights={**base.lane_weights, "dense": float(weight)})
    alpha = getattr(embedder, "recall_fusion_alpha", None) if embedder is not None else None
    if (
        not isinstance(alpha, bool)
        and isinstance(alpha, (int, float))
        and math.isfinite(alpha)
        and 0 <= alpha <= 1
    ):
        base = dataclasses.replace(base, fusion_alpha=float(alpha))
    weight = getattr(embedder, "recall_expansion_weight", None) if embedder is not None else None
    if (
        not isinstance(weight, bool)
        and isinstance(weight, (int, float))
        and math.isfinite(weight)
        and weight >= 0
    ):
        base = dataclasses.replace(base, expansion_weight=float(weight))
    nameless = (
        getattr(embedder, "recall_dense_query_without_speaker", None)
        if embedder is not None
        else None
    )
    if isinstance(nameless, bool):
        base = dataclasses.replace(base, dense_query_without_speaker=nameless)
    return base
