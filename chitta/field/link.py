"""Field.link: a typed association edge between two live memories.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. One ``AddAssocEdge`` op, validated
first (both ids live, the edge kind known, the weight finite), so a bad call
changes nothing.
"""

from __future__ import annotations

import math

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.field.core import FieldCore
from chitta.field.provenance import check_laundering
from chitta.ops import checks as v
from chitta.policies.edge_legality import check_edge

MAX_EDGE_WEIGHT = 1e6


def link(core: FieldCore, src: int, dst: int, edge: str = "RelatedTo", weight: float = 1.0) -> None:
    """``Field.link`` (its docstring is the reference)."""
    core.check_writable()
    a = core.live_id(src)
    b = core.live_id(dst)
    if a == b:
        raise InvalidArgument("a memory cannot be linked to itself")
    kind = v.choice(edge, ops.EDGE_KINDS, "edge")
    check_legal(core, a, b, kind)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)):
        raise InvalidArgument(f"weight must be a number, not {type(weight).__name__}")
    if not math.isfinite(weight) or not 0 < weight <= MAX_EDGE_WEIGHT:
        raise InvalidArgument(f"weight must be in (0, {MAX_EDGE_WEIGHT:g}], got {weight!r}")
    core.commit(
        ops.AddAssocEdge(src=a, dst=b, edge=kind, weight=float(weight), at_ms=core.now_ms())
    )


def check_legal(core: FieldCore, a: int, b: int, edge: str) -> None:
    """The edge-legality matrix (chitta/policies/edge_legality.py) for two live ids."""
    ka, kb = core.memories.scoring_state(a), core.memories.scoring_state(b)
    check_edge(edge, a, "" if ka is None else ka[0], b, "" if kb is None else kb[0])
    check_laundering(core, a, b, edge)  # candidate -> established (chitta/field/provenance.py)
