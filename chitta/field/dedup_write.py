"""Write-time dedup: ``remember(text, dedup=True)``.

A memory is a duplicate of a live one with the same realm and the same canonical
text (:func:`chitta.policies.dedup.canonical_text`: NFKC, case folded, runs of
whitespace as one space). Then nothing new is stored: the existing memory is
reinforced (an access, ``UpdateState(touch=True)``, as a recall of it records)
and its id returned.

The lookup is a table (realm, canonical text) -> id per handle, built on the first
``dedup=True`` write from every memory the handle holds and brought up to date
before each lookup from the memories applied since (the memories organ's rows
only grow), so other processes' memories (after ``refresh``) and writes without
``dedup`` are seen too. An entry is checked at lookup: a forgotten or edited
memory is no duplicate.
"""

from __future__ import annotations

from chitta import ops
from chitta.field.core import FieldCore
from chitta.policies.dedup import canonical_text


class DedupTable:
    def __init__(self) -> None:
        self.rows_seen = 0
        self.ids: dict[tuple[str | None, str], list[int]] = {}  # oldest first


def _catch_up(core: FieldCore, table: DedupTable) -> None:
    new = core.memories.ids_since(table.rows_seen)
    for mid in new:
        m = core.memories.get(mid)
        if m is not None:
            table.ids.setdefault((m.realm, canonical_text(m.text)), []).append(mid)
    table.rows_seen += len(new)


def existing(core: FieldCore, text: str, realm: str | None) -> int | None:
    """The live memory ``text`` in ``realm`` duplicates, reinforced; else None.
    ``text`` is already checked (chitta.ops.checks.text)."""
    with core.lock:
        table: DedupTable | None = getattr(core, "dedup_table", None)
        if table is None:
            table = DedupTable()
            core.dedup_table = table  # type: ignore[attr-defined]
        _catch_up(core, table)
        key = (realm, canonical_text(text))
        ids = table.ids.get(key, [])
        while ids:
            m = core.memories.get(ids[0])
            if m is not None and m.realm == realm and canonical_text(m.text) == key[1]:
                core.commit(ops.UpdateState(id=m.id, at_ms=core.now_ms(), touch=True))
                return m.id
            ids.pop(0)  # forgotten or edited since
        return None
