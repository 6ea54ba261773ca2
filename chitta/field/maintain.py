"""Field maintenance: the write gate, sparse-encoder learning, re-encoding of
stale codes, re-embedding with a new embedder, and ``maintain()`` running the
periodic passes at once.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade. Every pass builds its ops from the
organs' state and commits them through the log (``_commit``/``_commit_group``),
so a reopened field replays to the same state.
"""

from __future__ import annotations

import numpy as np

from chitta import ops
from chitta.encode.field_encoding import code_ops
from chitta.errors import InvalidArgument
from chitta.field import lifecycle, near_dedup, sessions
from chitta.field.core import FieldCore
from chitta.ops import Op
from chitta.policies import write_gate
from chitta.recall.blas import one_thread

STAGED_PRUNE_DAYS = (
    write_gate.STAGED_PRUNE_DAYS
)  # the default prune age (setting staged_prune_days)
WRITE_GATE_EVERY = 50  # embedded writes between write-gate passes
# Embedded writes between sparse-encoder learning steps: LEARN_EVERY while the
# field is small, then a fixed fraction of the field's vectors (1/16), so a
# growing field takes ~16 steps per doubling rather than one per 1,024 writes
# (a million-memory import: ~110 steps, not ~980). One step logs at most
# max_rows (256) atoms: 256 x 384 x 4 B = 384 KiB at dim 384.
LEARN_EVERY = 1024
LEARN_FRACTION = 16
MS_PER_DAY = 86_400_000
# The field's own maintenance passes and their cadences in seconds (maintain(); the setting
# maintenance_every_s overrides one). Near duplicates: the incremental pass
# (field/near_dedup.py); dedup_pass() compares all pairs on demand.
FIELD_PASSES: dict[str, float] = {"field.curate": 3600.0, "field.near_dedup": near_dedup.EVERY_S}


