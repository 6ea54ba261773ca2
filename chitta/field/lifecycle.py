"""Field lifecycle: tiers, surprise, dedup, contradiction edges, curation, history.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. The policies live in
:mod:`chitta.policies`; this module reads the organs, asks the policies what
should change and commits their ops through the log (``_commit_group``), so a
reopened field replays to the same state. Nothing here changes an organ
directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from chitta import inspect, ops
from chitta.errors import InvalidArgument, NotFound
from chitta.field import read
from chitta.field.core import FieldCore
from chitta.field.link import check_legal
from chitta.model import Memory
from chitta.ops import checks as v
from chitta.policies import curation, dedup, surprise, tiers
from chitta.policies.contradictions import ContradictionPair, detect_contradictions
from chitta.policies.curation import CurationReport
from chitta.policies.dedup import DedupReport

CHUNK = 512  # ops per Batch in passes whose ops need not land together
_RESOLVING_EDGES = ("Supersedes", "Contradicts")
_ID_FIELDS = ("id", "src", "dst", "source_memory_id")
_MEMORY_ID_OPS = frozenset(
    {
        "PutPayload",
        "UpdateState",
        "DeleteMemory",
        "UpdateMemoryContent",
        "DemoteMemory",
        "UpdateSparseCode",
        "UpdateSparseCodeU8",
        "UpdateResidualPQ",
        "ProvenanceEvent",
    }
)


def _chunks(group: Sequence[ops.Op], size: int = CHUNK) -> Iterator[Sequence[ops.Op]]:
    for lo in range(0, len(group), size):
        yield group[lo : lo + size]


def _edge(core: FieldCore, src: object, dst: object, edge: str) -> None:
    core.check_writable()
    a, b = core.live_id(src), core.live_id(dst)
    if a == b:
        raise InvalidArgument(f"a memory cannot be linked to itself by {edge}")
    check_legal(core, a, b, edge)
    core.commit(ops.AddAssocEdge(src=a, dst=b, edge=edge, at_ms=core.now_ms()))


def supersede(core: FieldCore, old: int, new: int) -> None:
    """``Field.supersede`` (its docstring is the reference)."""
    _edge(core, new, old, "Supersedes")


def contradict(core: FieldCore, a: int, b: int) -> None:
    """``Field.contradict`` (its docstring is the reference)."""
    _edge(core, a, b, "Contradicts")


def confirm(core: FieldCore, a: int, b: int) -> None:
    """``Field.confirm`` (its docstring is the reference)."""
    _edge(core, a, b, "Confirms")


def find_contradictions(core: FieldCore) -> list[ContradictionPair]:
    """``Field.detect_contradictions`` (its docstring is the reference)."""
    core.check_open()
    graph = core.graph

    def resolved(a: int, b: int) -> bool:
        return any(graph.has_edge(x, y, e) for e in _RESOLVING_EDGES for x, y in ((a, b), (b, a)))

    with core.lock:
        pairs = detect_contradictions(read.memories(core), resolved=resolved)
        if pairs and not core.read_only:
            log_contradictions(core, pairs)
        return pairs


CONFLICT_SCORE = "conflict_score"


def contradiction_subject(pair: ContradictionPair) -> str:
    """The KG subject a pair is logged under: ``contradiction:A-B`` (ids, A < B)."""
    return f"contradiction:{pair.a}-{pair.b}"


def log_contradictions(core: FieldCore, pairs: list[ContradictionPair]) -> int:
    """Log each pair the knowledge graph does not hold yet as the triplet
    (``contradiction:A-B``, ``conflict_score``, ``0.6`` / ``0.4``), in one atomic group;
    returns how many. Nothing without the knowledge organ."""
    kg: Any = core.registry.by_name.get("knowledge")
    if kg is None:
        return 0
    now = core.now_ms()
    new = [
        ops.AddTriplet(
            subject=contradiction_subject(p),
            predicate=CONFLICT_SCORE,
            object=f"{p.score:g}",
            valid_from_ms=now,
            source_memory_id=p.a,
            recorded_ms=now,
        )
        for p in pairs
        if not kg.query(contradiction_subject(p), CONFLICT_SCORE, f"{p.score:g}")
    ]
    core.commit_group(new)
    return len(new)


def demote_pass(core: FieldCore) -> int:
    """``Field.demote_pass`` (its docstring is the reference)."""
    core.check_writable()
    now = core.now_ms()
    moves: list[ops.Op] = []
    with core.lock:
        for m in read.memories(core):
            target = tiers.target_tier(
                now_ms=now,
                written_ms=m.written_ms,
                last_access_ms=m.last_access_ms,
                access_count=m.access_count,
                rate=surprise.effective_rate(m.decay_rate),
            )
            tier = tiers.demotion(m.tier, target)
            if tier is not None:
                moves.append(ops.DemoteMemory(id=m.id, tier=tier, at_ms=now))
    for chunk in _chunks(moves):
        core.commit_group(chunk)
    return len(moves)


def surprise_pass(core: FieldCore) -> int:
    """``Field.surprise_pass`` (its docstring is the reference)."""
    core.check_writable()
    encoder = core.encoder_organ.encoder
    if encoder is None:
        return 0
    now = core.now_ms()
    updates: list[ops.Op] = []
    with core.lock:
        rows: list[tuple[Memory, np.ndarray]] = []
        for m in read.memories(core):
            vec = core.index.vector(m.id)
            if vec is not None and vec.shape[0] == encoder.dim:
                rows.append((m, vec))
        for lo in range(0, len(rows), CHUNK):
            part = rows[lo : lo + CHUNK]
            scores = encoder.encode(np.stack([vec for _, vec in part]).astype(np.float32)).surprise
            for (m, _), s in zip(part, scores):
                rate = surprise.decay_multiplier(float(s))
                if surprise.needs_update(m.decay_rate, rate):
                    updates.append(ops.UpdateState(id=m.id, at_ms=now, decay_rate=rate))
    for chunk in _chunks(updates):
        core.commit_group(chunk)
    return len(updates)


def lifecycle_passes(core: FieldCore) -> dict[str, int]:
    return {"surprise_updated": surprise_pass(core), "demoted": demote_pass(core)}


def dedup_pass(core: FieldCore) -> DedupReport:
    """``Field.dedup_pass`` (its docstring is the reference)."""
    core.check_writable()
    now = core.now_ms()
    clusters = dedup.Clusters()
    with core.lock:
        live = list(read.memories(core))
        exact = 0
        for dups in dedup.exact_groups(live):
            for dup in dups[1:]:
                exact += clusters.join(dups[0], dup)
        by_id = {m.id: m for m in live}
        rows: list[tuple[Memory, np.ndarray]] = []
        for m in live:
            vec = core.index.vector(m.id)
            if vec is not None and m.id not in clusters.dropped:
                rows.append((m, vec))
        pairs: list[tuple[float, int, int]] = []
        if rows:
            vectors = np.stack([vec for _, vec in rows]).astype(np.float32)
            for i, j, c in dedup.near_pairs(vectors):
                x, y = rows[i][0], rows[j][0]
                if x.realm == y.realm and x.kind == y.kind:
                    f = dedup.f_merge(c, x.text, y.text)
                    if f < 0:
                        pairs.append((f, min(x.id, y.id), max(x.id, y.id)))
        near = 0
        for _, a, b in sorted(pairs):
            near += clusters.join(by_id[a], by_id[b])
    merges: list[tuple[int, int]] = []
    for keeper, dropped in clusters.groups():
        core.commit_group(dedup.merge_ops(keeper, dropped, now))
        merges.extend((keeper.id, d.id) for d in dropped)
    return DedupReport(examined=len(live), exact=exact, near=near, merges=tuple(sorted(merges)))


def curate(core: FieldCore, *, now: datetime | float | None = None) -> CurationReport:
    """``Field.curate`` (its docstring is the reference)."""
    core.check_writable()
    from chitta.field.puts import event_ms

    now_ms = core.now_ms() if now is None else event_ms(now)
    with core.lock:
        live = list(read.memories(core))
    examined = len(live)
    expired: list[ops.Op] = []
    bad = 0
    kept: list[Memory] = []
    for m in live:
        at, unusable = curation.expiry_ms(m)
        bad += unusable
        if at is not None and at <= now_ms:
            expired.append(ops.DeleteMemory(id=m.id, at_ms=now_ms))
        else:
            kept.append(m)
    for chunk in _chunks(expired):
        core.commit_group(chunk)
    folded = 0
    gone: set[int] = set()
    for group in dedup.exact_groups(kept):
        core.commit_group(dedup.merge_ops(group[0], group[1:], now_ms))
        folded += len(group) - 1
        gone.update(m.id for m in group[1:])
    decayed = 0
    pending: list[ops.Op] = []
    for m in kept:
        if m.id in gone:
            continue
        current = core.memories.get(m.id)  # survivors of a merge have new meta
        decay = [] if current is None else curation.decay_ops(current, now_ms)
        if decay:
            decayed += 1
            pending.extend(decay)
            if len(pending) >= CHUNK:
                core.commit_group(pending)
                pending = []
    core.commit_group(pending)
    return CurationReport(
        examined=examined,
        expired=len(expired),
        deduplicated=folded,
        decayed=decayed,
        bad_expiry=bad,
        at_ms=now_ms,
    )


def history(core: FieldCore, id: int) -> list[dict[str, Any]]:
    """``Field.history`` (its docstring is the reference)."""
    core.check_open()
    mid = v.memory_id(id)
    if not core.read_only:
        core.log.flush()
    out: list[dict[str, Any]] = []
    for rec in inspect.iter_records(core.path):
        if rec["op"] == "Batch":
            for item in rec["fields"]["ops"]:
                if _mentions(item.get("op"), item.get("fields", {}), mid):
                    out.append(
                        {
                            "seqno": rec["seqno"],
                            "instance": rec["instance"],
                            "op": item["op"],
                            "fields": item["fields"],
                            "batch": True,
                        }
                    )
        elif _mentions(rec["op"], rec["fields"], mid):
            out.append(
                {
                    "seqno": rec["seqno"],
                    "instance": rec["instance"],
                    "op": rec["op"],
                    "fields": rec["fields"],
                    "batch": False,
                }
            )
    if not out:
        raise NotFound(f"no memory with id {mid} in the log")
    return out


def _mentions(op: str | None, fields: dict[str, Any], mid: int) -> bool:
    if op is None:
        return False
    if op in _MEMORY_ID_OPS:
        return fields.get("id") == mid
    return any(fields.get(name) == mid for name in _ID_FIELDS[1:])
