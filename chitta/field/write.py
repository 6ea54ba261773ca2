"""Field writes: remember, remember_many, remember_triplet, forget, update.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade: every method validates first, then
builds typed ops (:mod:`chitta.field.puts`), appends them (one record; several
ops go as one atomic Batch: :mod:`chitta.field.commit`) and only then applies
them to the organs. Embedded writes count towards the maintenance passes
(:mod:`chitta.field.maintain`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import msgspec
import numpy as np

from chitta import ops
from chitta.encode.field_encoding import code_ops
from chitta.encode.gloss import gloss_triplet, triplet_text
from chitta.errors import ChittaIOError, ClosedError, InvalidArgument
from chitta.field import (
    dedup_write,
    deferred,
    deferred_codes,
    embed_worker,
    extract_write,
    ingest,
    maintain,
    sessions,
    vocab,
)
from chitta.field import provenance as prov
from chitta.field import puts as putops
from chitta.field.core import FieldCore
from chitta.field.puts import NO_TAGS
from chitta.ops import Op, OpType
from chitta.ops import checks as v
from chitta.policies.kinds import kind_from_text

_PUT = int(OpType.PutPayload)
_ENCODE = ops._ENCODER.encode  # ops.encode without its isinstance check (the op is ours)
_OBSERVATION = putops.DEFAULT_KIND  # remember()'s defaults, compared by identity
_ONE = 1.0
_REMEMBER_KEYS = frozenset(
    {
        "text",
        "kind",
        "realm",
        "session",
        "source_tool",
        "tags",
        "confidence",
        "embedding",
        "meta",
        "at",
        "artifacts",
        "provenance",
    }
)
_NO_REFS: tuple[str, ...] = ()


def remember(
    core: FieldCore,
    text: str,
    *,
    kind: str = _OBSERVATION,
    realm: str | None = None,
    session: str | None = None,
    source_tool: str | None = None,
    tags: Iterable[str] = NO_TAGS,
    confidence: float = _ONE,
    embedding: Any = None,
    meta: Mapping[str, Any] | None = None,
    at: datetime | float | None = None,
    artifacts: Iterable[str] = _NO_REFS,
    dedup: bool = False,
    provenance: str | None = None,
) -> int:
    """``Field.remember`` (its docstring is the reference)."""
    if dedup is not False:
        return _remember_dedup(
            core,
            text,
            kind,
            realm,
            session,
            source_tool,
            tags,
            confidence,
            embedding,
            meta,
            at,
            dedup,
            provenance,
        )
    if (
        kind is _OBSERVATION
        and realm is None
        and session is None
        and source_tool is None
        and tags is NO_TAGS
        and confidence is _ONE
        and embedding is None
        and meta is None
        and at is None
        and artifacts is _NO_REFS
        and provenance is None
        and not extract_write.enabled(core)
        and (type(text) is not str or kind_from_text(text) is None)  # no kind to infer
    ):
        # The hot path (every argument but the text at its default; the field
        # open, writable, without an embedder): one native call checks the
        # text, takes the id and the time, encodes (the same bytes as
        # ops.encode: tests/unit/log/test_log_put.py), appends and queues the put.
        put = core.fast_put
        if put is not None:
            try:
                mid = put(text)
                if mid is None:  # not a plain str of valid, non-blank UTF-8 within the limit
                    mid = put(v.text(text))  # Python's checks raise; a str subclass becomes a str
            except ChittaIOError as exc:
                lost = core.lost_error(exc)
                if lost is not None:
                    raise lost from exc
                raise
            if mid is not None:
                if core.backlog is not None:
                    embed_worker.wake()  # its vector comes from the background embedder
                return mid
    if core.closed:
        raise ClosedError("the field is closed")
    if core.read_only:
        raise InvalidArgument("the field was opened read_only")
    # An id taken by a call that then fails validation is simply never used.
    mid = core.new_id()
    op = putops.put_op(
        core, mid, text, kind, realm, session, source_tool, tags, confidence, embedding, meta, at
    )
    if artifacts is not _NO_REFS:  # refs to code (chitta/policies/code_trust.py)
        from chitta.policies.code_trust import check_refs

        op = msgspec.structs.replace(op, artifacts=check_refs(artifacts))
    if op.session is not None:  # encoded with its session's context (chitta/field/sessions.py)
        (op,) = sessions.with_contexts(core, [op])
    # who wrote it (chitta/field/provenance.py): the kind it may write, its assign event
    (op,), marks = prov.for_puts(core, [op], provenance, [kind is not _OBSERVATION])
    deferring = core.backlog is not None
    facts = extract_write.triplet_ops(core, [op])  # the memory's triplets, when extraction is on
    if op.embedding is None and (deferring or not core.encoding.enabled):
        # The plain path: one PutPayload, encoded here, through the pipeline's direct put
        # (its vector, when the field embeds, comes from the background: chitta/field/deferred.py).
        try:
            payload = _ENCODE(op)
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
            raise InvalidArgument(f"cannot encode PutPayload: {exc}") from exc
        if deferring and core.fast_put is None:
            deferred.record_embedder(core)  # a fresh field's first deferred write
        if marks or facts:  # the put, its provenance and its triplets as one atomic group
            core.commit_group([op, *marks, *facts])
        else:
            core.commit_put(op, payload)
        if deferring:
            deferred.queue(core, op.id)
        return op.id
    group = putops.with_vectors(core, [op])
    core.commit_group([*group, *marks, *facts])
    vocab.sync_words(core)  # its new words join the expansion table (chitta/field/vocab.py)
    maintain.after_embedded_writes(core, 1)
    return op.id


def _remember_dedup(
    core: FieldCore,
    text: str,
    kind: str,
    realm: str | None,
    session: str | None,
    source_tool: str | None,
    tags: Iterable[str],
    confidence: float,
    embedding: Any,
    meta: Mapping[str, Any] | None,
    at: datetime | float | None,
    dedup: object,
    provenance: str | None = None,
) -> int:
    """``remember(..., dedup=True)``: the live duplicate's id (reinforced), else a new memory."""
    if dedup is not True:
        raise InvalidArgument(f"dedup must be True or False, not {dedup!r}")
    core.check_writable()
    checked = v.text(text)
    where = None if realm is None else v.name(realm, "realm")
    found = dedup_write.existing(core, checked, where)
    if found is not None:
        return found
    return remember(
        core,
        text,
        kind=kind,
        realm=realm,
        session=session,
        source_tool=source_tool,
        tags=tags,
        confidence=confidence,
        embedding=embedding,
        meta=meta,
        at=at,
        provenance=provenance,
    )


