"""Entities for the pattern extractor (chitta/encode/extract.py): the subject(s)
before a relation and the object(s) after it, as noun phrases, proper nouns, quoted
strings, paths, identifiers and numbers with units; pronouns name no one."""

from __future__ import annotations

from chitta.encode.extract_tense import _SUBJECT_PLURAL
from chitta.encode.extract_tokens import _Tok
from chitta.encode.extract_words import (
    _PROPER,
    ADVERBS,
    BOUNDARY,
    DETERMINERS,
    HEDGES,
    OBJECT_STOP,
    PREPOSITIONS,
    PRONOUNS,
    SUBORDINATE,
    TYPE_WORDS,
)

__all__ = ["clean", "objects", "subjects"]

MAX_NAME_TOKENS = 8


def _split(region: list[_Tok], at: frozenset[str]) -> list[tuple[str, list[_Tok]]]:
    """Segments of ``region`` split at ``at`` words: (the word before it or "", tokens)."""
    segs: list[tuple[str, list[_Tok]]] = [("", [])]
    for t in region:
        if t.low in at and t.kind in ("word", "punct"):
            segs.append((t.low, []))
        else:
            segs[-1][1].append(t)
    return segs


def _name(toks: list[_Tok], *, subject: bool) -> tuple[str | None, bool]:
    """The entity a noun phrase names (or None) and whether "no" negates it."""
    k = 0
    negated = False
    while k < len(toks) and (
        toks[k].low in DETERMINERS or toks[k].low in ADVERBS or toks[k].low == "no"
    ):
        negated = negated or toks[k].low == "no"
        k += 1
    if k >= len(toks):
        return None, negated
    head = toks[k].low
    if head in PRONOUNS or head in PREPOSITIONS or head in OBJECT_STOP:
        return None, negated
    if len(toks) == k + 1 and head.endswith("ly") and toks[k].text == head:
        return None, negated  # an adverb ("runs natively")
    if toks[k].low in ("i", "me"):
        return "user", negated
    if "'" in head and head.split("'")[0] in PRONOUNS | _SUBJECT_PLURAL:
        return None, negated  # "you'd be", "they'll"
    if head.endswith("ing") and k + 1 < len(toks) and toks[k + 1].low in DETERMINERS | PRONOUNS:
        return None, negated  # a gerund clause ("making this cake")
    out: list[_Tok] = []
    for idx in range(k, len(toks)):
        t = toks[idx]
        low = t.low
        if out and (low in _SUBJECT_PLURAL or low in ("he", "she", "me", "it")):
            break  # a relative clause without "that" ("the group I am part of")
        if t.kind == "punct" or low in OBJECT_STOP and t.kind == "word":
            break
        if low == "of" and out and idx + 1 < len(toks):
            out.append(t)
            continue
        if low in PREPOSITIONS or low in BOUNDARY:
            break
        if low in DETERMINERS and out:
            prev_of = out[-1].low == "of"
            nxt = toks[idx + 1].text if idx + 1 < len(toks) else ""
            titled = out[-1].text[:1].isupper() and nxt[:1].isupper()
            if not (prev_of or titled):
                break
        out.append(t)
        if len(out) >= MAX_NAME_TOKENS:
            break
    while out and out[-1].low == "of":
        out.pop()
    if not out:
        return None, negated
    quoted = [t for t in out if t.kind == "q"]
    if quoted:
        return quoted[0].text, negated
    if len(out) > 1 and out[0].low in TYPE_WORDS and _code_like(out[1]):
        out = out[1:]
    elif len(out) > 2 and out[0].low == "env" and out[1].low == "var":
        out = out[2:]
    return " ".join(t.text for t in out), negated


def _code_like(t: _Tok) -> bool:
    return (
        t.kind in ("ident", "path", "flag", "q")
        or "_" in t.text
        or (t.text[:1].isupper() and any(c.isupper() for c in t.text[1:]))
    )


def _subjects(region: list[_Tok], first: bool) -> list[str] | None:
    """The subject(s) before a relation; [] when elided (the previous one's subject
    carries on), None when it names no one (a pronoun, nothing)."""
    if not region:
        return []
    segs = _split(region, frozenset({",", ";", ":"}) if first else BOUNDARY)
    last = segs[-1][1]
    if not last:
        return [] if not first else None
    if any(t.low in SUBORDINATE for t in last):
        return None
    parts = _split(last, frozenset({"and", "or"})) if first else [("", last)]
    names: list[str] = []
    for _, part in parts:
        if len(part) > 1 and part[0].low.endswith("ing") and part[0].text[1:].islower():
            return None  # a gerund clause ("Discussing it", "Being a mom") names no entity
        # A subject's head is before its first preposition ("the service at X").
        name, _neg = _name(part, subject=True)
        if name is None:
            return None
        names.append(name)
    return names


def _objects(region: list[_Tok], has_next: bool) -> list[tuple[str, bool]]:
    segs = _split(region, BOUNDARY)
    if has_next and len(segs) > 1:
        segs = segs[:-1]
    listed = any(word in ("and", "or") for word, _ in segs)
    out: list[tuple[str, bool]] = []
    for n, (word, toks) in enumerate(segs):
        if n > 0 and (word in SUBORDINATE or word in (";", ":") or (word == "," and not listed)):
            break
        name, negated = _name(toks, subject=False)
        if name is None:
            break
        out.append((name, negated))
    return out


def _clean(toks: list[_Tok]) -> list[_Tok]:
    """Drop relative clauses set off by commas (", who lives in Rome,") and cut the
    sentence at its first hedge word."""
    out: list[_Tok] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if t.low in HEDGES and t.kind == "word" and (t.text.islower() or t.low not in _PROPER):
            break
        if t.text == "," and k + 1 < len(toks) and toks[k + 1].low in ("who", "which", "whose"):
            k += 2
            while k < len(toks) and toks[k].text != ",":
                k += 1
            k += 1
            continue
        out.append(t)
        k += 1
    return out


clean = _clean
objects = _objects
subjects = _subjects
