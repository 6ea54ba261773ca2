"""Triplets from text with no model: pattern-based relation extraction.

``extract(text)`` finds ``(subject, predicate, object)`` facts in plain sentences:
a relation phrase from the table in :mod:`chitta.encode.extract_relations` (verbs
with their particles and inflections, *be* + preposition phrases, passives,
comparisons), the noun phrase before it (the clause's subject) and the noun
phrase(s) after it (coordinated objects give one triplet each). Entities are
proper nouns, common noun phrases, quoted strings, file paths, identifiers and
numbers with units. Each triplet carries ``negated`` (not, n't, never, no longer,
an object under "no") and ``tense`` ("present", "past", "future").

What it leaves alone, to keep precision: questions, conditionals and hedged
clauses (if, maybe, I think, should ...), pronoun subjects (no coreference),
relative clauses set off by commas. The labelled set
``tests/unit/encode/data/extraction_labelled.txt`` measures it.
"""

from __future__ import annotations

from typing import NamedTuple

from chitta.encode.extract_entities import clean as _clean
from chitta.encode.extract_entities import objects as _objects
from chitta.encode.extract_entities import subjects as _subjects
from chitta.encode.extract_relations import IMPLIES
from chitta.encode.extract_tense import Match as _Match
from chitta.encode.extract_tense import match_at as _match_at
from chitta.encode.extract_tokens import MAX_TEXT
from chitta.encode.extract_tokens import Tok as _Tok
from chitta.encode.extract_tokens import sentences as _sentences
from chitta.encode.extract_words import SKIP_START

__all__ = ["MAX_TEXT", "Extracted", "extract"]


class Extracted(NamedTuple):
    subject: str
    predicate: str
    object: str
    negated: bool = False
    tense: str = "present"  # "present" | "past" | "future"
    event: bool = False  # an event relation (its past tense does not end it)


def _sentence(toks: list[_Tok]) -> list[Extracted]:
    if not toks or toks[0].low.replace("\u2019", "'") in SKIP_START:
        return []
    toks = _clean(toks)
    matches: list[_Match] = []
    i = 0
    left_and = False  # an "and" since the last relation (a coordinated subject)
    while i < len(toks):
        m = _match_at(toks, i, left_and)
        if m is None or m.end == m.start:
            left_and = left_and or toks[i].low == "and"
            i += 1
            continue
        matches.append(m)
        left_and = False
        i = m.end
    out: list[Extracted] = []
    subjects: list[str] | None = None
    for n, m in enumerate(matches):
        left = toks[(matches[n - 1].end if n else 0) : m.start]
        if n:
            found = _subjects(left, first=False)
        else:
            found = _subjects(left, first=True)
        if found is None:
            subjects = None
            continue
        if found:
            subjects = found
        elif n == 0 or subjects is None:
            continue
        right = toks[m.end : matches[n + 1].start if n + 1 < len(matches) else len(toks)]
        for obj, no in _objects(right, n + 1 < len(matches)):
            for subj in subjects:
                neg = m.negated != no
                out.append(Extracted(subj, m.predicate, obj, neg, m.tense, m.event))
                implied = IMPLIES.get(m.predicate)
                if implied is not None and not neg:
                    out.append(Extracted(subj, implied, obj, False, "present", False))
    return out


def extract(text: str) -> list[Extracted]:
    """The triplets ``text`` states, in order, each once (see the module docstring)."""
    seen: set[Extracted] = set()
    out: list[Extracted] = []
    for toks in _sentences(text):
        for e in _sentence(toks):
            if e not in seen:
                seen.add(e)
                out.append(e)
    return out