def remember_many(core: FieldCore, items: Iterable[str | Mapping[str, Any]]) -> list[int]:
    """``Field.remember_many`` (its docstring is the reference)."""
    core.check_writable()
    if isinstance(items, (str, bytes)):
        raise InvalidArgument("remember_many takes a list of texts or dicts, not a single str")
    listed = ingest.as_list(items)
    plain = ingest.plain_puts(core, listed)  # texts and {text, embedding}: checked as one batch
    if plain is not None:
        return _remember_plain(core, plain)
    puts: list[ops.PutPayload] = []
    given: list[tuple[object, bool]] = []  # each item's provenance and whether it named a kind
    for item in listed:
        if isinstance(item, str):
            op = putops.put_op(core, 0, item)
            given.append((None, False))
        elif isinstance(item, Mapping):
            if set(item) - _REMEMBER_KEYS or "text" not in item:
                raise InvalidArgument(
                    f"each dict needs 'text' and only remember() arguments; got {sorted(item)}"
                )
            extra = {k: val for k, val in item.items() if k not in ("artifacts", "provenance")}
            op = putops.put_op(core, 0, **extra)
            given.append((item.get("provenance"), "kind" in item))
            if "artifacts" in item:
                from chitta.policies.code_trust import check_refs

                op = msgspec.structs.replace(op, artifacts=check_refs(item["artifacts"]))
        else:
            raise InvalidArgument(f"each item must be a str or a dict, not {type(item).__name__}")
        puts.append(op)
    if not puts:
        return []
    puts = [msgspec.structs.replace(p, id=core.new_id()) for p in puts]
    puts = sessions.with_contexts(core, puts)
    marks: list[Op] = []
    for i, (p, (named, explicit)) in enumerate(zip(list(puts), given)):
        (puts[i],), ev = prov.for_puts(core, [p], named, [explicit])
        marks.extend(ev)
    return _commit_puts(core, puts, marks)


def _remember_plain(core: FieldCore, plain: list[ops.PutPayload]) -> list[int]:
    """remember_many of plain rows: no session, provenance or tags to resolve."""
    if not plain:
        return []
    new_id = core.new_id
    puts = [msgspec.structs.replace(p, id=new_id()) for p in plain]
    return _commit_puts(core, puts, [])


