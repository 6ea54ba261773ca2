"""Field writes: remember, remember_many, remember_triplet, forget, update,
and the maintenance passes (write gate, encoder learning, re-encoding).

A mixin of :class:`chitta.field.Field`: every method validates first, then
builds typed ops, appends them (one record; several ops go as one atomic
Batch) and only then applies them to the organs.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
import numpy.typing as npt

from chitta import _core, ops
from chitta import _validate as v
from chitta.encode.field_encoding import code_ops
from chitta.encode.gloss import gloss_triplet, triplet_text
from chitta.errors import ClosedError, InvalidArgument, NotFound
from chitta.ops import Op, OpType
from chitta.put_columns import LABELS, LabelColumn, PutColumns
from chitta.recall.blas import one_thread

if TYPE_CHECKING:
    from chitta.field import Field

_BATCH = int(OpType.Batch)
_PUT = int(OpType.PutPayload)
_NO_TAGS: tuple[str, ...] = ()
_MEMORY_KINDS = ops.MEMORY_KINDS
_PutPayload = ops.PutPayload
_ENCODE = ops._ENCODER.encode  # ops.encode without its isinstance check (the op is ours)
_OBSERVATION = "observation"  # remember()'s defaults, compared by identity on the fast path
_ONE = 1.0
# remember()'s plain path queues its puts natively (_core.PutQueue); at this
# many the queue calls Field._apply_pending itself, so a handle that only
# writes stays bounded.
PENDING_LIMIT = 4096
_REMEMBER_KEYS = frozenset(
    {"text", "kind", "realm", "session", "source_tool", "tags", "confidence", "embedding", "meta", "at"}
)

STAGED_PRUNE_DAYS = 7.0  # staged memories never recalled for this long are pruned
WRITE_GATE_EVERY = 50  # embedded writes between write-gate passes
# Embedded writes between sparse-encoder learning steps: LEARN_EVERY while the
# field is small, then a fixed fraction of the field's vectors (1/16), so a
# growing field takes ~16 steps per doubling rather than one per 1,024 writes
# (a million-memory import: ~110 steps, not ~980). One step logs at most
# max_rows (256) atoms: 256 x 384 x 4 B = 384 KiB at dim 384.
LEARN_EVERY = 1024
LEARN_FRACTION = 16
MS_PER_DAY = 86_400_000


def infer_harness(source_tool: str | None) -> str | None:
    """The agent harness behind a tool name: "codex" for codex* tools, else "claude-code"."""
    if source_tool is None:
        return None
    return "codex" if source_tool.lower().startswith("codex") else "claude-code"


def event_ms(at: object) -> int:
    """An event time (datetime, or epoch seconds) as epoch milliseconds."""
    if isinstance(at, datetime):
        return int(at.timestamp() * 1000)  # naive datetimes are local time, as datetime.timestamp()
    if isinstance(at, bool) or not isinstance(at, (int, float)):
        raise InvalidArgument(f"at must be a datetime or epoch seconds, not {type(at).__name__}")
    if not math.isfinite(at) or not 0 <= at < 253402300800:  # 1970 .. 9999
        raise InvalidArgument(f"at must be epoch seconds between 1970 and 9999, got {at!r}")
    return int(at * 1000)


_LABEL_NONE = (None,)
_KIND_DEFAULT = (_OBSERVATION,)


def queued_columns(
    ids: npt.NDArray[np.uint64], ms: npt.NDArray[np.int64], arena: bytes, offsets: npt.NDArray[np.int64]
) -> PutColumns:
    """A run of plain puts (what ``_core.PutQueue.take`` gives: ids, times, the
    UTF-8 texts back to back and their n + 1 offsets) as PutColumns: every other
    field at its default, created_ms = written_ms = ms."""
    n = len(ids)
    zeros = np.zeros(n, np.uint32)
    return PutColumns(
        ids=ids,
        created_ms=ms,
        written_ms=ms,
        confidence=np.ones(n, np.float64),
        strength=np.ones(n, np.float64),
        labels={name: LabelColumn(zeros, _KIND_DEFAULT if name == "kind" else _LABEL_NONE) for name in LABELS},
        text_arena=arena,
        text_offsets=offsets,
        vector_rows=np.zeros(0, np.int64),
        vectors=np.zeros((0, 0), np.float32),
        extras={},
    )


def pending_columns(run: Sequence[tuple[int, str, int]]) -> PutColumns:
    """Plain puts ``(id, text, ms)`` as one PutColumns (queued_columns from tuples)."""
    n = len(run)
    mids, texts, times = zip(*run) if n else ((), (), ())
    encoded = [t.encode() for t in texts]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, n), out=offsets[1:])
    return queued_columns(np.array(mids, np.uint64), np.array(times, np.int64), b"".join(encoded), offsets)


def drainer(field: Field) -> Callable[[], None]:
    """What the PutQueue calls when PENDING_LIMIT puts wait: the field's
    ``_apply_pending``, held weakly (the queue must not keep its field alive)."""
    ref = weakref.ref(field)

    def drain() -> None:
        f = ref()
        if f is not None:
            f._apply_pending()

    return drain


class WriteMixin:
    """Write paths of Field (see chitta/field.py for the state they use)."""

    # ---- committing ---------------------------------------------------------------
    def _commit(self: Field, op: Op) -> int:
        code = int(op.op_type)
        payload = ops.encode(op)
        if len(payload) > _core.MAX_PAYLOAD:
            raise InvalidArgument(f"the change encodes to {len(payload)} bytes; split it (limit {_core.MAX_PAYLOAD})")
        seqno: int = self._log.append(code, payload)
        with self._lock:
            if self._pending_puts:
                self._apply_pending()
            if code == _BATCH:
                for inner in op.unpack():  # type: ignore[attr-defined]
                    self._route(inner)
            else:
                self._route(op)
        return seqno

    def _commit_group(self: Field, group: Sequence[Op]) -> None:
        if group:
            self._commit(group[0] if len(group) == 1 else ops.Batch.of(*group))

    def _new_id(self: Field) -> int:
        new_id: int = self._pending_puts.new_id()  # ChittaError once all 2**32 are used
        return new_id

    def _live_id(self: Field, id: object) -> int:
        mid = v.memory_id(id)
        if not self._memories.is_live(mid):
            raise NotFound(f"no memory with id {mid}")
        return mid

    # ---- building puts ------------------------------------------------------------
    def _put_op(
        self: Field,
        mid: int,
        text: object,
        kind: object = "observation",
        realm: object = None,
        session: object = None,
        source_tool: object = None,
        tags: object = (),
        confidence: object = 1.0,
        embedding: object = None,
        meta: object = None,
        at: object = None,
    ) -> ops.PutPayload:
        # Same checks, in the same order, as the v.* calls they stand for; the
        # common defaults (None, (), a known kind) skip the call (remember()
        # is the hot path: see benchmarks/bench_log.py).
        tool = None if source_tool is None else v.name(source_tool, "source_tool")
        now = self._now_ms()
        return _PutPayload(
            id=mid,
            text=v.text(text),
            kind=kind if kind.__class__ is str and kind in _MEMORY_KINDS else v.choice(kind, _MEMORY_KINDS, "kind"),
            created_ms=now if at is None else event_ms(at),
            written_ms=now,
            realm=None if realm is None else v.name(realm, "realm"),
            session=None if session is None else v.name(session, "session"),
            source_tool=tool,
            harness=None if tool is None else infer_harness(tool),
            tags=_NO_TAGS if tags is _NO_TAGS else v.tags(tags),
            confidence=v.unit_float(confidence, "confidence"),
            embedding=None if embedding is None else v.embedding(embedding, self._vector_dim()),
            meta=None if meta is None else v.meta(meta),
        )

    def _vector_dim(self: Field) -> int | None:
        dim = self._memories.embedding_dim
        if dim is None:
            recorded = self._settings.get("embedder")
            if recorded is not None:
                dim = int(recorded["dim"])
        return dim

    def _with_vectors(self: Field, puts: list[ops.PutPayload]) -> list[Op]:
        """The puts, plus embeddings for those without one (when the field embeds),
        plus setup ops and sparse codes: the group to commit."""
        need = [i for i, p in enumerate(puts) if p.embedding is None]
        from_embedder = False
        if need and self._encoding.enabled:
            vecs = self._encoding.embed([puts[i].text for i in need])
            dim = self._vector_dim()
            if dim is not None and vecs.shape[1] != dim:
                raise InvalidArgument(f"the embedder gives {vecs.shape[1]}-d vectors but this field holds {dim}-d")
            for j, i in enumerate(need):
                puts[i] = msgspec.structs.replace(puts[i], embedding=vecs[j].astype("<f4").tobytes())
            from_embedder = True
        with_vec = [p for p in puts if p.embedding is not None]
        if not with_vec:
            return list(puts)
        dims = {len(p.embedding) // 4 for p in with_vec}  # type: ignore[arg-type]
        if len(dims) != 1:
            raise InvalidArgument("embeddings in one group must share a dimension")
        dim = dims.pop()
        group: list[Op] = []
        setup = self._encoding.setup_ops(
            self._settings.get("embedder"), self._encoder_organ.encoder, dim, self._now_ms(),
            from_embedder=from_embedder,
        )
        group.extend(setup)
        group.extend(puts)
        encoder = self._encoder_organ.encoder
        if encoder is None:  # created by the setup op in this very group
            from chitta.encode.sparse import SparseEncoder

            encoder = SparseEncoder.from_op(next(op for op in setup if isinstance(op, ops.UpdateSparseEncoder)))
        vectors = np.stack([np.frombuffer(p.embedding, "<f4") for p in with_vec])  # type: ignore[arg-type]
        with one_thread():  # agents share a few cores: see chitta/recall/blas.py
            group.extend(code_ops(encoder, [p.id for p in with_vec], vectors.astype(np.float32)))
        return group

    # ---- the public write API ----------------------------------------------------------
    def remember(
        self: Field,
        text: str,
        *,
        kind: str = _OBSERVATION,
        realm: str | None = None,
        session: str | None = None,
        source_tool: str | None = None,
        tags: Iterable[str] = _NO_TAGS,
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
            kind is _OBSERVATION and realm is None and session is None and source_tool is None and tags is _NO_TAGS
            and confidence is _ONE and embedding is None and meta is None and at is None
        ):
            # The hot path (every argument but the text at its default; the field
            # open, writable, without an embedder): one native call checks the
            # text, takes the id and the time, encodes (the same bytes as
            # ops.encode: tests/unit/test_log_put.py), appends and queues the put.
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
        self._after_embedded_writes(1)
        return op.id

    def remember_many(self: Field, items: Iterable[str | Mapping[str, Any]]) -> list[int]:
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
        self._after_embedded_writes(sum(1 for op in group if isinstance(op, ops.UpdateSparseCode)))
        return [p.id for p in puts]

    def remember_triplet(
        self: Field,
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
        common = dict(realm=realm, session=session, source_tool=source_tool, tags=tags, confidence=confidence, at=at)
        triplet = self._put_op(0, triplet_text(*parts), kind, **common)  # type: ignore[arg-type]
        alias = self._put_op(0, gloss, "alias", **common)  # type: ignore[arg-type]
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
        self._after_embedded_writes(2 if self._encoding.enabled else 0)
        return t_id, a_id

    def forget(self: Field, id: int) -> None:
        """Soft-delete a memory: it is no longer returned, its history stays in the log."""
        self._check_writable()
        mid = self._live_id(id)
        self._commit(ops.DeleteMemory(id=mid, at_ms=self._now_ms()))

    def update(
        self: Field,
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

    # ---- maintenance ----------------------------------------------------------------
    def _after_embedded_writes(self: Field, n: int) -> None:
        if n <= 0:
            return
        before = self._embedded_writes
        self._embedded_writes += n
        if before // WRITE_GATE_EVERY != self._embedded_writes // WRITE_GATE_EVERY:
            self.write_gate_pass()
        self._since_learning += n
        if self._since_learning >= max(LEARN_EVERY, self._index.vector_count // LEARN_FRACTION):
            self._since_learning = 0
            self.learn_encoder()

    def write_gate_pass(self: Field) -> int:
        """Prune staged memories (never recalled) older than 7 days; returns how many.
        Runs by itself every 50 embedded writes."""
        self._check_writable()
        now = self._now_ms()
        cutoff = now - int(STAGED_PRUNE_DAYS * MS_PER_DAY)
        old = []
        # Oldest arrivals first, stopping at the first one still young: a pass costs
        # what it prunes, not the size of the field. (Arrivals from writers with
        # skewed clocks may wait behind a younger one for that skew.)
        for mid in self._index.staged_oldest_first():
            memory = self._memories.get(mid)
            # Age counts from when the memory was written, not from its event
            # time: imported history is not stale on arrival.
            if memory is None or memory.written_ms >= cutoff:
                break
            if memory.access_count == 0:
                old.append(mid)
        self._commit_group([ops.DeleteMemory(id=mid, at_ms=now) for mid in sorted(old)])
        return len(old)

    def learn_encoder(self: Field, *, max_vectors: int = 1024) -> int | None:
        """One learning step of the sparse encoder on the most recent vectors;
        logs the result (UpdateSparseEncoder) and returns the new version."""
        self._check_writable()
        encoder = self._encoder_organ.encoder
        if encoder is None:
            return None
        vectors = self._index.recent_vectors(max_vectors)
        if len(vectors) == 0:
            return encoder.version
        with one_thread():  # many small products: threads only wait for each other here
            step = encoder.learn(vectors, at_ms=self._now_ms())
        self._commit(step)
        return encoder.version

    def reencode(self: Field, *, batch: int = 512) -> int:
        """Re-encode the sparse codes older than the encoder's version. A new code
        is logged (UpdateSparseCode, atomic groups of ``batch``) only where the
        active features changed: a learning step moves a few hundred atoms, and
        most codes keep their features. Returns how many codes were rewritten."""
        self._check_writable()
        encoder = self._encoder_organ.encoder
        if encoder is None:
            return 0
        stale = [mid for mid in self._index.coded_ids() if (self._index.code_version(mid) or 0) < encoder.version]
        done = 0
        for lo in range(0, len(stale), batch):
            ids = [mid for mid in stale[lo : lo + batch] if self._index.vector(mid) is not None]
            if not ids:
                continue
            vectors = np.stack([self._index.vector(mid) for mid in ids])  # type: ignore[misc]
            changed = [
                op for op in code_ops(encoder, ids, vectors)
                if tuple(self._index.code_features(op.id)) != tuple(op.features)
            ]
            self._commit_group(changed)
            done += len(changed)
        return done

    def maintain(self: Field) -> dict[str, int | None]:
        """The periodic passes at once: write gate, one encoder learning step,
        re-encoding of stale codes, surprise decay rates and demotion tiers."""
        return {
            "pruned_staged": self.write_gate_pass(),
            "encoder_version": self.learn_encoder(),
            "reencoded": self.reencode(),
            **self._lifecycle_maintain(),  # surprise -> decay rates, then demotion tiers
        }
