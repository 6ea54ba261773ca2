"""Field puts: a memory's arguments checked and built into a ``PutPayload``,
and a group of puts completed with vectors, setup ops and sparse codes.

Functions over a :class:`~chitta.field.core.FieldCore`, called by the
:class:`~chitta.field.Field` facade, used by the write paths
(:mod:`chitta.field.write`). Nothing here appends or applies: it only builds
the ops a write commits.
"""

from __future__ import annotations

import math
from datetime import datetime

import msgspec
import numpy as np

from chitta import ops
from chitta.encode.field_encoding import code_ops
from chitta.errors import InvalidArgument
from chitta.field import sessions
from chitta.field.core import FieldCore
from chitta.ops import Op
from chitta.ops import checks as v
from chitta.policies.kinds import infer_kind
from chitta.recall.blas import one_thread

FUTURE_SLACK_MS = 86_400_000  # an event time up to a day ahead is clock skew, later an error
NO_TAGS: tuple[str, ...] = ()  # remember()'s default tags, compared by identity
# The default kind: a str of its own (not the interned literal), so an explicit
# kind="observation" is told apart; only the default is inferred (docs/KINDS.md).
DEFAULT_KIND = "".join(("observ", "ation"))  # noqa: FLY002
_MEMORY_KINDS = ops.MEMORY_KINDS
_PutPayload = ops.PutPayload


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


def put_op(
    core: FieldCore,
    mid: int,
    text: object,
    kind: object = DEFAULT_KIND,
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
    now = core.now_ms()
    created = now if at is None else event_ms(at)
    if created > now + FUTURE_SLACK_MS:
        raise InvalidArgument(
            f"at is {(created - now) / 86_400_000:.1f} days in the future; pass when it "
            "happened (a datetime or epoch seconds, not after now)"
        )
    op = _PutPayload(
        id=mid,
        text=v.text(text),
        kind=kind
        if kind.__class__ is str and kind in _MEMORY_KINDS
        else v.choice(kind, _MEMORY_KINDS, "kind"),
        created_ms=created,
        written_ms=now,
        realm=None if realm is None else v.name(realm, "realm"),
        session=None if session is None else v.name(session, "session"),
        source_tool=tool,
        harness=None if tool is None else infer_harness(tool),
        tags=NO_TAGS if tags is NO_TAGS else v.tags(tags),
        confidence=v.unit_float(confidence, "confidence"),
        embedding=None if embedding is None else v.embedding(embedding, vector_dim(core)),
        meta=None if meta is None else v.meta(meta),
    )
    if kind is DEFAULT_KIND and (inferred := infer_kind(op.text, op.realm, op.tags)) != op.kind:
        op = msgspec.structs.replace(op, kind=inferred)
    return op


def vector_dim(core: FieldCore) -> int | None:
    dim = core.memories.embedding_dim
    if dim is None:
        recorded = core.settings.get("embedder")
        if recorded is not None:
            dim = int(recorded["dim"])
    return dim


def with_vectors(core: FieldCore, puts: list[ops.PutPayload], *, codes: bool = True) -> list[Op]:
    """The puts, plus embeddings for those without one (when the field embeds),
    plus setup ops and (``codes``) sparse codes: the group to commit. Without
    ``codes`` the caller queues the ids with vectors (chitta/field/deferred_codes.py)."""
    need = [i for i, p in enumerate(puts) if p.embedding is None]
    from_embedder = False
    if need and core.encoding.enabled:
        vecs = sessions.embed(core, [puts[i].text for i in need], [puts[i].meta for i in need])
        dim = vector_dim(core)
        if dim is not None and vecs.shape[1] != dim:
            raise InvalidArgument(
                f"the embedder gives {vecs.shape[1]}-d vectors but this field holds {dim}-d"
            )
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
    setup = core.encoding.setup_ops(
        core.settings.get("embedder"),
        core.encoder_organ.encoder,
        dim,
        core.now_ms(),
        from_embedder=from_embedder,
    )
    group.extend(setup)
    group.extend(puts)
    if not codes:
        return group
    encoder = core.encoder_organ.encoder
    if encoder is None:  # created by the setup op in this very group
        from chitta.encode.sparse import SparseEncoder

        encoder = SparseEncoder.from_op(
            next(op for op in setup if isinstance(op, ops.UpdateSparseEncoder))
        )
    vectors = np.stack([np.frombuffer(p.embedding, "<f4") for p in with_vec])  # type: ignore[arg-type]
    with one_thread():  # agents share a few cores: see chitta/recall/blas.py
        group.extend(code_ops(encoder, [p.id for p in with_vec], vectors.astype(np.float32)))
    return group
