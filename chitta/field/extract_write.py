"""Write-time triplet extraction: the facts a memory states, logged with it.

When the field setting ``extract_triplets`` is on (ConfigureField; unset, it is on
exactly when the field embeds its memories: docs/DECISIONS.md D-051), every
``remember`` / ``remember_many`` (and so the importers) runs
:func:`chitta.encode.extract.extract` over each new memory's text and commits, in
the same atomic group as the put, what it found:

- one ``AddTriplet`` per fact, ``source_memory_id`` the memory, ``valid_from_ms``
  the memory's event time; a negated fact's predicate is ``not_<predicate>``; a
  future one ("will use") has confidence ``FUTURE_CONFIDENCE`` (a plan, not a fact);
  a repeated fact reinforces the one stored (the organ sums weights);
- ``InvalidateTriplet`` at the new memory's time for what it contradicts: the
  opposite polarity of the same fact, and, for a functional predicate (lives_in,
  works_at, ...: ``chitta.encode.extract_relations.FUNCTIONAL``), the subject's
  other current objects. A contradicted triplet that became valid after the new
  memory's time wins instead: the new one is invalidated at that time;
- a state in the past tense ("used to live in Porto") holds since an unknown time
  (``valid_from_ms`` 0) and is invalidated at the memory's time.

Replay applies these ops as logged and never extracts again, so a changed extractor
never changes an existing field.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.encode.extract import Extracted, extract
from chitta.encode.extract_relations import FUNCTIONAL
from chitta.ops import Op

if TYPE_CHECKING:
    from chitta.field.core import FieldCore
    from chitta.organs.knowledge import KnowledgeOrgan

__all__ = ["DEFAULT", "SETTING", "enabled", "facts_ops", "found", "triplet_ops"]

SETTING = "extract_triplets"
DEFAULT = None  # unset: on when the field embeds (an embedder), off for a log-only field
FUTURE_CONFIDENCE = 0.5
MAX_PER_MEMORY = 64  # triplets kept from one memory (its first ones)
MAX_NAME_CHARS = 1024  # the knowledge operations' limit on a name

# (subject key, predicate key) -> object key -> (subject, predicate, object, valid_from_ms)
_Current = dict[str, tuple[str, str, str, int]]


def enabled(core: FieldCore) -> bool:
    value = core.settings.get(SETTING, DEFAULT)
    return bool(core.encoding.enabled) if value is None else bool(value)


# A field's native remember(text) entry skips Python (chitta/field/facade.py): it is
# installed only while extraction is off, and dropped here when this handle turns it on.
_NATIVE: weakref.WeakKeyDictionary[Any, weakref.ref[Any]] = weakref.WeakKeyDictionary()


def note_native_entry(core: FieldCore, field: Any) -> None:
    _NATIVE[core] = weakref.ref(field)


def drop_native_entry(core: FieldCore) -> None:
    ref = _NATIVE.pop(core, None)
    field = None if ref is None else ref()
    if field is not None:
        field.__dict__.pop("remember", None)


def _organ(core: FieldCore) -> KnowledgeOrgan | None:
    from chitta.organs.knowledge import KnowledgeOrgan

    organ = core.registry.by_name.get("knowledge")
    return organ if isinstance(organ, KnowledgeOrgan) else None


def triplet_ops(core: FieldCore, puts: Sequence[ops.PutPayload]) -> list[Op]:
    """The knowledge ops for ``puts`` (in order) when extraction is on, else []."""
    organ = _organ(core) if enabled(core) else None
    if organ is None:
        return []
    items = [(found(put.text), put.id, put.created_ms) for put in puts]
    return facts_ops(organ, core.now_ms(), items)


def found(text: str) -> list[Extracted]:
    """The facts of ``text`` that are kept (names the operations accept; the first ones)."""
    return [e for e in extract(text) if _fits(e)][:MAX_PER_MEMORY]


def facts_ops(
    organ: KnowledgeOrgan,
    now: int,
    items: Sequence[tuple[Sequence[Extracted], int, int]],
    ended: frozenset[tuple[str, str, str]] = frozenset(),
) -> list[Op]:
    """The ops for each (facts, memory id, event time), in order; ``ended``: keys the same
    group invalidates already (not current for the contradiction rules)."""
    from chitta.organs.knowledge import entity_key, predicate_key

    cache: dict[tuple[str, str], _Current] = {}

    def current(subject: str, predicate: str) -> _Current:
        key = (entity_key(subject), predicate_key(predicate))
        if key not in cache:
            cache[key] = {
                entity_key(t.object): (t.subject, t.predicate, t.object, int(v["valid_from_ms"]))
                for t, v in organ.query(subject, predicate)
                if (*key, entity_key(t.object)) not in ended
            }
        return cache[key]

    out: list[Op] = []
    for facts, mid, at in items:
        for e in facts:
            out.extend(_ops_for(e, mid, at, now, current, entity_key))
    return out


def _fits(e: Extracted) -> bool:
    """A name the knowledge operations would accept too (chitta/organs/knowledge_ops.py)."""
    return all(
        0 < len(x) <= MAX_NAME_CHARS and x.isprintable() and x.strip()
        for x in (e.subject, e.object)
    )


def _ops_for(
    e: Extracted,
    mid: int,
    at: int,
    now: int,
    current: Callable[[str, str], _Current],
    key: Callable[[str], str],
) -> list[Op]:
    predicate = ("not_" if e.negated else "") + e.predicate
    past_state = e.tense == "past" and not e.event
    start = 0 if past_state else at
    out: list[Op] = [
        ops.AddTriplet(
            subject=e.subject,
            predicate=predicate,
            object=e.object,
            weight=1.0,
            valid_from_ms=start,
            source_memory_id=mid,
            confidence=FUTURE_CONFIDENCE if e.tense == "future" else 1.0,
            recorded_ms=now,
        )
    ]
    mine = current(e.subject, predicate)
    okey = key(e.object)

    def invalidate(s: str, p: str, o: str, when: int, why: str) -> None:
        out.append(
            ops.InvalidateTriplet(
                subject=s, predicate=p, object=o, at_ms=when, reason=why, recorded_ms=now
            )
        )

    if e.tense == "future":  # a plan contradicts nothing yet
        mine.setdefault(okey, (e.subject, predicate, e.object, start))
        return out
    # Facts this one contradicts: the opposite polarity of the same fact ...
    rivals: list[tuple[_Current, str]] = []
    opposite = e.predicate if e.negated else "not_" + e.predicate
    rivals.append((current(e.subject, opposite), okey))
    # ... and the subject's other objects of a functional predicate.
    functional = not e.negated and not past_state and e.predicate in FUNCTIONAL
    superseded = False
    for table, only in rivals:
        hit = table.get(only)
        if hit is not None and not past_state:
            superseded |= _settle(table, only, hit, e, predicate, start, at, mid, invalidate)
    if functional:
        for other, hit in list(mine.items()):
            if other != okey:
                superseded |= _settle(mine, other, hit, e, predicate, start, at, mid, invalidate)
    if past_state:
        invalidate(e.subject, predicate, e.object, at, f"past tense in memory {mid}")
        mine.pop(okey, None)
    elif not superseded:
        mine[okey] = (e.subject, predicate, e.object, start)
    return out


def _settle(
    table: _Current,
    okey: str,
    hit: tuple[str, str, str, int],
    e: Extracted,
    predicate: str,
    start: int,
    at: int,
    mid: int,
    invalidate: Callable[[str, str, str, int, str], None],
) -> bool:
    """The earlier of two contradicting facts ends when the later starts; True when
    the new one is the earlier (so it is not current)."""
    s, p, o, since = hit
    if since <= at:
        invalidate(s, p, o, at, f"superseded by memory {mid}")
        del table[okey]
        return False
    invalidate(e.subject, predicate, e.object, since, f"superseded by {s} {p} {o}")
    return True


def update_ops(core: FieldCore, mid: int, text: str, at: int) -> list[Op]:
    """``update(text=)`` when extraction is on: the current facts only this memory states
    that the new text does not are invalidated at ``at`` (the update's time), and the new
    text's other facts added as of ``at`` (a fact both texts state is left as it is; one
    another memory states too stays). For the update's own group; replay never extracts."""
    organ = _organ(core) if enabled(core) else None
    if organ is None:
        return []
    from chitta.organs.knowledge import entity_key, predicate_key

    now = core.now_ms()
    facts = found(text)
    said = {
        (entity_key(e.subject), predicate_key(("not_" if e.negated else "") + e.predicate),
         entity_key(e.object))
        for e in facts
    }  # fmt: skip
    out: list[Op] = []
    kept: set[tuple[str, str, str]] = set()
    ended: set[tuple[str, str, str]] = set()
    for key in sorted(organ.by_source.get(mid, ()), key=lambda k: organ.triplets[k].seq):
        t = organ.triplets[key]
        view = t.view(None, None)
        if view is None:
            continue
        if key in said:
            kept.add(key)
        elif view["source_memory_ids"] == [mid]:
            ended.add(key)
            out.append(
                ops.InvalidateTriplet(
                    subject=t.subject,
                    predicate=t.predicate,
                    object=t.object,
                    at_ms=at,
                    reason=f"memory {mid} updated",
                    recorded_ms=now,
                )
            )
    fresh = [
        e
        for e in facts
        if (entity_key(e.subject), predicate_key(("not_" if e.negated else "") + e.predicate),
            entity_key(e.object)) not in kept
    ]  # fmt: skip
    return out + facts_ops(organ, now, [(fresh, mid, at)], frozenset(ended))
