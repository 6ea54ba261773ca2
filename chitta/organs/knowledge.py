"""The knowledge-graph organ: bi-temporal triplets and an entity table.

A triplet ``(subject, predicate, object)`` is keyed by its canonical names
(:func:`entity_key`, :func:`predicate_key`): case, Unicode form and whitespace do
not make a new one. Each AddTriplet of a key is kept as one *assertion* and each
InvalidateTriplet as one *invalidation*, with two times each:

- valid time: when it was true in the world (``valid_from_ms`` / ``at_ms``);
- record time: when the field learned it (``recorded_ms``, the writer's clock at
  commit, carried in the op, so replay gives the same state).

A view ``(as_of, known_at)`` keeps the assertions and invalidations recorded at
or before ``known_at``; the triplet holds at ``as_of`` when the latest known
assertion starting at or before ``as_of`` (its ``valid_from``) is not followed by a
known invalidation in ``[valid_from, as_of]``. ``as_of=None`` is the latest
state (every known invalidation applies); ``known_at=None`` is all that is known.
A repeated assertion reinforces: a visible triplet's weight is the sum of the
weights of its known assertions starting at or before ``as_of``.

Aliases are triplets too: ``(alias, "alias_of", canonical)``. The entity classes of
a view are the connected components of its visible alias triplets; a query for
any member matches every member. The entity a class shows is a member that is
never an alias (the smallest such key; the smallest key on a cycle).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext
from chitta.organs.knowledge_extract_ops import EXTRACT_OPERATIONS
from chitta.organs.knowledge_ops import OPERATIONS

__all__ = ["ALIAS_OF", "KnowledgeOrgan", "entity_key", "predicate_key"]

ALIAS_OF = "alias_of"
SIDECAR = "knowledge.rec"
MAGIC = b"CHITTAKG"
VERSION = 1

Key = tuple[str, str, str]
# An assertion: (valid_from_ms, recorded_ms, weight, source_memory_id or None, confidence).
Assertion = tuple[int, int, float, int | None, float]
# An invalidation: (at_ms, recorded_ms, reason or None).
Invalidation = tuple[int, int, str | None]


def entity_key(name: str) -> str:
    """The canonical form of an entity name: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def predicate_key(name: str) -> str:
    """The canonical form of a predicate: like an entity, with ``_`` between words."""
    return "_".join(unicodedata.normalize("NFKC", name).casefold().split())


class Triplet:
    """One triplet key's history: its first surface forms, assertions, invalidations."""

    __slots__ = ("assertions", "invalidations", "object", "predicate", "seq", "subject")

    def __init__(self, seq: int, subject: str, predicate: str, obj: str) -> None:
        self.seq, self.subject, self.predicate, self.object = seq, subject, predicate, obj
        self.assertions: list[Assertion] = []
        self.invalidations: list[Invalidation] = []

    def view(self, as_of: int | None, known_at: int | None) -> dict[str, Any] | None:
        """This triplet as the view ``(as_of, known_at)`` sees it, or None when it does
        not hold there (times in epoch ms; see the module docstring)."""
        known = [a for a in self.assertions if known_at is None or a[1] <= known_at]
        started = [a for a in known if as_of is None or a[0] <= as_of]
        if not started:
            return None
        start = max(a[0] for a in started)
        ends = [
            i[0]
            for i in self.invalidations
            if (known_at is None or i[1] <= known_at) and i[0] >= start
        ]
        if any(as_of is None or end <= as_of for end in ends):
            return None
        sources: list[int] = []
        for a in started:
            if a[3] is not None and a[3] not in sources:
                sources.append(a[3])
        return {
            "valid_from_ms": start,
            "invalidated_at_ms": min(ends) if ends else None,
            "recorded_ms": min(a[1] for a in started),
            "weight": sum(a[2] for a in started),
            "confidence": max(a[4] for a in started),
            "source_memory_ids": sources,
        }


