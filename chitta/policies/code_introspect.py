"""Introspection over memories about code: what the field believes about a topic and
how far each claim can be trusted; cross-harness disagreements; contradiction peers;
invalidation; test and commit events. The handlers of the trust organ's operations
(chitta/organs/code/trust.py): functions of a FieldCore, reading the organs through
their queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta import ops
from chitta.errors import InvalidArgument, NotFound
from chitta.policies.code_trust import CodeState, verdict

if TYPE_CHECKING:
    from chitta.field.core import FieldCore
    from chitta.model import Memory

__all__ = [
    "cross_harness_conflicts",
    "find_symbol",
    "get_conflicts",
    "mark_invalidated",
    "note_test",
    "record_commit",
    "staleness",
    "what_do_i_know_about",
]

MS_PER_DAY = 86_400_000
MIN_SEMANTIC = 0.3  # find_symbol's floor for a match by embedding (cosine)
MAX_REF_CHARS = 1024


def _verdict(core: FieldCore, m: Memory) -> dict[str, Any]:
    """The memory's verdict (and ``invalidated_by``), from what recall's factor reads
    (MemoriesOrgan.claim_rows)."""
    refs, by, written = core.memories.claim_rows().get(m.id, ((), None, m.written_ms))
    return {**verdict(CodeState(core), refs, by, written), "invalidated_by": by}


def _memory(core: FieldCore, memory_id: object) -> Memory:
    m = core.memories.get(core.live_id(memory_id))
    assert m is not None
    return m


def staleness(core: FieldCore, memory_id: object) -> dict[str, Any]:
    m = _memory(core, memory_id)
    v = _verdict(core, m)
    return {"id": m.id, "artifacts": list(m.artifacts), **v}


def mark_invalidated(core: FieldCore, memory_id: object, by: str) -> dict[str, Any]:
    """Set ``invalidated_by`` in the memory's meta (an UpdateMemoryContent with its meta
    merged; D-042)."""
    if not isinstance(by, str) or not by.strip() or len(by) > MAX_REF_CHARS:
        raise InvalidArgument(
            f"by must name what invalidated the memory (a commit hash or event id, "
            f"1-{MAX_REF_CHARS} chars), got {by!r:.80}"
        )
    m = _memory(core, memory_id)
    if (m.meta or {}).get("invalidated_by") == by.strip():
        return {"id": m.id, "invalidated_by": by.strip()}  # already: nothing to write
    meta = dict(m.meta or {})
    meta["invalidated_by"] = by.strip()
    op = ops.UpdateMemoryContent(id=m.id, at_ms=core.now_ms(), meta=meta)
    ops.validate(op)
    core.commit(op)
    return {"id": m.id, "invalidated_by": by.strip()}


def get_conflicts(core: FieldCore, memory_id: object) -> dict[str, Any]:
    """The live memories joined to this one by a Contradicts edge (either way)."""
    mid = core.live_id(memory_id)
    peers: dict[int, str] = {}
    for other, kind, outgoing, _w in core.graph.neighbours(mid):
        if kind == "Contradicts" and core.memories.is_live(other):
            peers.setdefault(other, "contradicts" if outgoing else "contradicted_by")
    found = core.memories.memories(sorted(peers))
    return {
        "id": mid,
        "conflicts": [
            {"id": m.id, "text": m.text, "relation": peers[m.id], "harness": m.harness}
            for m in found
            if m is not None
        ],
    }


def _unit(v: Any) -> Any:
    vec = np.asarray(v, np.float32)
    n = float(np.linalg.norm(vec))
    return vec / n if n > 0 else None


def cross_harness_conflicts(
    core: FieldCore,
    *,
    ids: Iterable[int] | None = None,
    min_similarity: float = 0.5,
    neighbours: int = 5,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """Pairs of live, non-staged memories close in the dense index (each memory's
    ``neighbours`` nearest, cosine >= ``min_similarity``) whose harnesses differ,
    ranked by the disagreement score 1 - cosine (highest first, then ids).
    ``ids``: only pairs inside this set (what_do_i_know_about's hits)."""
    pool = list(core.memories.live_ids()) if ids is None else list(ids)
    staged = core.index.is_staged
    mems = {m.id: m for m in core.memories.memories(pool) if m is not None}
    cand = {
        i: m for i, m in mems.items() if m.harness and not staged(i) and m.embedding is not None
    }
    pairs: dict[tuple[int, int], float] = {}
    for i, m in cand.items():
        q = _unit(m.embedding)
        if q is None:
            continue
        near, _ = core.index.dense(q, neighbours + 1, None)
        for j in near.tolist():
            other = cand.get(int(j))
            if other is None or other.id == i or other.harness == m.harness:
                continue
            u = _unit(other.embedding)
            cos = float(np.dot(q, u)) if u is not None else 0.0
            if cos >= min_similarity:
                pairs[(min(i, other.id), max(i, other.id))] = cos
    ranked = sorted(pairs.items(), key=lambda kv: (-(1.0 - kv[1]), kv[0]))
    return [
        {
            "a": {"id": a, "text": mems[a].text, "harness": mems[a].harness},
            "b": {"id": b, "text": mems[b].text, "harness": mems[b].harness},
            "similarity": cos,
            "disagreement": 1.0 - cos,
        }
        for (a, b), cos in ranked[:limit]
    ]


def what_do_i_know_about(core: FieldCore, topic: str, k: int = 10) -> dict[str, Any]:
    """Per recalled hit: text, staged, invalidated_by, source session / tool / harness,
    age in days, the staleness verdict and its reason, contradiction peers; the
    cross-harness conflicts among the hits; the topic; the total."""
    from chitta.field.recall import recall

    hits = recall(core, topic, k=k, touch=False)
    now = core.now_ms()
    claims = []
    for h in hits:
        m = h.memory
        v = _verdict(core, m)
        claims.append(
            {
                "id": m.id,
                "text": m.text,
                "kind": m.kind,
                "score": h.score,
                "staged": core.index.is_staged(m.id),
                "invalidated_by": v["invalidated_by"],
                "source_session": m.session,
                "source_tool": m.source_tool,
                "harness": m.harness,
                "age_days": (now - m.written_ms) / MS_PER_DAY,
                "artifacts": list(m.artifacts),
                "staleness": v["verdict"],
                "staleness_reason": v["reason"],
                "contradictions": get_conflicts(core, m.id)["conflicts"],
            }
        )
    conflicts = cross_harness_conflicts(core, ids=[h.id for h in hits]) if hits else []
    return {
        "topic": topic,
        "claims": claims,
        "cross_harness_conflicts": conflicts,
        "total": len(claims),
    }


# -- symbols, tests, commits ---------------------------------------------------------------


def _state(core: FieldCore) -> CodeState:
    state = CodeState(core)
    if state.symbols is None or state.events is None:
        raise InvalidArgument(
            "this field has no code organs registered (symbols, symbol_events); "
            "add them to chitta.organs.registry"
        )
    return state


def resolve_symbol(core: FieldCore, target: str) -> str:
    """The symbol key ``target`` names: a key, a pytest node id (``a.py::T::test``), or a
    qualified or short name that exactly one symbol has. NotFound otherwise."""
    symbols = _state(core).symbols
    assert symbols is not None
    if not isinstance(target, str) or not target.strip():
        raise InvalidArgument("name a symbol, e.g. 'pkg/a.py#A.f' or 'tests/t.py::test_f'")
    target = target.strip()
    if "::" in target:
        path, _, rest = target.partition("::")
        target = f"{path}#{rest.split('[', 1)[0].replace('::', '.')}"
    if symbols.get(target) is not None:
        return target
    exact = [s.name for how, s in symbols.find(target) if how == "exact"]
    if len(exact) == 1:
        return exact[0]
    near = [s.name for _how, s in symbols.find(target.rpartition("#")[2], limit=5)]
    hint = f"; did you mean one of {near}?" if near else "; run `chitta index-code` first?"
    if len(exact) > 1:
        raise NotFound(f"{target!r} names {len(exact)} symbols {exact[:5]}; give the full key")
    raise NotFound(f"no symbol {target!r} is indexed{hint}")


def note_test(
    core: FieldCore,
    target: str,
    passed: bool,
    session: str | None = None,
    harness: str | None = None,
    memory_id: object = None,
) -> dict[str, Any]:
    key = resolve_symbol(core, target)
    symbols = _state(core).symbols
    assert symbols is not None
    sym = symbols.get(key)
    mids = () if memory_id is None else (core.live_id(memory_id),)
    op = ops.AnalyticsEvent(
        event="symbol_event", at_ms=core.now_ms(), session=session, harness=harness,
        memory_ids=mids, outcome="TestPassed" if passed else "TestFailed",
        symbol=key, file_path=sym.file_path if sym else None, ref=target,
    )  # fmt: skip
    ops.validate(op)
    core.commit(op)
    return {"symbol": key, "event": op.outcome}


def record_commit(
    core: FieldCore,
    commit: str,
    changes: Mapping[str, Any],
    session: str | None = None,
    harness: str | None = None,
) -> dict[str, Any]:
    """Committed events for a commit: ``changes`` maps each changed file (relative to its
    project) to the line ranges ``[[start, end], ...]`` its hunks touch (1-based, new
    side; ``[]`` for a deleted or binary file); each symbol whose span meets a range
    gets an event, and each file one with no symbol. One atomic batch."""
    state = _state(core)
    symbols = state.symbols
    assert symbols is not None
    if not isinstance(commit, str) or not commit.strip() or len(commit) > 256:
        raise InvalidArgument(f"commit must be a commit hash, got {commit!r:.80}")
    if not isinstance(changes, Mapping) or not changes:
        raise InvalidArgument(
            "changes maps each changed file to its line ranges, e.g. {'a.py': [[3, 5]]}"
        )
    now, group, touched = core.now_ms(), [], []
    for path in sorted(changes):
        ranges = changes[path]
        if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
            raise InvalidArgument(f"{path!r} is not a path inside the project; give it relative")
        spans = _ranges(ranges, path)
        hit = sorted(
            {
                s.name
                for s in symbols.in_file(path)
                for a, b in spans
                if s.line_start <= b and a <= s.line_end
            }
        )
        for key in hit:
            group.append(_committed(now, key, path, commit, session, harness))
        group.append(_committed(now, None, path, commit, session, harness))
        touched.extend(hit)
    for op in group:
        ops.validate(op)
    core.commit_group(group)
    return {"commit": commit, "files": sorted(changes), "symbols": touched}


def _ranges(value: Any, path: str) -> list[tuple[int, int]]:
    if not isinstance(value, (list, tuple)):
        raise InvalidArgument(f"the ranges of {path!r} must be a list of [start, end] pairs")
    out = []
    for r in value:
        if (
            not isinstance(r, (list, tuple)) or len(r) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in r)
            or r[0] > r[1]
        ):  # fmt: skip
            raise InvalidArgument(
                f"a range of {path!r} must be [start, end] with 0 <= start <= end, got {r!r}"
            )
        out.append((int(r[0]), int(r[1])))
    return out


