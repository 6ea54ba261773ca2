"""Field.link: a typed association edge between two live memories.

A mixin of :class:`chitta.field.Field`. One ``AddAssocEdge`` op, validated
first (both ids live, the edge kind known, the weight finite), so a bad call
changes nothing.
"""

from __future__ import annotations

import math

from chitta.ops import checks as v
from chitta import ops
from chitta.errors import InvalidArgument
from chitta.field.state import FieldState

MAX_EDGE_WEIGHT = 1e6


class LinkMixin(FieldState):
    def link(self, src: int, dst: int, edge: str = "RelatedTo", weight: float = 1.0) -> None:
        """Add a typed edge ``src -> dst`` (``edge`` one of ``chitta.ops.EDGE_KINDS``:
        RelatedTo, Supports, Contradicts, Supersedes, DerivedFrom, ...). Both
        memories must be live; ``weight`` is a finite number in (0, 1e6]."""
        self._check_writable()
        a = self._live_id(src)
        b = self._live_id(dst)
        if a == b:
            raise InvalidArgument("a memory cannot be linked to itself")
        kind = v.choice(edge, ops.EDGE_KINDS, "edge")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise InvalidArgument(f"weight must be a number, not {type(weight).__name__}")
        if not math.isfinite(weight) or not 0 < weight <= MAX_EDGE_WEIGHT:
            raise InvalidArgument(f"weight must be in (0, {MAX_EDGE_WEIGHT:g}], got {weight!r}")
        self._commit(ops.AddAssocEdge(src=a, dst=b, edge=kind, weight=float(weight), at_ms=self._now_ms()))
