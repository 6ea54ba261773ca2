"""List questions: a query asking for several things ("What activities does Mel do?",
"Which books has she read?", "In what ways ...") gets a stronger speaker prior.

The evidence of such a question is spread over many memories, each naming one of the things,
few sharing the question's words; what they share is who said them. So when the query also
names one speaker (the speaker prior's own test, chitta.recall.query.named_speaker), that
speaker's candidates are lifted by ``RecallSettings.list_speaker_prior`` in place of
``speaker_prior``. The form: "what" or "which" (after an optional "in"), at most one word, then
a plural-looking word (ending in a single "s", not an auxiliary such as "does"/"has").
LoCoMo dev: docs/DECISIONS.md D-076.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chitta.recall.engine import RecallEngine

_ASK = re.compile(r"^\s*(?:in\s+)?(?:what|which)\s+(\S+)(?:\s+(\S+))?", re.IGNORECASE)
_PLURAL = re.compile(r"[a-z]+[^s\W]s")  # a whole word ending in one "s"
# words of that shape that are not plural nouns
_NOT_PLURAL = frozenset({"does", "has", "was", "is", "his", "this", "its", "as", "us"})


def asks_for_a_list(text: str) -> bool:
    """True when ``text`` has the list-question form (module docstring)."""
    m = _ASK.match(text)
    if m is None:
        return False
    return any(
        w is not None and _PLURAL.fullmatch(w.lower()) and w.lower() not in _NOT_PLURAL
        for w in m.groups()
    )


def for_list_question(engine: RecallEngine, query: str | None) -> RecallEngine:
    """``engine`` with ``speaker_prior = list_speaker_prior`` when ``query`` is a list question,
    else ``engine`` itself (also when ``speaker_prior`` is 0: the speaker prior off is off for
    every query)."""
    prior = engine.settings.list_speaker_prior
    plain = engine.settings.speaker_prior
    if not query or prior is None or prior == plain or plain <= 0:  # 0: the prior is off
        return engine
    if not asks_for_a_list(query):
        return engine
    return engine._copy(dataclasses.replace(engine.settings, speaker_prior=float(prior)))
