"""Field writes: remember, remember_many, remember_triplet, forget, update.

A mixin of :class:`chitta.field.Field`: every method validates first, then
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

from chitta.ops import checks as v
from chitta import ops
from chitta.encode.field_encoding import code_ops
from chitta.encode.gloss import gloss_triplet, triplet_text
from chitta.errors import ClosedError, InvalidArgument
from chitta.field.puts import NO_TAGS
from chitta.field.state import FieldState
from chitta.ops import Op, OpType

_PUT = int(OpType.PutPayload)
_ENCODE = ops._ENCODER.encode  # ops.encode without its isinstance check (the op is ours)
_OBSERVATION = "observation"  # remember()'s defaults, compared by identity on the fast path
_ONE = 1.0
_REMEMBER_KEYS = frozenset(
    {"text", "kind", "realm", "session", "source_tool", "tags", "confidence", "embedding", "meta", "at"}
)


class WriteMixin(FieldState):
    """Write paths of Field (the state they use: chitta/field/state.py)."""

    # ---- the public write API ----------------------------------------------------------
    def remember(
        self,
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
    ) -> int:
        """Store a memory; returns its id (stable, unique across instances).

        ``at``: when it happened (datetime or epoch seconds; default now).
        ``embedding``: your own vector; otherwise the field's embedder makes one
        (unless opened with ``embedder=None``). The id is returned once the op is
        in the OS (``durability="flush"``) or on disk (``"fsync"``); with
        ``"buffered"`` once it is in this process.
        """
        if (
            kind is _OBSERVATION and realm is None and session is None and source_tool is None and tags is NO_TAGS
            and confidence is _ONE and embedding is None and meta is None and at is None
        ):
            # The hot path (every argument but the text at its default; the field
            # open, writable, without an embedder): one native call checks the
            # text, takes the id and the time, encodes (the same bytes as
            # ops.encode: tests/unit/log/test_log_put.py), appends and queues the put.
            put = self._fast_put
            if put is not None:
                mid = put(text)
                if mid is None:  # not a plain str of valid, non-blank UTF-8 within the limit
                    mid = put(v.text(text))  # Python's checks raise; a str subclass becomes a str
                if mid is not None:
                    return mid
        if self._closed:
            raise ClosedError("the field is closed")
        if self._read_only:
            raise InvalidArgument("the field was opened read_only")
        # An id taken by a call that then fails validation is simply never used.
        mid = self._new_id()
        op = self._put_op(mid, text, kind, realm, session, source_tool, tags, confidence, embedding, meta, at)
        if op.embedding is None and not self._encoding.enabled:
            # The plain path: one PutPayload, encoded and routed directly.
            try:
                payload = _ENCODE(op)
            except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
                raise InvalidArgument(f"cannot encode PutPayload: {exc}") from exc
            self._log.append(_PUT, payload)
            with self._lock:
                if self._pending_puts:
                    self._apply_pending()  # keep this handle's puts in call order
                for apply in self._put_appliers:
                    apply(op)
                self._applied += 1
            return op.id
        group = self._with_vectors([op])
        self._commit_group(group)
        self._vocab_sync()  # its new words join the expansion table (chitta/field/vocab.py)
        self._after_embedded_writes(1)
        return op.id

    def remember_many(self, items: Iterable[str | Mapping[str, Any]]) -> list[int]:
        """Store several memories as one atomic group: after a crash either all
        of them exist or none. Each item is a text or a dict of ``remember`` arguments.
        Texts are embedded in one batch."""
        self._check_writable()
        if isinstance(items, (str, bytes)):
            raise InvalidArgument("remember_many takes a list of texts or dicts, not a single str")
        puts: list[ops.PutPayload] = []
        for item in items:
            if isinstance(item, str):
                op = self._put_op(0, item)
            elif isinstance(item, Mapping):
                if set(item) - _REMEMBER_KEYS or "text" not in item:
                    raise InvalidArgument(f"each dict needs 'text' and only remember() arguments; got {sorted(item)}")
                op = self._put_op(0, **item)
            else:
                raise InvalidArgument(f"each item must be a str or a dict, not {type(item).__name__}")
            puts.append(op)
        if not puts:
            return []
        puts = [msgspec.structs.replace(p, id=self._new_id()) for p in puts]
        group = self._with_vectors(puts)
        self._commit_group(group)
        self._vocab_sync()
        self._after_embedded_writes(sum(1 for op in group if isinstance(op, ops.UpdateSparseCode)))
        return [p.id for p in puts]

    def remember_triplet(
        self,
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
    ) -> tuple[int, int]:
        """Store a fact in triplet form, plus its plain-English twin.

        The triplet memory keeps the canonical ``subject | predicate | object``;
        a ``kind="alias"`` memory carries the English gloss (which is what gets
        embedded for both, so prose questions find structured facts), linked to
        it by an ``AliasOf`` edge. All in one atomic group. Returns
        ``(triplet_id, alias_id)``.
        """
        self._check_writable()
        parts = [v.text(x, what) for x, what in ((subject, "subject"), (predicate, "predicate"), (object, "object"))]
        gloss = gloss_triplet(*parts)
        common = {
            "realm": realm, "session": session, "source_tool": source_tool, "tags": tags, "confidence": confidence,
            "at": at,
        }
        triplet = self._put_op(0, triplet_text(*parts), kind, **common)
        alias = self._put_op(0, gloss, "alias", **common)
        t_id, a_id = self._new_id(), self._new_id()
        triplet = msgspec.structs.replace(triplet, id=t_id, meta={"triplet": parts})
        alias = msgspec.structs.replace(alias, id=a_id)
        if self._encoding.enabled:
            vec = self._encoding.embed([gloss])[0].astype("<f4").tobytes()
            triplet = msgspec.structs.replace(triplet, embedding=vec)
            alias = msgspec.structs.replace(alias, embedding=vec)
        group = self._with_vectors([triplet, alias])
        group.append(ops.AddAssocEdge(src=a_id, dst=t_id, edge="AliasOf", at_ms=self._now_ms()))
        self._commit_group(group)
        self._vocab_sync()
        self._after_embedded_writes(2 if self._encoding.enabled else 0)
        return t_id, a_id

    def forget(self, id: int) -> None:
        """Soft-delete a memory: it is no longer returned, its history stays in the log."""
        self._check_writable()
        mid = self._live_id(id)
        self._commit(ops.DeleteMemory(id=mid, at_ms=self._now_ms()))

    def update(
        self,
        id: int,
        *,
        text: str | None = None,
        embedding: Any = None,
        tags: Iterable[str] | None = None,
        meta: Mapping[str, Any] | None = None,
        confidence: float | None = None,
        strength: float | None = None,
    ) -> None:
        """Change a memory's content (text, embedding, tags, meta) and/or state
        (confidence, strength). All changes land as one atomic group; a new text
        is re-embedded (and re-coded) when the field embeds and no embedding is given."""
        self._check_writable()
        mid = self._live_id(id)
        now = self._now_ms()
        group: list[Op] = []
        new_text = None if text is None else v.text(text)
        vec = v.embedding(embedding, self._vector_dim())
        if vec is None and new_text is not None and self._encoding.enabled and self._index.vector(mid) is not None:
            vec = self._encoding.embed([new_text])[0].astype("<f4").tobytes()
        if any(x is not None for x in (new_text, vec, tags, meta)):
            group.append(
                ops.UpdateMemoryContent(
                    id=mid, at_ms=now, text=new_text, embedding=vec,
                    tags=None if tags is None else v.tags(tags), meta=v.meta(meta),
                )
            )
        if confidence is not None or strength is not None:
            group.append(
                ops.UpdateState(
                    id=mid, at_ms=now,
                    confidence=None if confidence is None else v.unit_float(confidence, "confidence"),
                    strength=None if strength is None else v.non_negative_float(strength, "strength"),
                )
            )
        if not group:
            raise InvalidArgument("update() needs at least one of text, embedding, tags, meta, confidence, strength")
        if vec is not None and self._encoder_organ.encoder is not None:
            group.extend(code_ops(self._encoder_organ.encoder, [mid], np.frombuffer(vec, "<f4")[None, :]))
        self._commit_group(group)
        if new_text is not None:
            self._vocab_sync()
