"""Recall context: text a memory is *found by* that is not its text.

A turn of a conversation ("Melanie: Yes, last Tuesday!") is often found
through the turn before it ("Caroline: When did you run the charity
race?"). A writer may put such surrounding text into the memory's
``meta["recall_context"]`` (a str): the keyword lane (BM25) then indexes the
memory as its context followed by its own text, weighted (``keyword_document``),
while the memory's text, rendering and everything else stay the memory alone. ``chitta.field.importers.import_conversation``
sets it to the earlier turns of the same session (measured on LoCoMo:
see docs/DECISIONS.md D-021).

A memory may also name who said it: ``meta["speaker"]`` (a str, set by
``import_conversation`` to the turn's speaker). A query that names exactly
one of a field's speakers ranks that speaker's memories higher
(:func:`chitta.recall.query.named_speaker`, ``RecallSettings.speaker_prior``):
"What did Caroline research?" is about what Caroline said.

Nothing is persisted beyond the memory's own ``meta``; the keyword index is
derived state, rebuilt from it on open. ``Field.update`` with new ``meta``
re-reads the context (new text keeps it); a memory written without a
context gets one by an update only when the same update also gives its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONTEXT_KEY = "recall_context"
MAX_CONTEXT_CHARS = 8192  # a longer context is cut to its last 8192 characters
OWN_TEXT_WEIGHT = 3  # the memory's own text counts 3 times against its context (LoCoMo dev, D-021)


SPEAKER_KEY = "speaker"
MAX_SPEAKER_CHARS = 200  # a longer name is not a speaker name: ignored


def speaker_of(meta: Mapping[str, Any] | None) -> str | None:
    """Who said the memory (None when absent, empty, not a str or too long)."""
    if not meta:
        return None
    who = meta.get(SPEAKER_KEY)
    if not isinstance(who, str):
        return None
    who = who.strip()
    return who if who and len(who) <= MAX_SPEAKER_CHARS else None


def context_of(meta: Mapping[str, Any] | None) -> str | None:
    """The memory's recall context (None when absent, empty or not a str)."""
    if not meta:
        return None
    ctx = meta.get(CONTEXT_KEY)
    if not isinstance(ctx, str) or not ctx.strip():
        return None
    return ctx[-MAX_CONTEXT_CHARS:]


def keyword_document(text: str, context: str | None) -> str:
    """What the keyword lane indexes for a memory: its context, then its text
    ``OWN_TEXT_WEIGHT`` times (so a term said in the memory itself weighs more
    in BM25 than one only in its context; a cheap form of field weighting)."""
    return "\n".join([context, *[text] * OWN_TEXT_WEIGHT]) if context else text