class KnowledgeOrgan(OrganBase):
    name = "knowledge"
    handles = frozenset({OpType.AddTriplet, OpType.InvalidateTriplet})
    operations = OPERATIONS + EXTRACT_OPERATIONS

    def __init__(self) -> None:
        self.triplets: dict[Key, Triplet] = {}
        self.by_subject: dict[str, set[Key]] = {}
        self.by_predicate: dict[str, set[Key]] = {}
        self.by_object: dict[str, set[Key]] = {}
        self.names: dict[str, str] = {}  # entity key -> the surface form first seen
        self.by_source: dict[int, set[Key]] = {}  # memory id -> keys it asserted
        self.ignored = 0  # ops naming nothing (empty names, an unknown triplet)
        self._classes: dict[str, str] | None = None  # the latest view's alias classes
        self.version = 0  # bumped by every applied op
        # Keys an applied op touched, for the graph lane's index to take as deltas
        # (chitta/recall/graph_index.py); None: nobody tracks (the index builds anew).
        self.changed: set[Key] | None = None

    # -- applying ops ----------------------------------------------------------------

    def apply(self, op: Op) -> None:
        self.version += 1
        if type(op) is ops.AddTriplet:
            self._add(op)
        elif type(op) is ops.InvalidateTriplet:
            self._invalidate(op)

    def _key(self, subject: str, predicate: str, obj: str) -> Key | None:
        key = (entity_key(subject), predicate_key(predicate), entity_key(obj))
        return key if all(key) else None

    def _add(self, op: ops.AddTriplet) -> None:
        key = self._key(op.subject, op.predicate, op.object)
        if key is None:
            self.ignored += 1
            return
        t = self.triplets.get(key)
        if t is None:
            t = self._insert(key, op.subject, op.predicate, op.object)
        t.assertions.append(
            (
                op.valid_from_ms,
                op.recorded_ms,
                float(op.weight),
                op.source_memory_id,
                float(op.confidence),
            )
        )
        if op.source_memory_id is not None:
            self.by_source.setdefault(op.source_memory_id, set()).add(key)
        if self.changed is not None:
            self.changed.add(key)
        if key[1] == ALIAS_OF:
            self._classes = None

    def _insert(self, key: Key, subject: str, predicate: str, obj: str) -> Triplet:
        t = Triplet(len(self.triplets), " ".join(subject.split()), predicate, " ".join(obj.split()))
        self.triplets[key] = t
        self.by_subject.setdefault(key[0], set()).add(key)
        self.by_predicate.setdefault(key[1], set()).add(key)
        self.by_object.setdefault(key[2], set()).add(key)
        self.names.setdefault(key[0], t.subject)
        self.names.setdefault(key[2], t.object)
        return t

    def _invalidate(self, op: ops.InvalidateTriplet) -> None:
        key = self._key(op.subject, op.predicate, op.object)
        t = self.triplets.get(key) if key is not None else None
        if t is None or key is None:
            self.ignored += 1  # another writer's invalidation of a triplet this log lacks
            return
        t.invalidations.append((op.at_ms, op.recorded_ms, op.reason))
        if self.changed is not None:
            self.changed.add(key)
        if key[1] == ALIAS_OF:
            self._classes = None

    # -- entities and queries ----------------------------------------------------------

    def classes(self, as_of: int | None = None, known_at: int | None = None) -> dict[str, str]:
        """Entity key -> the key its class shows, for every entity in an alias
        triplet the view sees (an entity in none is its own class)."""
        latest = as_of is None and known_at is None
        if latest and self._classes is not None:
            return self._classes
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        aliases: set[str] = set()
        for key in self.by_predicate.get(ALIAS_OF, ()):
            if self.triplets[key].view(as_of, known_at) is not None:
                aliases.add(key[0])
                a, b = find(key[0]), find(key[2])
                if a != b:
                    parent[max(a, b)] = min(a, b)
        members: dict[str, list[str]] = {}
        for x in list(parent):
            members.setdefault(find(x), []).append(x)
        out: dict[str, str] = {}
        for group in members.values():
            roots = [m for m in group if m not in aliases]
            shown = min(roots) if roots else min(group)
            out.update((m, shown) for m in group)
        if latest:
            self._classes = out
        return out

    def members(self, key: str, classes: dict[str, str]) -> set[str]:
        shown = classes.get(key)
        if shown is None:
            return {key}
        return {m for m, s in classes.items() if s == shown}

    def query(
        self,
        subject: str | None = None,
        predicate: str | None = None,
        obj: str | None = None,
        *,
        as_of: int | None = None,
        known_at: int | None = None,
    ) -> list[tuple[Triplet, dict[str, Any]]]:
        """The triplets matching the given names that hold in the view, by weight
        (heaviest first), then in the order they were first asserted."""
        classes = self.classes(as_of, known_at)
        picks: list[set[Key]] = []
        for name, index, canon in (
            (subject, self.by_subject, entity_key),
            (predicate, self.by_predicate, predicate_key),
            (obj, self.by_object, entity_key),
        ):
            if name is None:
                continue
            keys = {canon(name)} if index is self.by_predicate else None
            names = keys if keys is not None else self.members(canon(name), classes)
            picks.append(set().union(*(index.get(n, set()) for n in names)))
        if picks:
            candidates = set.intersection(*picks)
            chosen = [self.triplets[k] for k in candidates]
        else:
            chosen = list(self.triplets.values())
        out = [(t, v) for t in chosen if (v := t.view(as_of, known_at)) is not None]
        out.sort(key=lambda tv: (-tv[1]["weight"], tv[0].seq))
        return out

    def shown_name(self, key: str, classes: dict[str, str]) -> str:
        shown = classes.get(key, key)
        return self.names.get(shown, shown)

    # -- checkpoints -----------------------------------------------------------------

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [
            [t.subject, t.predicate, t.object, [list(a) for a in t.assertions],
             [list(i) for i in t.invalidations]]
            for t in sorted(self.triplets.values(), key=lambda t: t.seq)
        ]  # fmt: skip
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"triplets": len(rows), "entities": len(self.names), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        # A state migrated from before this organ is empty and has no sidecar.
        empty = int(state["triplets"]) == 0 and SIDECAR not in ctx.sidecars
        rows = [] if empty else ctx.read_records(SIDECAR, MAGIC, VERSION)
        for subject, predicate, obj, assertions, invalidations in rows:
            key = self._key(str(subject), str(predicate), str(obj))
            if key is None or key in self.triplets:
                raise ValueError("knowledge: a sidecar row has an empty or repeated triplet")
            t = self._insert(key, str(subject), str(predicate), str(obj))
            t.assertions = [
                (int(v), int(r), float(w), None if s is None else int(s), float(c))
                for v, r, w, s, c in assertions
            ]
            for a in t.assertions:
                if a[3] is not None:
                    self.by_source.setdefault(a[3], set()).add(key)
            t.invalidations = [
                (int(a), int(r), None if why is None else str(why)) for a, r, why in invalidations
            ]
        if len(self.triplets) != int(state["triplets"]) or len(self.names) != int(
            state["entities"]
        ):
            raise ValueError("knowledge: the sidecar and the state disagree")
        self.ignored = int(state["ignored"])
        self._classes = None
        self.changed = None
        self.version += 1

    def stats(self) -> dict[str, Any]:
        return {
            "triplets": len(self.triplets),
            "entities": len(self.names),
            "invalidations": sum(len(t.invalidations) for t in self.triplets.values()),
            "ignored": self.ignored,
        }
