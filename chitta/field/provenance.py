"""The provenance axis in the field: the ops a write adds, the laundering guard,
the recall filter and the ranking factor.

Functions over a :class:`~chitta.field.core.FieldCore`. The rules are
chitta/policies/provenance.py; the state is the ``provenance`` organ
(chitta/organs/provenance.py). A field without that organ registered writes no
provenance and every memory is ``unknown`` and established.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.errors import CandidateLaundering, InvalidArgument
from chitta.organs.provenance import ProvenanceOrgan
from chitta.policies import provenance as policy

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

__all__ = ["allowed_ids", "check_laundering", "for_puts", "organ", "provenances", "weights_hook"]


def organ(core: FieldCore) -> ProvenanceOrgan | None:
    found = core.registry.by_name.get("provenance")
    return found if isinstance(found, ProvenanceOrgan) else None


def for_puts(
    core: FieldCore,
    puts: Sequence[ops.PutPayload],
    provenance: object,
    explicit_kinds: Sequence[bool],
) -> tuple[list[ops.PutPayload], list[ops.ProvenanceEvent]]:
    """The puts with the kinds their writer may write (``can_write_kind``) and the
    ``assign`` events that record their provenance (none for ``unknown``).
    ``provenance``: as given (None: inferred from each put's source tool and meta)."""
    if provenance is None and all(p.source_tool is None and p.meta is None for p in puts):
        return list(puts), []  # no writer named: unknown, nothing to record (the common case)
    given = None if provenance is None else policy.normalise(provenance)
    if organ(core) is None:
        return list(puts), []
    out: list[ops.PutPayload] = []
    events: list[ops.ProvenanceEvent] = []
    now = core.now_ms()
    for put, explicit in zip(puts, explicit_kinds):
        prov = given or policy.infer(put.source_tool, put.meta)
        kind = policy.admitted_kind(prov, put.kind, explicit)
        if kind != put.kind:
            put = msgspec.structs.replace(put, kind=kind)
        out.append(put)
        candidate = policy.enters_candidate_band(prov)
        if prov != policy.UNKNOWN or candidate:
            events.append(
                ops.ProvenanceEvent(
                    event="assign", id=put.id, at_ms=now, provenance=prov, candidate=candidate
                )
            )
    return out, events


def check_laundering(core: FieldCore, src: int, dst: int, edge: str) -> None:
    """The seed's laundering guard: CandidateLaundering when candidate ``src`` would
    point a guarded edge at established ``dst``."""
    o = organ(core)
    if o is None or edge not in policy.GUARDED_EDGES:
        return
    if o.is_candidate(src) and not o.is_candidate(dst):
        raise CandidateLaundering(
            f"edge {src} -{edge}-> {dst} refused: {src} is a candidate ({o.provenance(src)}, "
            f"not yet witnessed) and {dst} is established; a quarantined memory may not cite "
            "established knowledge. Promote it first with witness_memory(id, signal), or link "
            f"the other way ({dst} -> {src}); nothing was logged"
        )


def provenances(value: object) -> frozenset[str] | None:
    """A recall filter's provenances (one name or several), checked; None: no filter."""
    if value is None:
        return None
    items: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    try:
        out = frozenset(policy.normalise(p) for p in items)
    except TypeError:
        raise InvalidArgument(
            f"provenance must be a name or a list of names, not {type(value).__name__}"
        ) from None
    if not out:
        raise InvalidArgument("provenance must name at least one provenance (or be None)")
    return out


def allowed_ids(core: FieldCore, want: frozenset[str]) -> npt.NDArray[np.uint64]:
    """Ids whose provenance is one of ``want``, ascending (with ``unknown``: the live ids
    with none of the others; without it the recorded ids, which the lanes mask live)."""
    o = organ(core)
    recorded = {} if o is None else o.of
    if policy.UNKNOWN not in want:
        return np.array(sorted(m for m, p in recorded.items() if p in want), np.uint64)
    key = (core.applied, None if o is None else o.version, want)
    if o is not None and o.filter_cache is not None and o.filter_cache[0] == key:
        return o.filter_cache[1]  # type: ignore[no-any-return]
    others = np.array(sorted(m for m, p in recorded.items() if p not in want), np.uint64)
    live = np.sort(core.memories.live_id_array())
    out = live[~np.isin(live, others, assume_unique=True)] if len(others) else live
    if o is not None:
        o.filter_cache = (key, out)  # recall repeats a filter between writes
    return out


def weights_hook(core: FieldCore) -> Callable[[], Mapping[int, float]]:
    """For the recall engine: id -> the ``provenance`` multiplier of every memory whose
    multiplier is not 1 (recomputed when the organ changed since the last call)."""
    cache: list[Any] = [None, {}]

    def weights() -> Mapping[int, float]:
        o = organ(core)
        if o is None:
            return {}
        if cache[0] != o.version:
            table = {m: policy.weight(p, m in o.candidates) for m, p in o.of.items()}
            cache[:] = [o.version, {m: x for m, x in table.items() if x != 1.0}]
        out: Mapping[int, float] = cache[1]
        return out

    return weights
