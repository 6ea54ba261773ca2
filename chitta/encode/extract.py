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

import re
from typing import NamedTuple

from chitta.encode.extract_relations import BE_PHRASES, GAPPED_TO, IMPLIES, Form, verb_forms
from chitta.encode.extract_words import (
    _PROPER,
    ADVERBS,
    BOUNDARY,
    DETERMINERS,
    HEDGES,
    NAMING,
    OBJECT_STOP,
    PARTICIPLES,
    PREPOSITIONS,
    PRONOUNS,
    SKIP_START,
    SUBORDINATE,
    TIME_NOUNS,
    TYPE_WORDS,
)

__all__ = ["Extracted", "extract"]

MAX_TEXT = 20_000  # characters looked at per memory (the rest is not parsed)
MAX_NAME_TOKENS = 8


class Extracted(NamedTuple):
    subject: str
    predicate: str
    object: str
    negated: bool = False
    tense: str = "present"  # "present" | "past" | "future"
    event: bool = False  # an event relation (its past tense does not end it)


class _Tok(NamedTuple):
    text: str
    kind: str  # q (quoted), word, num, path, ident, punct
    low: str  # text.lower()


def _tok(text: str, kind: str) -> _Tok:
    return _Tok(text, kind, text.lower())


_TOKEN = re.compile(
    r"""(?P<q>"[^"\n]{1,200}"|\u201c[^\u201d\n]{1,200}\u201d|`[^`\n]{1,200}`)
    |(?P<abbr>\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vs|etc)\.)
    |(?P<path>(?:~|\.{1,2})?/[\w.\-/]*\w|\w[\w.\-]*/[\w.\-/]*\w)
    |(?P<flag>(?<![\w-])--?[A-Za-z][\w-]*)
    |(?P<num>\d+(?:[.,:]\d+)*(?:e-?\d+)?%?(?!\w))
    |(?P<ident>\w+(?:[.:]\w+)+(?:\(\))?|\w+\(\))
    |(?P<word>\w+(?:['\u2019]\w+)*(?:-\w+)*)
    |(?P<punct>[,.;:!?()])""",
    re.VERBOSE,
)
_CONTRACTIONS = {
    "i'm": ("I", "am"),
    "i've": ("I", "have"),
    "i'll": ("I", "will"),
    "i'd": ("I", "would"),
    "won't": ("will", "not"),
    "can't": ("cannot",),
    "let's": ("let's",),
    "wanna": ("want", "to"),
    "gonna": ("going", "to"),
    **{f"{w}'re": (w, "are") for w in ("you", "we", "they")},
    **{f"{w}'ve": (w, "have") for w in ("you", "we", "they")},
    **{f"{w}'ll": (w, "will") for w in ("you", "we", "they", "he", "she", "it")},
    # "<pronoun>'s" is "<pronoun> is": a pronoun subject (no coreference)
    **{f"{w}'s": (w, "is") for w in ("it", "that", "there", "here", "what", "he", "she", "who")},
}

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


def _tokens(sentence: str) -> list[_Tok]:
    out: list[_Tok] = []
    for m in _TOKEN.finditer(sentence.replace("\u2019", "'")):
        kind = m.lastgroup or "word"
        text = m.group()
        if kind == "abbr":
            kind = "word"
        if kind == "word" and text.lower() in _CONTRACTIONS:
            out.extend(_tok(t, "word") for t in _CONTRACTIONS[text.lower()])
            continue
        if kind == "q":
            text = text[1:-1].strip()
            if not text:
                continue
        out.append(_tok(text, kind))
    return out


def _sentences(text: str) -> list[list[_Tok]]:
    out: list[list[_Tok]] = []
    for line in text[:MAX_TEXT].splitlines():
        current: list[_Tok] = []
        for tok in _tokens(line):
            if tok.kind == "punct" and tok.text in ".!?":
                if tok.text != "?" and current:
                    out.append(current)
                current = []  # a question is dropped
            else:
                current.append(tok)
        if current:
            out.append(current)
    return out


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
