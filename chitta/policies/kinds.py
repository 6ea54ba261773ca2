"""Memory kinds inferred at write time: from the kind tag, the realm and the content prefix.

A pure function (no I/O, no state): :func:`infer_kind` names one of the four
inferred kinds (``thought``, ``observation``, ``decision``, ``code_fact``;
unknown -> ``observation``). The write path calls it only when the caller gave
no ``kind=`` (an explicit kind always wins); the kind it picks is logged in the
``PutPayload``, so replay never re-infers. The rules, first match wins
(docs/KINDS.md is the reference):

1. a kind tag: ``kind:<kind>`` or a tag that is a kind's name (first such tag);
2. a leading label in the text: ``Decision:``, ``ADR-7:``, ``Thought:``,
   ``Hypothesis:``, ``Observation:``, ``Fact:``, ``Code:``, ``Symbol:`` ...;
3. an opening phrase: decisions ("We decided", "Going with", "We will use" ...)
   and speculation ("I think", "Maybe", "Perhaps", "It might" ...);
4. a cue within the first :data:`PREFIX` characters, in this order: a decision
   verb with its chooser ("we chose", "the team agreed"), hedged speculation
   ("I suspect", "hypothesis"), code (a code fence, ``def f(``, ``class C:``, a
   source file path, ``a::b``, a backticked call ``f()``);
5. the realm's first segment (``code:...`` -> code_fact, ``decisions/...`` ->
   decision, ``ideas`` -> thought, ``facts`` -> observation);
6. otherwise ``observation``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["INFERRED_KINDS", "PREFIX", "infer_kind", "kind_from_tags", "kind_from_text"]

OBSERVATION = "observation"
THOUGHT = "thought"
DECISION = "decision"
CODE_FACT = "code_fact"
INFERRED_KINDS: frozenset[str] = frozenset({OBSERVATION, THOUGHT, DECISION, CODE_FACT})
PREFIX = 240
"""Characters of the text the content rules read (the content prefix)."""

_NAMES = {
    "observation": OBSERVATION,
    "thought": THOUGHT,
    "decision": DECISION,
    "code_fact": CODE_FACT,
    "codefact": CODE_FACT,
    "code-fact": CODE_FACT,
}

# The word rules read the lowered prefix (case-sensitive patterns on it are faster
# than IGNORECASE); the code rule reads the prefix as written.
_LEAD = r"^[\s#>*\-]*"  # markdown heading, quote and bullet marks before the text
_LABELS = (
    (DECISION, r"decision|decided|resolution|adr(?:[\s\-#]*\d+)?"),
    (THOUGHT, r"thought|hypothesis|idea|speculation|guess|theory|hunch|conjecture"),
    (OBSERVATION, r"observation|observed|fact|finding|measured"),
    (CODE_FACT, r"code[\s_\-]?fact|code|symbol|signature|call\s?graph"),
)
_LABEL = re.compile(
    _LEAD + r"(?:" + "|".join(f"(?P<{k}>{p})" for k, p in _LABELS) + r")\s*(?::|\s-\s|\])"
)
_OPEN_DECISION = (
    r"(?:we|i|the team)(?:'ve| have)?\s+(?:decided|chose|agreed|settled|opted|committed)\b"
    r"|decided\s+to\b|going\s+with\b|let'?s\s+go\s+with\b"
    r"|we(?:'ll| will| are going to| shall)\s+(?:use|go|adopt|switch|stick|keep|drop|move)\b"
    r"|from\s+now\s+on\b|the\s+plan\s+is\b"
)
_OPEN_THOUGHT = (
    r"(?:i|we)\s+(?:think|suspect|guess|wonder|believe|bet|feel|hypothesi[sz]e)\b"
    r"|maybe\b|perhaps\b|probably\b|possibly\b|presumably\b|what\s+if\b"
    r"|it\s+(?:might|may|could)\b|(?:this|that)\s+(?:might|may|could)\b"
    r"|my\s+(?:guess|hunch|theory)\b|not\s+sure\b|i'?m\s+not\s+sure\b|(?:it\s+)?seems\b"
)
_OPENING = re.compile(
    _LEAD + r"(?:(?P<" + DECISION + r">" + _OPEN_DECISION + r")"
    r"|(?P<" + THOUGHT + r">" + _OPEN_THOUGHT + r"))"
)
_CODE_EXT = r"py|pyi|rs|c|h|cc|cpp|hpp|cxx|go|java|kt|js|mjs|ts|tsx|jsx|rb|swift|cs|scala|sh"
# Rule 4: (kind, gates, pattern, reads the lowered text). A pattern runs only when one of
# its gate substrings is in the prefix: `in` is far cheaper than a regex search whose
# pattern opens with \b (which defeats the engine's literal-prefix scan).
_CUES: tuple[tuple[str, tuple[str, ...], re.Pattern[str], bool], ...] = (
    (
        DECISION,
        ("decid", "chose", "agreed", "settled", "opted", "decision"),
        re.compile(
            r"\b(?:we|i|team)(?:'ve| have)?\s+(?:decided|chose|agreed|settled|opted)\b"
            r"|\bdecision\s+(?:was|is)\s+(?:made|to)\b|\bdecided\s+(?:to|on|against)\b"
        ),
        True,
    ),
    (
        THOUGHT,
        ("suspect", "think", "guess", "wonder", "hypothes", "speculat", "hunch"),
        re.compile(
            r"\b(?:i|we)\s+(?:suspect|think|guess|wonder|hypothesi[sz]e)\b"
            r"|\bhypothes[ie]s\b|\bspeculat|\bmy\s+(?:guess|hunch)\b"
        ),
        True,
    ),
    (CODE_FACT, ("```",), re.compile(r"```"), False),
    (CODE_FACT, (".",), re.compile(r"\.(?:" + _CODE_EXT + r")\b(?!\.\w)"), False),  # a file
    (
        CODE_FACT,
        ("def", "class", "fn", "func"),
        re.compile(
            r"\b(?:async\s+)?def\s+\w+\s*\(|\bclass\s+[A-Za-z_]\w*\s*[(:]"
            r"|\b(?:fn|func|function)\s+\w+\s*\("
        ),
        False,
    ),
    (CODE_FACT, ("::",), re.compile(r"\w::\w"), False),
    (CODE_FACT, ("`",), re.compile(r"`[\w.]+\([^`]*\)`"), False),  # a backticked call
)
_REALMS = {
    "code": CODE_FACT,
    "codebase": CODE_FACT,
    "repo": CODE_FACT,
    "src": CODE_FACT,
    "symbols": CODE_FACT,
    "decision": DECISION,
    "decisions": DECISION,
    "adr": DECISION,
    "adrs": DECISION,
    "thought": THOUGHT,
    "thoughts": THOUGHT,
    "ideas": THOUGHT,
    "hypotheses": THOUGHT,
    "scratch": THOUGHT,
    "observation": OBSERVATION,
    "observations": OBSERVATION,
    "facts": OBSERVATION,
}
_REALM_SPLIT = re.compile(r"[:/.]")


def kind_from_tags(tags: Iterable[str]) -> str | None:
    """The kind a tag names (``kind:decision``, ``decision``, ``CodeFact``), first one wins."""
    for tag in tags:
        t = tag.strip().lower()
        if t.startswith("kind:"):
            t = t[5:].strip()
        kind = _NAMES.get(t)
        if kind is not None:
            return kind
    return None


def kind_from_text(text: str) -> str | None:
    """The kind the content prefix shows (rules 2 to 4), or None when it shows none."""
    head = text[:PREFIX]
    low = head.lower()
    m = _LABEL.match(low) or _OPENING.match(low)
    if m is not None:
        return m.lastgroup
    for kind, gates, rx, lowered in _CUES:
        s = low if lowered else head
        for gate in gates:
            if gate in s:
                if rx.search(s) is not None:
                    return kind
                break
    return None


def kind_from_realm(realm: str | None) -> str | None:
    """The kind a realm's first segment names (``code:chitta`` -> code_fact), or None."""
    if not realm:
        return None
    return _REALMS.get(_REALM_SPLIT.split(realm, 1)[0].strip().lower())


def infer_kind(text: str, realm: str | None = None, tags: Iterable[str] = ()) -> str:
    """The inferred kind of a memory written without ``kind=`` (rules in the module doc)."""
    return kind_from_tags(tags) or kind_from_text(text) or kind_from_realm(realm) or OBSERVATION
