"""The word lists of the pattern extractor (chitta/encode/extract.py)."""

from __future__ import annotations

__all__ = [
    "ADVERBS",
    "BOUNDARY",
    "DETERMINERS",
    "HEDGES",
    "NAMING",
    "OBJECT_STOP",
    "PARTICIPLES",
    "PARTICLES",
    "PREPOSITIONS",
    "PRONOUNS",
    "SKIP_START",
    "SUBORDINATE",
    "TIME_NOUNS",
    "TYPE_WORDS",
    "WH",
    "_PROPER",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# dropped before a name; a relation never starts right after one
DETERMINERS = _words("a an any her his its my our some that the their these this those your")

# subjects that name no one (no coreference), quantifiers included
PRONOUNS = _words(
    "all anyone anything both each everyone everything he here him it many most nobody none "
    "nothing one she some someone something that them there these they this those us we you"
)

# end a name ("of" is handled apart: it continues one)
PREPOSITIONS = _words(
    "about across after against among as at before behind between by during for from in "
    "into like near on onto over per since than through to under until via with within "
    "without"
)

# split clauses and coordinated names
BOUNDARY = _words(
    ", : ; after although and because before but how however if nor or since so that then "
    "though unless until what whatever when whenever where which while who whom whose why"
)

# start a clause whose facts are not taken
SUBORDINATE = _words(
    "after although because before how however if since so that then though unless until "
    "what whatever when whenever where which while who whom whose why"
)

# end an object (adverbs, particles)
OBJECT_STOP = _words(
    "again already also anymore anyway around away being daily down downtown each either "
    "every instead into last monthly next not now off only out over really remotely so such "
    "though today together tomorrow too up weekly well yearly yesterday yet"
)

# the rest of the sentence is not a fact (lowercase, or any case but _PROPER)
HEDGES = _words(
    "believe bet can cannot could feel feels felt glad guess hope hoping if imagine may "
    "maybe might must perhaps probably seem seemed seems shall should sound sounds suppose "
    "sure think thinking unless whether wish wonder wondering"
)

# wh-words: a boundary and a subordinate clause
WH = _words("how however what whatever why")

# verb particles: not objects ("wrapped up")
PARTICLES = _words("around away down into off out over up")

# "a game called X": a name, not a call
NAMING = _words("called named titled")

# "last month": an adjective before these, not the verb "last"
TIME_NOUNS = _words(
    "day evening fall month morning night spring summer time week weekend winter year"
)

# after "has", a participle: "has" is an auxiliary there
PARTICIPLES = _words(
    "become been begun come done felt given gone got heard kept known left lost made met "
    "paid put said seen sent spent stood taken thought told understood won written"
)

# hedge words that are also names or months when capitalised
_PROPER = _words("can hope may sue will")

# a sentence starting with one is a question, request or condition
SKIP_START = _words(
    "are ask can check could did do does ensure how if is let's make maybe perhaps please "
    "should suppose unless what where whether who why would"
)

# neutral words between a subject and its verb
ADVERBS = _words(
    "actually already also always currently finally generally just mostly now often rarely "
    "really recently seldom sometimes still typically usually"
)

# dropped before a code name ("the function f" -> f)
TYPE_WORDS = _words("class command file flag function method module option package var variable")
