"""Session-aware encoding: a memory written with ``session=`` is encoded with the
memories written to that session just before it.

The rule (one, for every write path: ``remember``, ``remember_many``, MCP, the
daemon, ``import_conversation``): the *session context* of a memory is the texts
of the memories of its session written before it, as this handle has seen them:
the last ones written to that session (log order, whatever their event dates): seeded
from the field's memories of that session (by write time, then id) the first time the
handle meets it and after ``refresh`` brought other writers' ops, then kept with the handle's own writes.
So a reopened handle, another process or the daemon continuing a session records the
context one handle writing it all would (tests/unit/field/test_session_reopen.py). Then

- its keyword context is the last ``KEYWORD_CONTEXT_TURNS`` (2) of them, one per
  line, in ``meta["recall_context"]`` (:mod:`chitta.recall.context`: BM25 indexes
  the memory by it, its own text weighted 3x; LoCoMo dev, D-021);
- its embedding context is the last ``EMBED_CONTEXT_TURNS`` (1), in
  ``meta["embed_context"]`` (when the field embeds): the vector embeds it, a newline, then the
  text (a reply such as "Yes, last Tuesday!" means little alone). An embedder with
  ``recall_turn_view`` gets the normalised sum of that and the text alone (D-024).

A session write in the transcript form ``"Name: what was said"`` (one to three
capitalised words, a colon, a space; not a label such as "Note" or "TODO":
``NOT_SPEAKERS``) is also taken as said by Name: ``meta["speaker"]``, which the
speaker prior reads (:mod:`chitta.recall.context`), as ``import_conversation`` sets it.

All of them are recorded in the memory's own ``PutPayload`` meta, so replay (and the
background embedder, and an open embedding what a crash left) need no
re-derivation. A context the caller's ``meta`` already holds wins. Stored text,
rendering and ``get`` stay the memory alone.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.field.core import FieldCore
from chitta.recall.context import CONTEXT_KEY, MAX_CONTEXT_CHARS, SPEAKER_KEY

EMBED_KEY = "embed_context"
_SPEAKER = re.compile(r"([A-Z][\w'.-]{0,40}(?: [A-Z][\w'.-]{0,40}){0,2}): \S")
NOT_SPEAKERS = frozenset(
    [
        "note",
        "notes",
        "todo",
        "fixme",
        "warning",
        "warn",
        "error",
        "errors",
        "info",
        "debug",
        "update",
        "summary",
        "question",
        "answer",
        "q",
        "a",
        "fact",
        "idea",
        "tip",
        "hint",
        "reminder",
        "decision",
        "context",
        "reason",
        "result",
        "results",
        "status",
        "step",
        "task",
        "problem",
        "solution",
        "fix",
        "bug",
        "issue",
        "example",
        "important",
        "nb",
        "ps",
        "re",
        "fyi",
        "tldr",
        "source",
        "see",
        "edit",
        "edited",
        "date",
        "time",
        "topic",
        "goal",
        "plan",
    ]
)
KEYWORD_CONTEXT_TURNS = 2
EMBED_CONTEXT_TURNS = 1
MAX_EMBED_CHARS = 1024  # the model reads ~128 tokens: a longer context would crowd out the text
MAX_SESSIONS = 4096  # sessions a handle keeps contexts for (least recently written dropped)


def _table(core: FieldCore) -> OrderedDict[str, deque[str]]:
    table: OrderedDict[str, deque[str]] | None = getattr(core, "session_texts", None)
    if table is None:
        table = OrderedDict()
        core.session_texts = table  # type: ignore[attr-defined]
    return table


def _earlier(core: FieldCore, session: str) -> deque[str]:
    """The session's last texts (seeded from the field the first time)."""
    table = _table(core)
    texts = table.get(session)
    if texts is None:
        texts = deque(maxlen=KEYWORD_CONTEXT_TURNS)
        with core.lock:
            members = core.index.allowed(session=session)
            if members is not None and len(members):
                # the last ones written (write time, then id), whatever their event dates:
                # what a handle that wrote them all holds (a backdated note is no exception)
                mems = [m for m in core.memories.memories(members.tolist()) if m is not None]
                mems.sort(key=lambda m: (m.written_ms, m.id))
                texts.extend(m.text for m in mems[-KEYWORD_CONTEXT_TURNS:])
        table[session] = texts
        if len(table) > MAX_SESSIONS:
            table.popitem(last=False)
    else:
        table.move_to_end(session)
    return texts


def forget_table(core: FieldCore) -> None:
    """Drop the handle's session table: other writers' memories arrived (``refresh``), so each
    session is seeded from the field again when next written."""
    table: OrderedDict[str, deque[str]] | None = getattr(core, "session_texts", None)
    if table:
        table.clear()


def with_contexts(core: FieldCore, puts: list[ops.PutPayload]) -> list[ops.PutPayload]:
    """The puts (validated, about to be committed in this order) with their session
    contexts in meta; the session table then knows them."""
    out = []
    for op in puts:
        if op.session is None:
            out.append(op)
            continue
        earlier = _earlier(core, op.session)
        own = op.meta or {}
        add: dict[str, Any] = {}
        if SPEAKER_KEY not in own and (who := speaker_of_text(op.text)) is not None:
            add[SPEAKER_KEY] = who
        if earlier:
            if CONTEXT_KEY not in own:
                add[CONTEXT_KEY] = "\n".join(earlier)[-MAX_CONTEXT_CHARS:]
            if EMBED_KEY not in own and core.encoding.enabled:  # none without a model
                add[EMBED_KEY] = "\n".join(list(earlier)[-EMBED_CONTEXT_TURNS:])[-MAX_EMBED_CHARS:]
        if add:
            op = msgspec.structs.replace(op, meta={**add, **own})
        earlier.append(op.text)
        out.append(op)
    return out


def speaker_of_text(text: str) -> str | None:
    """Name, for a text of the form ``"Name: ..."`` (module docstring), else None."""
    m = _SPEAKER.match(text)
    if m is None or m.group(1).casefold() in NOT_SPEAKERS:
        return None
    return m.group(1)


def embed_input(text: str, meta: Any) -> str:
    """What a memory's vector embeds: its embedding context, a newline, its text."""
    ctx = meta.get(EMBED_KEY) if isinstance(meta, dict) else None
    return f"{ctx}\n{text}" if isinstance(ctx, str) and ctx.strip() else text


def embed(core: FieldCore, texts: Sequence[str], metas: Sequence[Any]) -> npt.NDArray[np.float32]:
    """The vectors of memories (texts and metas): each its :func:`embed_input`; with an
    embedder that asks for it (``recall_turn_view``), summed with the text alone."""
    inputs = [embed_input(t, m) for t, m in zip(texts, metas)]
    vecs = core.encoding.embed(inputs)
    if getattr(core.encoding.embedder, "recall_turn_view", False) is not True:
        return vecs
    alone = [i for i, (t, x) in enumerate(zip(texts, inputs)) if t != x]
    if not alone:
        return vecs
    summed = vecs.astype(np.float64)
    summed[alone] += core.encoding.embed([texts[i] for i in alone])
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = np.divide(
        summed, norms, out=np.zeros_like(summed), where=norms > 0
    ).astype(np.float32)
    return out