def after_embedded_writes(core: FieldCore, n: int) -> None:
    if n <= 0:
        return
    before = core.embedded_writes
    core.embedded_writes += n
    if before // WRITE_GATE_EVERY != core.embedded_writes // WRITE_GATE_EVERY:
        write_gate_pass(core)
    core.since_learning += n
    if core.since_learning >= max(LEARN_EVERY, core.index.vector_count // LEARN_FRACTION):
        if core.learn_async:  # a server: off this writer's thread (field/learn_async.py)
            from chitta.field import learn_async

            if learn_async.start(core):  # else due still: retried with the next writes
                core.since_learning = 0
        else:
            core.since_learning = 0
            learn_encoder(core)


def write_gate_pass(core: FieldCore) -> int:
    """``Field.write_gate_pass`` (its docstring is the reference)."""
    core.check_writable()
    days = write_gate.prune_days(core.settings.get("staged_prune_days"))
    if days <= 0:
        return 0
    now = core.now_ms()
    cutoff = now - int(days * MS_PER_DAY)
    old = []
    # Oldest arrivals first, stopping at the first one still young: a pass costs
    # what it prunes (and the protected old ones it passes), not the size of the
    # field. (Arrivals from writers with skewed clocks may wait behind a younger
    # one for that skew.)
    for mid in core.index.staged_oldest_first():
        memory = core.memories.get(mid)
        # Age counts from when the memory was written, not from its event
        # time: imported history is not stale on arrival.
        if memory is None or memory.written_ms >= cutoff:
            break
        if memory.access_count == 0 and write_gate.protected(memory) is None:
            old.append(memory)
    group: list[Op] = []
    for memory in sorted(old, key=lambda m: m.id):
        group.extend(write_gate.prune_ops(memory, now))  # a soft delete: Field.pruned() lists it
    core.commit_group(group)
    return len(old)


def learn_encoder(core: FieldCore, *, max_vectors: int = 1024) -> int | None:
    """``Field.learn_encoder`` (its docstring is the reference)."""
    core.check_writable()
    encoder = core.encoder_organ.encoder
    if encoder is None:
        return None
    vectors = core.index.recent_vectors(max_vectors)
    if len(vectors) == 0:
        return encoder.version
    with one_thread():  # many small products: threads only wait for each other here
        step = encoder.learn(vectors, at_ms=core.now_ms())
    core.commit(step)
    return encoder.version


def reencode(core: FieldCore, *, batch: int = 512) -> int:
    """``Field.reencode`` (its docstring is the reference)."""
    core.check_writable()
    encoder = core.encoder_organ.encoder
    if encoder is None:
        return 0
    stale = [
        mid
        for mid in core.index.coded_ids()
        if (core.index.code_version(mid) or 0) < encoder.version
    ]
    done = 0
    for lo in range(0, len(stale), batch):
        ids = [mid for mid in stale[lo : lo + batch] if core.index.vector(mid) is not None]
        if not ids:
            continue
        vectors = np.stack([core.index.vector(mid) for mid in ids])  # type: ignore[misc]
        changed = [
            op
            for op in code_ops(encoder, ids, vectors)
            if tuple(core.index.code_features(op.id)) != tuple(op.features)
        ]
        core.commit_group(changed)
        done += len(changed)
    return done


def maintain(core: FieldCore) -> dict[str, int | None]:
    """``Field.maintain`` (its docstring is the reference)."""
    return {
        "pruned_staged": write_gate_pass(core),
        "encoder_version": learn_encoder(core),
        "reencoded": reencode(core),
        **lifecycle.lifecycle_passes(core),  # surprise -> decay rates, then demotion tiers
        **field_passes(core),
        **organ_passes(core),
    }


def field_passes(core: FieldCore) -> dict[str, int | None]:
    """The field's own passes with a cadence (``FIELD_PASSES``), run like the organs'
    (setting ``maintenance_every_s`` replaces a cadence): curation and near-duplicate
    merging hourly."""
    now = core.now_ms()
    out: dict[str, int | None] = {}

    def due(key: str) -> bool:
        last = core.maintenance_runs.get(key)
        if last is None or now - last >= _every_s(core, key, FIELD_PASSES[key]) * 1000:
            core.maintenance_runs[key] = now
            return True
        return False

    if due("field.near_dedup") and core.index.vector_count:
        out["near_deduplicated"] = near_dedup.near_dedup_pass(core)
    if due("field.curate"):
        report = lifecycle.curate(core)
        out.update(
            curated_expired=report.expired,
            curated_deduplicated=report.deduplicated,
            curated_decayed=report.decayed,
        )
    return out


def organ_passes(core: FieldCore) -> dict[str, int | None]:
    """Every maintenance pass an organ declares (``Organ.maintenance``) whose cadence has
    elapsed since this handle last ran it (by the field's clock; the first call runs
    them all). Keys are ``"<organ>.<pass>"``; values what each pass reports."""
    from chitta.field.calls import CallContext

    now = core.now_ms()
    out: dict[str, int | None] = {}
    for organ in core.organs:
        for task in organ.maintenance:
            key = f"{organ.name}.{task.name}"
            last = core.maintenance_runs.get(key)
            if last is not None and now - last < _every_s(core, key, task.every_s) * 1000:
                continue
            core.maintenance_runs[key] = now
            out[key] = int(task.run(organ, CallContext(core)))
    return out


def _every_s(core: FieldCore, key: str, default: float) -> float:
    """A pass's cadence: the setting ``maintenance_every_s[key]`` when set, else its own."""
    table = core.settings.get("maintenance_every_s")
    value = table.get(key) if isinstance(table, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return default
    return float(value)


def reembed(core: FieldCore) -> None:
    """Re-embed every live memory with this handle's embedder (progress shown),
    logging the new vectors, codes and the embedder record."""
    from rich.progress import Progress

    if not core.encoding.enabled:
        raise InvalidArgument("reembed=True needs an embedder")
    ids = [mid for mid in core.memories.live_ids()]
    embedder = core.encoding.embedder
    assert embedder is not None
    now = core.now_ms()
    from chitta.encode.sparse import SparseEncoder

    setup: list[Op] = [
        ops.ConfigureField(
            key="embedder",
            value={"name": embedder.name, "family": embedder.family, "dim": embedder.dim},
            at_ms=now,
        )
    ]
    encoder = core.encoder_organ.encoder
    if encoder is None or encoder.dim != embedder.dim:
        setup.append(SparseEncoder(embedder.dim).init_op(at_ms=now))
    core.commit_group(setup)
    encoder = core.encoder_organ.encoder
    assert encoder is not None

    with Progress(transient=True) as progress:
        task = progress.add_task("re-embedding", total=len(ids))
        for lo in range(0, len(ids), 256):
            chunk = ids[lo : lo + 256]
            mems = [m for mid in chunk if (m := core.memories.get(mid)) is not None]
            chunk = [m.id for m in mems]
            # with each memory's session context (chitta/field/sessions.py)
            vecs = sessions.embed(core, [m.text for m in mems], [m.meta for m in mems])
            group: list[Op] = [
                ops.UpdateMemoryContent(
                    id=mid, at_ms=now, embedding=vecs[j].astype("<f4").tobytes()
                )
                for j, mid in enumerate(chunk)
            ]
            group.extend(code_ops(encoder, chunk, vecs))
            core.commit_group(group)
            progress.advance(task, len(chunk))