def _committed(
    now: int, key: str | None, path: str, commit: str, session: str | None, harness: str | None
) -> ops.AnalyticsEvent:
    return ops.AnalyticsEvent(
        event="symbol_event", at_ms=now, session=session, harness=harness,
        outcome="Committed", symbol=key, file_path=path, ref=commit,
    )  # fmt: skip


def find_symbol(core: FieldCore, name: str, limit: int = 20) -> dict[str, Any]:
    """Symbols by exact, prefix or fuzzy name, with their 1-hop callers and callees."""
    state = _state(core)
    assert state.symbols is not None
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument("name a symbol (or the start of one), e.g. 'Ledger.post'")
    found = state.symbols.find(name.strip(), limit)
    if len(found) < limit and core.encoding.enabled:  # then by embedding (signature + doc)
        seen = {s.name for _how, s in found}
        q = core.encoding.embed_query([name.strip()])[0]
        for cos, s in state.symbols.nearest(q, limit):
            if s.name not in seen and cos >= MIN_SEMANTIC and len(found) < limit:
                found.append(("semantic", s))
    rows = []
    for how, s in found:
        calls = state.calls
        rows.append(
            {
                **s.public(),
                "match": how,
                "callers": calls.callers_of(s.name) if calls else [],
                "callees": calls.callees_of(s.name) if calls else [],
            }
        )
    return {"symbols": rows, "total": len(rows)}
