"""Query processing for the keyword lane: what a question asks *about*.

A memory is written as a statement ("Caroline: I went to a support group
yesterday"); the query that finds it is often a question ("When did Caroline
go to the support group?"). The question's function words (interrogatives,
auxiliaries, pronouns, determiners, prepositions) match thousands of
statements and only add noise to BM25, so :func:`keyword_query` drops them
and keeps the content words: names, nouns, verbs, numbers and dates.

The list is a general English function-word list (the classic
information-retrieval stop list of pronouns, auxiliaries, determiners,
conjunctions and prepositions, plus the interrogatives), applied to the
query only: the index keeps its own small stop set, so nothing stored
changes. A query made only of function words is kept as it was (better a
noisy keyword search than none).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from chitta.organs.index.bm25 import tokenize

# fmt: off
QUERY_STOPWORDS: frozenset[str] = frozenset(
    (
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as",
        "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
        "could", "did", "do", "does", "doing", "done", "down", "during", "each", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself",
        "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "might", "more",
        "most", "must", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
        "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shall", "she",
        "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves",
        "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
        "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose",
        "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "d",
        "ll", "m", "re", "ve",
    )
)
# fmt: on


def keyword_query(text: str) -> str:
    """``text`` without function words, as space-joined tokens for the BM25 lane.

    Tokens follow :func:`chitta.organs.index.bm25.tokenize` (lowercased word runs), so
    the result tokenizes back to exactly the kept tokens. Returns ``text``
    unchanged when no content word is left.
    """
    kept = [t for t in tokenize(text, stopwords=False) if t not in QUERY_STOPWORDS]
    return " ".join(kept) if kept else text


def named_speaker(text: str, speakers: Iterable[str]) -> str | None:
    """The one speaker of ``speakers`` that ``text`` names, else None.

    A speaker is named when every word of its name occurs in ``text`` (case
    folded, :func:`chitta.organs.index.bm25.tokenize`'s words); a query naming two
    or more speakers, or none, names no single one. A name made only of
    function words (e.g. "I") never counts.
    """
    words = set(tokenize(text, stopwords=False))
    found = None
    for who in speakers:
        name = _name_words(who)
        if name and all(t in words for t in name):
            if found is not None and found != who:
                return None
            found = who
    return found


def without_speaker(text: str, who: str) -> str:
    """``text`` without the words that name ``who``: every whitespace-separated piece of
    ``text`` holding a word of the name (as :func:`named_speaker` reads it; "Caroline's"
    goes whole) is left out. ``text`` as it was when nothing else would be left.

    The dense lane's query for a recall that names one speaker
    (``RecallSettings.dense_query_without_speaker``): the speaker prior already favours that
    speaker's memories, and in a short question the name pulls the query vector toward
    everything that speaker said rather than toward what is asked."""
    name = set(_name_words(who))
    if not name:
        return text
    kept = [piece for piece in text.split() if not name & set(tokenize(piece, stopwords=False))]
    return " ".join(kept) if kept else text


def dense_query_text(text: str, speakers: Iterable[str]) -> str:
    """The text the dense lane embeds with ``dense_query_without_speaker``: ``text`` without the
    one speaker of ``speakers`` it names, else ``text``."""
    who = named_speaker(text, speakers)
    return text if who is None else without_speaker(text, who)


@functools.lru_cache(maxsize=4096)
def _name_words(who: str) -> tuple[str, ...]:
    return tuple(t for t in tokenize(who, stopwords=False) if t not in QUERY_STOPWORDS)
