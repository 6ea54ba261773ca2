"""Lifecycle policies: how memories age, merge, conflict and get curated.

Pure policies over plain values: each module decides *what* should change and
returns the ops (or the decisions) that say so; :mod:`chitta.field.lifecycle`
commits them through the log. None of them reads an organ directly.

- :mod:`.tiers`: demotion tiers from access recency and frequency;
- :mod:`.surprise`: surprise (reconstruction error) -> decay-rate multiplier;
- :mod:`.dedup`: canonical content hash, significant tokens, F_merge;
- :mod:`.contradictions`: the reconciler R0 (``detect_contradictions``);
- :mod:`.curation`: expire, exact dedupe, confidence decay (``CurationReport``);
- :mod:`.provenance`: the provenance axis (inference, ``can_write_kind``, the candidate
  band, ranking weights); :mod:`.reconcile`: ``reconcile_all`` (R0 over the field's
  edges, through ``ctx.core``) and the R1 proposer hook.
"""

from __future__ import annotations

from chitta.policies.contradictions import ContradictionPair, detect_contradictions
from chitta.policies.curation import CurationReport
from chitta.policies.dedup import DedupReport, canonical_hash, f_merge, significant_tokens
from chitta.policies.surprise import decay_multiplier
from chitta.policies.tiers import target_tier

__all__ = [
    "ContradictionPair",
    "CurationReport",
    "DedupReport",
    "canonical_hash",
    "decay_multiplier",
    "detect_contradictions",
    "f_merge",
    "significant_tokens",
    "target_tier",
]
