"""Import a multi-session conversation: one memory per turn.

The recommended way to store a dialogue (measured on LoCoMo, see
docs/DECISIONS.md D-021 and D-024):

- each turn is one memory whose text is ``"Speaker: text"`` (the speaker's
  name is then a keyword like any other);
- its event time ``at`` is the turn's own time, else its session's date (a
  query naming a date favours the turns of that date: ``RecallSettings.time_prior``);
- its ``session`` is the session's name, so recall can filter by it;
- its vector embeds the turn *with the ``context_turns`` turns before it in
  the same session* (one text, newline-joined): a reply such as "Yes, last
  Tuesday!" means little alone. The stored and keyword-indexed text stays the
  turn alone, so rendering shows exactly what was said. With ``turn_view=True``
  the vector is the normalised sum of both views, the turn with its context and
  the turn alone (twice the embedding work; it pays with a strong embedder
  given dense weight 1: docs/DECISIONS.md D-024);
- the keyword lane finds it by its ``keyword_context_turns`` earlier turns of
  the same session too: they go into ``meta["recall_context"]``
  (:mod:`chitta.recall.context`), which BM25 indexes with the turn's text
  (a question's words are often in the turn *before* the answer);
- its ``meta["speaker"]`` is the speaker, so a question that names one
  speaker ranks that speaker's turns higher (``RecallSettings.speaker_prior``).

Only the Field's public API is used; without an embedder (``embedder=None``)
the turns are stored without vectors and recall runs on keywords.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.errors import InvalidArgument
from chitta.field import sessions
from chitta.recall.context import CONTEXT_KEY, SPEAKER_KEY

if TYPE_CHECKING:
    from chitta.field import Field

MAX_CONTEXT_TURNS = 16
DEFAULT_KEYWORD_CONTEXT_TURNS = (
    2  # LoCoMo dev, held-out half: BM25 R@10 0.615 -> 0.730 (DECISIONS.md D-021)
)
BATCH = 512  # turns per atomic remember_many group


@dataclasses.dataclass(frozen=True)
class Turn:
    """One utterance. ``session`` groups turns (context never crosses it)."""

    speaker: str
    text: str
    session: str
    at: datetime | float | None = None
    meta: Mapping[str, Any] | None = None


def _turn(item: Turn | Mapping[str, Any], i: int) -> Turn:
    if isinstance(item, Turn):
        turn = item
    elif isinstance(item, Mapping):
        extra = set(item) - {"speaker", "text", "session", "at", "meta"}
        if extra:
            raise InvalidArgument(f"turn {i}: unknown keys {sorted(extra)}")
        try:
            turn = Turn(**item)
        except TypeError as exc:
            raise InvalidArgument(f"turn {i}: needs speaker, text and session ({exc})") from exc
    else:
        raise InvalidArgument(f"turn {i} must be a Turn or a dict, not {type(item).__name__}")
    for name in ("speaker", "text", "session"):
        value = getattr(turn, name)
        if not isinstance(value, str) or not value.strip():
            raise InvalidArgument(f"turn {i}: {name} must be a non-empty str")
    return turn


def _mean_view(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of ``a + b`` scaled to unit length (a zero sum stays zero)."""
    m = a.astype(np.float64) + b
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    out: np.ndarray = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0).astype(np.float32)
    return out


def memory_text(turn: Turn) -> str:
    return f"{turn.speaker.strip()}: {turn.text.strip()}"


def _earlier(turns: list[Turn], i: int, n: int) -> list[str]:
    """Up to ``n`` turns before ``turns[i]`` in its session, as memory texts."""
    return [
        memory_text(turns[j])
        for j in range(max(0, i - n), i)
        if turns[j].session == turns[i].session
    ]


def context_texts(turns: list[Turn], context_turns: int) -> list[str]:
    """The text each turn is embedded from: up to ``context_turns`` earlier
    turns of the same session, then the turn itself, one per line."""
    return [
        "\n".join([*_earlier(turns, i, context_turns), memory_text(t)]) for i, t in enumerate(turns)
    ]