def _commit_puts(core: FieldCore, puts: list[ops.PutPayload], marks: list[Op]) -> list[int]:
    """The puts with their vectors (and codes, inline or deferred), marks and triplets,
    committed as one atomic group."""
    # A large group of caller vectors gets its sparse codes from the handle's background
    # coder (chitta/field/deferred_codes.py): they cost fifty times the rest of such a
    # write. Vectors the field's embedder makes keep their codes inline: the model costs
    # more than the codes there; unless the field defers every code (the daemon's, whose
    # writer answers many callers per group: core.defer_codes).
    defer = core.code_backlog is not None and (
        core.defer_codes
        or (
            len(puts) >= deferred_codes.CODE_INLINE_MAX
            and not core.encoding.enabled
            and any(p.embedding is not None for p in puts)
        )
    )
    group = putops.with_vectors(core, puts, codes=not defer)
    core.commit_group([*group, *marks, *extract_write.triplet_ops(core, puts)])
    vocab.sync_words(core)
    if defer:
        coded = [p.id for p in group if type(p) is ops.PutPayload and p.embedding is not None]
        if coded:
            deferred_codes.queue(core, coded)
    else:
        maintain.after_embedded_writes(
            core,
            sum(isinstance(op, (ops.UpdateSparseCode, ops.UpdateSparseCodeU8)) for op in group),
        )
    return [p.id for p in puts]


def remember_triplet(
    core: FieldCore,
    subject: str,
    predicate: str,
    object: str,
    *,
    kind: str = "observation",
    realm: str | None = None,
    session: str | None = None,
    source_tool: str | None = None,
    tags: Iterable[str] = (),
    confidence: float = 1.0,
    at: datetime | float | None = None,
    provenance: str | None = None,
) -> tuple[int, int]:
    """``Field.remember_triplet`` (its docstring is the reference)."""
    core.check_writable()
    parts = [
        v.text(x, what)
        for x, what in ((subject, "subject"), (predicate, "predicate"), (object, "object"))
    ]
    gloss = gloss_triplet(*parts)
    common = {
        "realm": realm,
        "session": session,
        "source_tool": source_tool,
        "tags": tags,
        "confidence": confidence,
        "at": at,
    }
    triplet = putops.put_op(core, 0, triplet_text(*parts), kind, **common)
    alias = putops.put_op(core, 0, gloss, "alias", **common)
    t_id, a_id = core.new_id(), core.new_id()
    triplet = msgspec.structs.replace(triplet, id=t_id, meta={"triplet": parts})
    alias = msgspec.structs.replace(alias, id=a_id)
    (triplet, alias), marks = prov.for_puts(core, [triplet, alias], provenance, [True, True])
    if core.encoding.enabled:
        vec = core.encoding.embed([gloss])[0].astype("<f4").tobytes()
        triplet = msgspec.structs.replace(triplet, embedding=vec)
        alias = msgspec.structs.replace(alias, embedding=vec)
    group = putops.with_vectors(core, [triplet, alias])
    group.append(ops.AddAssocEdge(src=a_id, dst=t_id, edge="AliasOf", at_ms=core.now_ms()))
    core.commit_group([*group, *marks])
    vocab.sync_words(core)
    maintain.after_embedded_writes(core, 2 if core.encoding.enabled else 0)
    return t_id, a_id


def forget(core: FieldCore, id: int) -> None:
    """``Field.forget`` (its docstring is the reference)."""
    core.check_writable()
    mid = core.live_id(id)
    core.commit(ops.DeleteMemory(id=mid, at_ms=core.now_ms()))


def update(
    core: FieldCore,
    id: int,
    *,
    text: str | None = None,
    embedding: Any = None,
    tags: Iterable[str] | None = None,
    meta: Mapping[str, Any] | None = None,
    confidence: float | None = None,
    strength: float | None = None,
) -> None:
    """``Field.update`` (its docstring is the reference)."""
    core.check_writable()
    mid = core.live_id(id)
    now = core.now_ms()
    group: list[Op] = []
    new_text = None if text is None else v.text(text)
    vec = v.embedding(embedding, putops.vector_dim(core))
    if (
        vec is None
        and new_text is not None
        and core.encoding.enabled
        and core.index.vector(mid) is not None
    ):
        vec = core.encoding.embed([new_text])[0].astype("<f4").tobytes()
    if any(x is not None for x in (new_text, vec, tags, meta)):
        group.append(
            ops.UpdateMemoryContent(
                id=mid,
                at_ms=now,
                text=new_text,
                embedding=vec,
                tags=None if tags is None else v.tags(tags),
                meta=v.meta(meta),
            )
        )
    if confidence is not None or strength is not None:
        group.append(
            ops.UpdateState(
                id=mid,
                at_ms=now,
                confidence=None if confidence is None else v.unit_float(confidence, "confidence"),
                strength=None if strength is None else v.non_negative_float(strength, "strength"),
            )
        )
    if not group:
        raise InvalidArgument(
            "update() needs at least one of text, embedding, tags, meta, confidence, strength"
        )
    if vec is not None and core.encoder_organ.encoder is not None:
        group.extend(
            code_ops(core.encoder_organ.encoder, [mid], np.frombuffer(vec, "<f4")[None, :])
        )
    if new_text is not None:  # the new text's facts replace the old text's (D-051)
        group.extend(extract_write.update_ops(core, mid, new_text, now))
    core.commit_group(group)
    if new_text is not None:
        vocab.sync_words(core)
