"""The relation phrase of a clause, with its negation and tense, for the pattern
extractor (chitta/encode/extract.py): auxiliaries (be, have, do, will, used to, no
longer, not, n't), then a verb form or a *be* phrase from
chitta/encode/extract_relations.py, a passive (``X_by``) or a comparison (``X_than``)."""

from __future__ import annotations

from typing import NamedTuple

from chitta.encode.extract_relations import BE_PHRASES, GAPPED_TO, Form, verb_forms
from chitta.encode.extract_tokens import _Tok
from chitta.encode.extract_words import (
    ADVERBS,
    BOUNDARY,
    DETERMINERS,
    NAMING,
    PARTICIPLES,
    TIME_NOUNS,
)

__all__ = ["SUBJECT_PLURAL", "Match", "match_at"]

_BE_PRESENT = frozenset({"is", "are", "am", "isn't", "aren't"})
_BE_PAST = frozenset({"was", "were", "wasn't", "weren't"})
_HAVE = {"has": "present", "have": "present", "had": "past"}
_DO = {"do": "present", "does": "present", "did": "past"}
_NEG = frozenset({"not", "never"})
_SUBJECT_PLURAL = frozenset({"i", "you", "we", "they"})

_FORMS = verb_forms()
_FORM_LEN = max(len(k) for k in _FORMS)
_BE = {tuple(k.split()): v for k, v in BE_PHRASES.items()}
_BE_LEN = max(len(k) for k in _BE)
# Words a relation can start with (an auxiliary, an adverb, a negation or a verb form).
_STARTS = frozenset(
    {k[0] for k in _FORMS}
    | _BE_PRESENT
    | _BE_PAST
    | set(_HAVE)
    | set(_DO)
    | ADVERBS
    | _NEG
    | {"be", "been", "being", "will", "wont", "used", "no", "would"}
    | {"hasn't", "haven't", "hadn't", "don't", "doesn't", "didn't"}
)


def _neg_word(low: str) -> bool:
    return low in _NEG or low.endswith("n't")


class _Match(NamedTuple):
    start: int
    end: int  # the object starts here
    predicate: str
    negated: bool
    tense: str
    event: bool


def _aux(toks: list[_Tok], i: int) -> tuple[int, str | None, bool, bool, bool]:
    """Read auxiliaries from ``i``: (end, tense or None, negated, be, have-last)."""
    tense: str | None = None
    neg = be = have_last = False
    j = i
    while j < len(toks) and toks[j].kind == "word":
        w = toks[j].low.replace("\u2019", "'")
        if w in _BE_PRESENT or w in _BE_PAST:
            tense = tense or ("present" if w in _BE_PRESENT else "past")
            be = True
        elif w in ("be", "been", "being"):
            be = True
        elif w in _HAVE or w in ("hasn't", "haven't", "hadn't"):
            tense = tense or _HAVE.get(w, "past" if w == "hadn't" else "present")
            have_last = True
        elif w in _DO or w in ("don't", "doesn't", "didn't"):
            tense = tense or ("past" if w.startswith("did") else "present")
        elif w in ("will", "wont"):
            tense = tense or "future"
        elif w == "used" and j + 1 < len(toks) and toks[j + 1].low == "to":
            tense = "past"
            j += 1
        elif w == "no" and j + 1 < len(toks) and toks[j + 1].low == "longer":
            neg = True
            j += 1
        elif w in _NEG:
            neg = True
        elif w not in ADVERBS:
            break
        if not (w in _HAVE or w in ("hasn't", "haven't", "hadn't")):
            have_last = False
        if w.endswith("n't"):
            neg = True
        j += 1
    return j, tense, neg, be, have_last


