"""The closed vocabulary's rules: caps, budgets, admission floors, descriptors and
the catalog (every domain and topic with its descriptor, bounded in bytes).

Only a person (or a program acting for one) declares and amends the vocabulary;
the model-facing door (MCP) is not offered those operations. Caps bind every
filing: declare refuses a domain or topic past its cap or one that would make
the catalog exceed its budget, so the catalog is always rendered whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from chitta.curated.paths import TopicPath
from chitta.errors import InvalidArgument

__all__ = ["DEFAULT_LIMITS", "Limits", "check_descriptor", "render_catalog"]

MAX_DESCRIPTOR_CHARS = 400


@dataclasses.dataclass(frozen=True)
class Limits:
    """Caps, budgets and the admission rules (every value an int or float >= its floor)."""

    max_domains: int = 32
    max_topics_per_domain: int = 32
    max_facts_per_topic: int = 500
    fact_bytes: int = 2048  # the largest rendered fact block: refused at write time beyond
    catalog_bytes: int = 32768  # the catalog's budget
    recall_bytes: int = 8192  # the default recall budget (never below fact_bytes)
    floor_score: float = 0.5  # admission floor 1: a nominated path's least relevance
    floor_ratio: float = 0.5  # admission floor 2: a share of the best nominated relevance
    filing_cap: int = 3  # the most paths one fact is filed under

    def to_fields(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> Limits:
        """Limits from a map (unknown keys and bad values refused)."""
        base = dataclasses.asdict(DEFAULT_LIMITS)
        for key, value in fields.items():
            if key not in base:
                raise InvalidArgument(f"unknown limit {key!r:.40}; limits are {sorted(base)}")
            want = type(base[key])
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidArgument(f"limit {key} must be a number, not {value!r:.40}")
            if want is int and (not float(value).is_integer() or value < 1):
                raise InvalidArgument(f"limit {key} must be a whole number >= 1, got {value!r}")
            if want is float and not 0.0 <= float(value) <= 1e9:
                raise InvalidArgument(f"limit {key} must be >= 0, got {value!r}")
            base[key] = want(value)
        out = cls(**base)
        if out.recall_bytes < out.fact_bytes:
            raise InvalidArgument(
                f"recall_bytes ({out.recall_bytes}) must be >= fact_bytes ({out.fact_bytes}): "
                "a fact that fits the cap must fit the default recall budget"
            )
        if out.floor_ratio > 1.0:
            raise InvalidArgument(f"floor_ratio must be in [0, 1], got {out.floor_ratio}")
        return out


DEFAULT_LIMITS = Limits()


def check_descriptor(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument("a descriptor is non-empty text: what belongs under this path")
    text = " ".join(value.split())
    if len(text) > MAX_DESCRIPTOR_CHARS:
        raise InvalidArgument(
            f"a descriptor has at most {MAX_DESCRIPTOR_CHARS} characters, got {len(text)}; shorten it"
        )
    return text


def render_catalog(
    domains: Mapping[str, str],
    topics: Mapping[TopicPath, str],
    counts: Mapping[TopicPath, int] | None = None,
    width: int = 5,
) -> bytes:
    """The catalog: each domain (sorted) with its descriptor, then its topics with
    their fact counts and descriptors. ``counts=None`` renders every count ``width``
    digits wide (the bound declare checks against the budget)."""
    lines = ["# Memory catalog", ""]
    for domain in sorted(domains):
        lines.append(f"## {domain}: {domains[domain]}")
        for path in sorted(p for p in topics if p.domain == domain):
            n = "#" * width if counts is None else str(counts.get(path, 0))
            lines.append(f"- {path.render()} ({n} facts): {topics[path]}")
        lines.append("")
    return ("\n".join(lines) + "\n").encode()
