"""A question turned into the statement that would answer it (for the dense lane).

Memories are statements ("Caroline: I researched adoption agencies"); queries
are often questions ("What did Caroline research?"). An embedder places a
question and its answer's statement less close than two statements about the
same thing, so :func:`declarative` rewrites a question into statement word
order with plain English syntax rules, no model and no word lists beyond the
closed classes of interrogatives and auxiliaries:

- a leading wh-phrase is dropped ("what", "when", "how many", "what kind of",
  "in which year", ...); a noun phrase it asked about moves after the clause:
  "What activities does Melanie partake in?" -> "Melanie partake in activities";
- the auxiliary that inverts a question is dropped ("did", "is", "has", ...):
  "What did Caroline research?" -> "Caroline research";
- a yes/no question loses its leading auxiliary: "Would Caroline pursue
  writing?" -> "Caroline pursue writing";
- anything else (a statement, a command, a question it cannot parse) is kept.

Tense is not restored ("research", not "researched"): sentence embedders are
insensitive to it. Whether this helps is measured, not assumed
(``docs/DECISIONS.md`` D-024: it lost with both embedders).
"""

from __future__ import annotations

import re

from chitta.errors import InvalidArgument

WH = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})
AUX = frozenset(
    {
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "am",
        "has",
        "have",
        "had",
        "will",
        "would",
        "can",
        "could",
        "should",
        "shall",
        "may",
        "might",
        "must",
    }
)
#: words after "how" that belong to the wh-phrase ("how many", "how long", ...)
HOW_WORDS = frozenset({"many", "much", "long", "often", "old", "far", "big", "soon", "come"})
#: prepositions that may lead a wh-phrase ("in which year", "on what date")
LEAD_PREPS = frozenset(
    {"in", "on", "at", "for", "from", "to", "by", "with", "during", "since", "after", "before"}
)
#: "what kind of X": the head words that only classify
KIND_WORDS = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
MAX_NOUN_PHRASE = 4
_END = re.compile(r"[?!.\s]+$")


def declarative(question: str, *, move_noun_phrase: bool = True) -> str:
    """``question`` in statement word order (see the module doc); unchanged if not a question it parses.

    ``move_noun_phrase=False`` leaves the wh-phrase's noun phrase where it was
    ("What activities does Melanie ..." -> "activities Melanie ...")."""
    if not isinstance(question, str):
        raise InvalidArgument(f"question must be str, got {type(question).__name__}")
    words = _END.sub("", question.strip()).split()
    low = [w.lower().strip(",;:") for w in words]
    if not words:
        return question
    i = 1 if len(low) > 1 and low[0] in LEAD_PREPS and low[1] in WH else 0
    if low[i] in WH:
        wh = low[i]
        i += 1
        if wh == "how" and i < len(low) and low[i] in HOW_WORDS:
            i += 1
            if i < len(low) and low[i] == "ago":
                i += 1
        if i + 1 < len(low) and low[i] in KIND_WORDS and low[i + 1] == "of":
            i += 2
        aux = next(
            (j for j in range(i, min(i + MAX_NOUN_PHRASE + 1, len(low))) if low[j] in AUX), None
        )
        if aux is not None and aux + 1 < len(words):
            rest, noun = words[aux + 1 :], words[i:aux]
            out = rest + noun if move_noun_phrase else noun + rest
        else:
            out = words[i:]
    elif low[0] in AUX and len(words) > 1:
        out = words[1:]
    else:
        return question
    return " ".join(out) if out else question