def _match_at(toks: list[_Tok], i: int, left_and: bool) -> _Match | None:
    first = toks[i]
    if first.low not in _STARTS or first.kind != "word" or first.text[:1].isupper():
        return None
    if i > 0 and toks[i - 1].low in DETERMINERS:
        return None  # "the fixed version"
    if i > 0 and toks[i - 1].kind == "num" and first.low in ("am", "pm"):
        return None  # "9 am"
    j, tense, neg, be, have_last = _aux(toks, i)
    if be and tense is None:
        return None  # "be"/"been" with no finite verb before it: not a clause's verb
    if j < len(toks) and toks[j].low == "would" and j + 1 < len(toks) and toks[j + 1].low == "like":
        return _Match(i, j + 2, "likes", neg, "present", False)
    if be:
        return _be_match(toks, i, j, tense or "present", neg)
    found = _verb_match(toks, j)
    if found is not None:
        end, form = found
        kind = form.kind
        if kind == "past" and toks[j].low in NAMING and tense is None:
            return None
        nxt = toks[end].low if end < len(toks) else ""
        if nxt in TIME_NOUNS and toks[j].low in ("last", "next"):
            return None  # "last month": an adjective, not the verb
        bare = all(t.low in ADVERBS for t in toks[i:j])  # no auxiliary before the verb
        if bare and toks[j].low == "found":
            return None  # without an auxiliary, "found" is the past of "find"
        if bare and kind in ("base", "part") and kind != "past":
            prev = toks[i - 1].low if i > 0 else ""
            # A bare base form ("use") is a verb after I/you/we/they or "X and Y"; after a
            # noun it is too often a noun or preposition ("last month", "moments like these").
            bare_ok = prev in _SUBJECT_PLURAL or left_and
            if kind == "part" or not bare_ok:
                return None
        if kind == "ing":
            return None  # a gerund without "be" is a noun ("reading")
        if tense is None:
            tense = "past" if kind in ("past", "part") else "present"
        gapped = GAPPED_TO.get(form.base)
        if gapped is not None and end == j + 1:  # "forwards requests to X"
            for k in range(end + 1, min(end + 5, len(toks))):
                if toks[k].low in BOUNDARY:
                    break
                if toks[k].low == "to":
                    return _Match(i, k + 1, gapped, neg, tense, False)
        return _Match(i, end, form.predicate, neg, tense, form.event)
    if have_last:  # "has"/"had" as the main verb, unless a participle follows
        nxt = toks[j].low if j < len(toks) else ""
        if nxt.endswith(("ed", "en", "wn")) or nxt in PARTICIPLES:
            return None
        return _Match(i, j, "has", neg, tense or "present", False)
    return None


def _verb_match(toks: list[_Tok], j: int) -> tuple[int, Form] | None:
    for n in range(min(_FORM_LEN, len(toks) - j), 0, -1):
        words = tuple(t.low for t in toks[j : j + n])
        if any(t.kind != "word" for t in toks[j : j + n]):
            continue
        forms = _FORMS.get(words)
        if forms:
            # Prefer the most specific reading: past over participle, s3 over base.
            order = {"s3": 0, "past": 1, "base": 2, "part": 3, "ing": 4}
            return j + n, min(forms, key=lambda f: order[f.kind])
    return None


def _be_match(toks: list[_Tok], i: int, j: int, tense: str, neg: bool) -> _Match | None:
    for n in range(min(_BE_LEN, len(toks) - j), 0, -1):
        phrase = tuple(t.low for t in toks[j : j + n])
        hit = _BE.get(phrase)
        if hit is not None:
            return _Match(i, j + n, hit[0], neg, tense, hit[1])
    if j < len(toks):
        w = toks[j].low
        nxt = toks[j + 1].low if j + 1 < len(toks) else ""
        found = _verb_match(toks, j)
        if found is not None and found[1].kind == "ing":
            return _Match(i, found[0], found[1].predicate, neg, tense, found[1].event)
        if nxt == "than" and w.endswith("er") and len(w) > 3:
            return _Match(i, j + 2, w + "_than", neg, tense, False)
        if nxt == "by" and toks[j].kind == "word" and w.endswith(("ed", "en", "wn", "ilt", "ght")):
            return _Match(i, j + 2, w + "_by", neg, tense, found is not None and found[1].event)
    if j < len(toks) and toks[j].low.endswith("ing") and toks[j].kind == "word":
        return None  # "is going", "been looking into": a verb the table lacks, not a state
    return _Match(i, j, "is", neg, tense, False)


SUBJECT_PLURAL = _SUBJECT_PLURAL
Match = _Match
match_at = _match_at
