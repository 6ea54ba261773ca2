"""The read path, two stages: the catalog (every domain and topic with its
descriptor, bounded in bytes: the reader picks paths from it) and recall
inside the chosen paths.

Recall ranks the live facts filed under any chosen path by keyword relevance
to the query (descending), then scope tier (repository, project, global),
then fact ULID. It renders blocks in that order and **skips** a block that does
not fit the budget, going on with the next; a block is never cut. **Dispute
pairing**: the two sides of an open dispute form one unit placed at the first
side's rank (the other side joins even when filed elsewhere): both appear,
adjacent, or neither does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.curated import facts as F
from chitta.curated.classifier import audited
from chitta.curated.paths import TopicPath, parse_topic
from chitta.curated.vocabulary import render_catalog
from chitta.errors import InvalidArgument

if TYPE_CHECKING:
    from chitta.organs.curated import CuratedOrgan

__all__ = ["Recalled", "catalog", "choose_paths", "rank", "recall", "render"]

MAX_RECALL_BYTES = 256 * 1024


@dataclasses.dataclass(frozen=True)
class Recalled:
    ids: tuple[str, ...]  # in output order
    text: bytes  # the rendered blocks, concatenated
    skipped: tuple[str, ...]  # facts (or dispute units) that did not fit
    paths: tuple[TopicPath, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "text": self.text.decode(),
            "bytes": len(self.text),
            "skipped": list(self.skipped),
            "paths": [p.render() for p in self.paths],
        }


def catalog(organ: CuratedOrgan) -> bytes:
    return render_catalog(organ.domains, organ.topics, organ.counts())


def chosen(organ: CuratedOrgan, paths: object) -> tuple[TopicPath, ...]:
    if isinstance(paths, str) or not isinstance(paths, (list, tuple)) or not paths:
        raise InvalidArgument(
            "paths must be a non-empty list of 'domain/topic' (see memory_catalog)"
        )
    out: list[TopicPath] = []
    for text in paths:
        path = parse_topic(text)
        if path not in organ.topics:
            raise InvalidArgument(
                f"unknown topic path {path.render()!r}; pick one from memory_catalog"
            )
        if path not in out:
            out.append(path)
    return tuple(out)


def choose_paths(organ: CuratedOrgan, ctx: Any, query: str, subject: str) -> tuple[TopicPath, ...]:
    """Paths for a request that named none: the classifier's ``select`` (audited) when
    it has one, else nomination passing both floors, capped at ``filing_cap``."""
    from chitta.curated.write_path import nominate

    legal = organ.topics
    select = getattr(organ.classifier, "select", None)
    if select is not None:
        cat = catalog(organ)
        got = audited(ctx, organ.classifier, "select", subject, lambda: select(query, cat))
        if got is not None:
            picked = [p for p in dict.fromkeys(got[0]) if p in legal]
            if picked:
                return tuple(picked[: organ.limits.filing_cap])
    nominated = nominate(organ, query)
    best = max((s for _, s in nominated), default=0.0)
    floor = max(organ.limits.floor_score, organ.limits.floor_ratio * best)
    return tuple(p for p, s in nominated if s >= floor)[: organ.limits.filing_cap]


def _base(organ: CuratedOrgan, paths: Sequence[TopicPath]) -> tuple[list[F.Fact], Any, Any, Any]:
    """The live facts under ``paths`` by (scope tier, ULID), their rows, and the rows
    sorted with the permutation back (cached until the organ's facts change)."""
    key = tuple(paths)
    hit = organ.rank_cache.get(key)
    if hit is not None and hit[0] == organ.version:
        return hit[1]  # type: ignore[no-any-return]
    ids: dict[str, None] = {}
    for path in paths:
        ids.update(organ.by_path.get(path, {}))
    found = sorted((organ.facts[i] for i in ids), key=lambda f: (F.scope_tier(f.scope), f.id))
    rows = np.array([f.row for f in found], dtype=np.uint64)
    perm = np.argsort(rows, kind="stable")
    value = (found, rows, rows[perm], perm)
    if len(organ.rank_cache) >= 256:
        organ.rank_cache.clear()
    organ.rank_cache[key] = (organ.version, value)
    return value


def rank(organ: CuratedOrgan, paths: Sequence[TopicPath], query: str) -> list[F.Fact]:
    """The live facts under ``paths``: relevance desc, scope tier, ULID."""
    found, rows, sorted_rows, perm = _base(organ, paths)
    if not found or not query.strip():
        return list(found)
    hit_rows, hit_scores = organ.fact_hits(query, rows)
    if not len(hit_rows):
        return list(found)
    scores = np.zeros(len(found), dtype=np.float32)
    scores[perm[np.searchsorted(sorted_rows, hit_rows)]] = hit_scores
    return [found[i] for i in np.argsort(-scores, kind="stable")]


def _block(organ: CuratedOrgan, fact: F.Fact) -> bytes:
    partner = organ.disputes.get(fact.id)
    if partner is None and fact.rendered is not None:
        return fact.rendered
    return F.block(fact.id, fact.kind, fact.scope, fact.primary, fact.body, fact.fields, partner)


def render(
    organ: CuratedOrgan, ranked: Sequence[F.Fact], budget: int
) -> tuple[list[str], bytes, list[str]]:
    """Blocks in rank order within ``budget`` bytes: skip what does not fit, never cut;
    a disputed fact and its other side as one unit."""
    out: list[str] = []
    parts: list[bytes] = []
    skipped: list[str] = []
    seen: set[str] = set()
    used = 0
    for at, fact in enumerate(ranked):
        if budget - used < organ.min_block:  # nothing left can fit: the rest is skipped
            skipped.extend(f.id for f in ranked[at:] if f.id not in seen)
            break
        if fact.id in seen:
            continue
        unit = [fact]
        partner = organ.live(organ.disputes.get(fact.id, ""))
        if partner is not None:
            unit.append(partner)
        seen.update(f.id for f in unit)
        blocks = [_block(organ, f) for f in unit]
        size = sum(map(len, blocks))
        if used + size > budget:
            skipped.extend(f.id for f in unit)
            continue
        used += size
        out.extend(f.id for f in unit)
        parts.extend(blocks)
    return out, b"".join(parts), skipped


def budget_of(organ: CuratedOrgan, budget: object) -> int:
    if budget is None:
        return organ.limits.recall_bytes
    if (
        isinstance(budget, bool)
        or not isinstance(budget, int)
        or not 1 <= budget <= MAX_RECALL_BYTES
    ):
        raise InvalidArgument(f"budget must be 1-{MAX_RECALL_BYTES} bytes, got {budget!r:.40}")
    return budget


def recall(organ: CuratedOrgan, paths: Sequence[TopicPath], query: str, budget: int) -> Recalled:
    ids, text, skipped = render(organ, rank(organ, paths, query), budget)
    return Recalled(tuple(ids), text, tuple(skipped), tuple(paths))
