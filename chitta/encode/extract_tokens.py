"""Sentences and tokens for the pattern extractor (chitta/encode/extract.py): quoted
strings, paths, flags, numbers, identifiers and words, contractions spread out; a
question is dropped whole."""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["MAX_TEXT", "Tok", "sentences"]

MAX_TEXT = 20_000  # characters looked at per memory (the rest is not parsed)


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


Tok = _Tok
sentences = _sentences
