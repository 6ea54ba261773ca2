"""SSL gloss: a compact (subject, predicate, object) triplet as an English sentence.

The triplet memory keeps its canonical form; the gloss is what gets embedded
(and stored as the linked ``kind="alias"`` memory), so questions asked in prose
find facts stored as triplets.
"""

from __future__ import annotations

import re

_PREDICATE_WORDS = {
    "is_a": "is a",
    "isa": "is a",
    "a": "is a",
    "has_a": "has a",
    "part_of": "is part of",
    "located_in": "is located in",
    "works_at": "works at",
    "depends_on": "depends on",
    "prefers": "prefers",
    "uses": "uses",
}


def _words(text: str) -> str:
    """snake_case / kebab-case / camelCase -> space separated words."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text.strip())
    return re.sub(r"[_\-]+", " ", text).strip()


def predicate_phrase(predicate: str) -> str:
    key = predicate.strip().lower().replace(" ", "_").replace("-", "_")
    return _PREDICATE_WORDS.get(key, _words(predicate).lower())


def gloss_triplet(subject: str, predicate: str, obj: str) -> str:
    """('jeff', 'uses', 'rust') -> 'Jeff uses rust.'"""
    subj = _words(subject)
    sentence = f"{subj[:1].upper()}{subj[1:]} {predicate_phrase(predicate)} {_words(obj)}".strip()
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def triplet_text(subject: str, predicate: str, obj: str) -> str:
    """The canonical stored form: 'subject | predicate | object'."""
    return f"{subject.strip()} | {predicate.strip()} | {obj.strip()}"
