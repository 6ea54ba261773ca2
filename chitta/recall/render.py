"""Fit recalled memories into a context budget: whole memories in rank order,
skipping one that does not fit and trying the next; never truncating one."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from chitta.recall.hit import Hit


@dataclasses.dataclass(frozen=True)
class Rendered:
    text: str
    included: tuple[Hit, ...]
    skipped: tuple[Hit, ...]


def render_line(hit: Hit) -> str:
    return f"- [{hit.memory.kind}] {hit.text}\n"


def render(hits: Sequence[Hit], budget_bytes: int | None = None) -> Rendered:
    """Lines of ``- [kind] text`` for the hits that fit in ``budget_bytes`` of
    UTF-8 (all of them when None)."""
    used = 0
    lines: list[str] = []
    included: list[Hit] = []
    skipped: list[Hit] = []
    for hit in hits:
        line = render_line(hit)
        size = len(line.encode("utf-8"))
        if budget_bytes is not None and used + size > budget_bytes:
            skipped.append(hit)
            continue
        used += size
        lines.append(line)
        included.append(hit)
    return Rendered("".join(lines), tuple(included), tuple(skipped))