def keyword_contexts(turns: list[Turn], context_turns: int) -> list[str | None]:
    """Each turn's recall context: up to ``context_turns`` earlier turns of its
    session, one per line (None for a session's first turn, or when 0)."""
    return ["\n".join(_earlier(turns, i, context_turns)) or None for i in range(len(turns))]


def import_conversation(
    field: Field,
    turns: Iterable[Turn | Mapping[str, Any]],
    *,
    context_turns: int = 1,
    keyword_context_turns: int = DEFAULT_KEYWORD_CONTEXT_TURNS,
    kind: str | None = None,
    realm: str | None = None,
    source_tool: str | None = None,
    tags: Iterable[str] = (),
    turn_view: bool | None = None,
) -> list[int]:
    """Store ``turns`` (in conversation order) as memories; returns their ids.

    ``context_turns``: how many earlier turns of the same session go into each
    turn's embedding (0: the turn alone). ``keyword_context_turns``: how
    many go into its ``meta["recall_context"]`` for the keyword lane (0:
    none; a ``recall_context`` in the turn's own meta wins). Every turn is
    validated before anything is written; each group of up to 512 turns is
    written atomically. ``turn_view``: embed each turn alone too and store the
    normalised sum of the two vectors (no effect with ``context_turns=0``);
    None (default): the embedder's ``recall_turn_view`` if it has one, else False.
    ``kind``: every turn's kind; None (default): inferred per turn, as ``remember`` does.
    """
    if turn_view is not None and not isinstance(turn_view, bool):
        raise InvalidArgument("turn_view must be a bool or None")
    for name, value in (
        ("context_turns", context_turns),
        ("keyword_context_turns", keyword_context_turns),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 <= value <= MAX_CONTEXT_TURNS
        ):
            raise InvalidArgument(f"{name} must be an int between 0 and {MAX_CONTEXT_TURNS}")
    if isinstance(turns, (str, bytes)):
        raise InvalidArgument("turns must be a list of Turn or dicts, not a str")
    items = [_turn(t, i) for i, t in enumerate(turns)]
    if not items:
        return []
    tags = list(tags)
    common: dict[str, Any] = {"realm": realm, "source_tool": source_tool, "tags": tags}
    if kind is not None:  # else each turn's kind is inferred from its text (docs/KINDS.md)
        common["kind"] = kind
    # The field encodes each turn with its session's context (chitta/field/sessions.py);
    # only a choice other than its rule (2 keyword turns, 1 embedding turn) is written
    # into the turn's meta here, where the field's rule gives way to it.
    kw = (
        keyword_contexts(items, keyword_context_turns)
        if keyword_context_turns != sessions.KEYWORD_CONTEXT_TURNS
        else None
    )
    em = (
        [("\n".join(_earlier(items, i, context_turns))) for i in range(len(items))]
        if context_turns != sessions.EMBED_CONTEXT_TURNS
        else None
    )
    embedder = field.core.encoding.embedder if field.core.encoding.enabled else None
    docs: list[dict[str, Any]] = []
    for i, t in enumerate(items):
        meta: dict[str, Any] = {SPEAKER_KEY: t.speaker.strip()}
        if kw is not None:
            meta[CONTEXT_KEY] = kw[i] or ""  # "": none (the field's rule gives way)
        if em is not None and embedder is not None:
            meta[sessions.EMBED_KEY] = em[i]
        meta.update(t.meta or {})
        docs.append(
            {"text": memory_text(t), "session": t.session, "at": t.at, "meta": meta, **common}
        )
    prefers = getattr(embedder, "recall_turn_view", False) is True
    if embedder is not None and turn_view is not None and turn_view != prefers and context_turns:
        # A turn view other than the embedder's preference: the vectors made here.
        vectors = np.asarray(embedder.embed(context_texts(items, context_turns)), np.float32)
        if turn_view:
            vectors = _mean_view(
                vectors, np.asarray(embedder.embed(context_texts(items, 0)), np.float32)
            )
        for doc, vec in zip(docs, vectors):
            doc["embedding"] = vec
    ids: list[int] = []
    for lo in range(0, len(docs), BATCH):
        ids.extend(field.remember_many(docs[lo : lo + BATCH]))
    return ids
