"""Pruned memories: list them, restore one, set the prune age.

The write gate's prune is a soft delete (:mod:`chitta.policies.write_gate`): the
memory is forgotten with ``meta["pruned"]`` recording when and by what. These
functions read such memories back from the memories organ and restore one as a
new memory (the old id stays forgotten, its history intact).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.field import puts as putops
from chitta.ops import checks as v
from chitta.policies import write_gate as gate

if TYPE_CHECKING:
    from chitta.field.core import FieldCore
    from chitta.model import Memory


def _restored(core: FieldCore) -> set[int]:
    out = set()
    for mid in core.memories.live_ids():
        m = core.memories.get(mid)
        if m is not None and m.meta and gate.RESTORED_KEY in m.meta:
            try:
                out.add(int(m.meta[gate.RESTORED_KEY]))
            except (TypeError, ValueError):
                continue
    return out


def _pruned_memories(core: FieldCore) -> list[Memory]:
    done = _restored(core)
    out = []
    for mid in core.memories.all_ids():
        m = core.memories.forgotten_memory(mid)
        if m is not None and m.meta and gate.PRUNED_KEY in m.meta and m.id not in done:
            out.append(m)
    return out


def pruned(core: FieldCore) -> list[dict[str, Any]]:
    """Every pruned memory not yet restored: id, text, kind, when and by what."""
    core.check_open()
    with core.lock:
        rows = _pruned_memories(core)
    out = []
    for m in rows:
        mark = (m.meta or {}).get(gate.PRUNED_KEY) or {}
        out.append(
            {
                "id": str(m.id),
                "text": m.text,
                "kind": m.kind,
                "pruned_at": mark.get("at_ms", 0) / 1000.0,
                "by": mark.get("by"),
            }
        )
    return out


def restore(core: FieldCore, id: Any) -> int:
    """Bring a pruned memory back as a new memory; returns the new id."""
    core.check_writable()
    mid = v.memory_id(id)
    with core.lock:
        m = next((x for x in _pruned_memories(core) if x.id == mid), None)
        if m is None:
            raise NotFound(f"no pruned memory with id {mid}; list them with Field.pruned()")
        meta = {k: val for k, val in (m.meta or {}).items() if k != gate.PRUNED_KEY}
        meta[gate.RESTORED_KEY] = str(m.id)
        new = core.new_id()
        emb = m.embedding if m.embedding is not None and len(m.embedding) else None
        put = putops.put_op(
            core,
            new,
            m.text,
            m.kind,
            m.realm,
            m.session,
            m.source_tool,
            m.tags,
            m.confidence,
            emb,
            meta,
            m.created_ms / 1000.0,
        )
        core.commit_group(putops.with_vectors(core, [put]))
    return new


def set_prune_days(core: FieldCore, days: Any) -> float:
    """Set the write gate's prune age in days (0: never prune)."""
    core.check_writable()
    value = v.non_negative_float(days, "days")
    if value > 36500:
        raise InvalidArgument("days must be at most 36500; use 0 to never prune")
    core.commit(ops.ConfigureField(key="staged_prune_days", value=value, at_ms=core.now_ms()))
    return value
