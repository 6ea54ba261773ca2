"""The relation phrases the write-time triplet extractor knows (chitta/encode/extract.py).

Two tables:

- ``VERBS``: active verb relations, ``(base, particle, event)``. A state relation is
  named by its present form (``uses``, ``lives_in``), an event by its past (``founded``,
  ``moved_to``); the sentence's tense is marked apart. Inflections are made here
  (regular rules plus ``IRREGULAR``).
- ``BE_PHRASES``: what may follow a form of *to be* (``is located in`` -> ``located_in``,
  ``was caused by`` -> ``caused_by``). A participle followed by ``by`` is a passive
  (``X_by``) even when not listed; ``be + <adjective>er + than`` is a comparison
  (``longer_than``); anything else after *be* is the copula ``is``.

``FUNCTIONAL``: predicates a subject holds one object of at a time; a later one
supersedes an earlier one (invalidated at the new memory's time). ``IMPLIES``: an
event that also asserts a state (``moved_to`` X -> ``lives_in`` X).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "BE_PHRASES",
    "FUNCTIONAL",
    "GAPPED_TO",
    "IMPLIES",
    "VERBS",
    "Form",
    "verb_forms",
]

# (base, particle or "", event). Particles are matched right after the verb.
VERBS: tuple[tuple[str, str, bool], ...] = (
    ("use", "", False),
    ("run", "on", False),
    ("run", "for", False),
    ("run", "through", False),
    ("run", "", False),
    ("depend", "on", False),
    ("rely", "on", False),
    ("cause", "", False),
    ("prefer", "", False),
    ("work", "at", False),
    ("work", "for", False),
    ("work", "on", False),
    ("work", "with", False),
    ("work", "as", False),
    ("live", "in", False),
    ("have", "", False),
    ("own", "", False),
    ("like", "", False),
    ("love", "", False),
    ("hate", "", False),
    ("dislike", "", False),
    ("enjoy", "", False),
    ("want", "", False),
    ("need", "", False),
    ("know", "", False),
    ("speak", "", False),
    ("study", "", False),
    ("teach", "at", False),
    ("teach", "", False),
    ("manage", "", False),
    ("lead", "", False),
    ("report", "to", False),
    ("maintain", "", False),
    ("attend", "", False),
    ("play", "", False),
    ("drive", "", False),
    ("eat", "", False),
    ("drink", "", False),
    ("mentor", "", False),
    ("coach", "", False),
    ("contain", "", False),
    ("include", "", False),
    ("require", "", False),
    ("support", "", False),
    ("extend", "", False),
    ("implement", "", False),
    ("import", "", False),
    ("call", "", False),
    ("return", "", False),
    ("store", "", False),
    ("connect", "to", False),
    ("read", "from", False),
    ("read", "", False),
    ("write", "to", False),
    ("expose", "", False),
    ("wrap", "", False),
    ("emit", "", False),
    ("hit", "", False),
    ("block", "", False),
    ("trigger", "", False),
    ("validate", "", False),
    ("respect", "", False),
    ("send", "to", False),
    ("send", "", False),
    ("forward", "to", False),
    ("forward", "", False),
    ("export", "", False),
    ("talk", "to", False),
    ("export", "to", False),
    ("take", "place in", False),
    ("take", "", False),
    ("last", "", False),
    ("span", "", False),
    ("cost", "", False),
    ("weigh", "", False),
    ("hold", "", False),
    ("serve", "", False),
    ("border", "", False),
    ("flow", "through", False),
    ("sit", "on", False),
    ("leave", "from", False),
    ("open", "at", False),
    ("close", "at", False),
    ("prevent", "", False),
    ("reduce", "", False),
    ("help", "with", False),
    ("expire", "in", False),
    ("end", "in", False),
    ("test", "", False),
    ("disable", "", False),
    ("enable", "", False),
    ("listen", "on", False),
    ("default", "to", False),
    ("point", "to", False),
    ("belong", "to", False),
    ("host", "", False),
    ("produce", "", False),
    ("consume", "", False),
    ("handle", "", False),
    ("publish", "", False),
    ("subscribe", "to", False),
    ("join", "", True),
    ("move", "to", True),
    ("found", "", True),
    ("create", "", True),
    ("build", "", True),
    ("write", "", True),
    ("leave", "", True),
    ("visit", "", True),
    ("graduate", "from", True),
    ("study", "at", True),
    ("replace", "", True),
    ("fix", "", True),
    ("break", "", True),
    ("affect", "", True),
    ("damage", "", True),
    ("win", "", True),
    ("perform", "", True),
    ("start", "in", True),
    ("arrive", "on", True),
    ("arrive", "in", True),
    ("crash", "because of", True),
    ("come", "from", True),
    ("introduce", "", True),
    ("release", "", True),
    ("launch", "", True),
    ("acquire", "", True),
    ("marry", "", True),
    ("meet", "", True),
)

# verb: (third person singular, past, past participle, gerund) where the rules miss.
IRREGULAR: dict[str, tuple[str, str, str, str]] = {
    "run": ("runs", "ran", "run", "running"),
    "have": ("has", "had", "had", "having"),
    "lead": ("leads", "led", "led", "leading"),
    "build": ("builds", "built", "built", "building"),
    "write": ("writes", "wrote", "written", "writing"),
    "leave": ("leaves", "left", "left", "leaving"),
    "drive": ("drives", "drove", "driven", "driving"),
    "eat": ("eats", "ate", "eaten", "eating"),
    "drink": ("drinks", "drank", "drunk", "drinking"),
    "know": ("knows", "knew", "known", "knowing"),
    "speak": ("speaks", "spoke", "spoken", "speaking"),
    "teach": ("teaches", "taught", "taught", "teaching"),
    "take": ("takes", "took", "taken", "taking"),
    "hold": ("holds", "held", "held", "holding"),
    "read": ("reads", "read", "read", "reading"),
    "send": ("sends", "sent", "sent", "sending"),
    "come": ("comes", "came", "come", "coming"),
    "sit": ("sits", "sat", "sat", "sitting"),
    "break": ("breaks", "broke", "broken", "breaking"),
    "win": ("wins", "won", "won", "winning"),
    "hit": ("hits", "hit", "hit", "hitting"),
    "cost": ("costs", "cost", "cost", "costing"),
    "meet": ("meets", "met", "met", "meeting"),
    "wrap": ("wraps", "wrapped", "wrapped", "wrapping"),
    "emit": ("emits", "emitted", "emitted", "emitting"),
    "span": ("spans", "spanned", "spanned", "spanning"),
    "found": ("founds", "founded", "founded", "founding"),
    "prefer": ("prefers", "preferred", "preferred", "preferring"),
    "subscribe": ("subscribes", "subscribed", "subscribed", "subscribing"),
}

# What may follow a form of "to be": phrase -> (predicate, event).
BE_PHRASES: dict[str, tuple[str, bool]] = {
    **{
        p: (p.replace(" ", "_"), False)
        for p in (
            "located in",
            "located at",
            "located near",
            "based in",
            "based on",
            "headquartered in",
            "written in",
            "stored in",
            "stored on",
            "hosted on",
            "hosted by",
            "built with",
            "built on",
            "deployed on",
            "deployed to",
            "married to",
            "set to",
            "installed with",
            "scheduled for",
            "interested in",
            "compatible with",
            "allergic to",
            "afraid of",
            "responsible for",
            "famous for",
            "known for",
            "part of",
            "member of",
            "friends with",
            "close to",
            "next to",
            "near",
            "behind",
            "from",
            "due to",
            "connected to",
            "related to",
            "similar to",
            "made of",
            "involved in",
            "backed by",
            "owned by",
            "maintained by",
            "blocked by",
            "configured by",
            "managed by",
            "led by",
            "run by",
            "powered by",
            "used by",
        )
    },
    **{
        p: (p.replace(" ", "_"), True)
        for p in (
            "born in",
            "born on",
            "caused by",
            "created by",
            "written by",
            "built by",
            "founded by",
            "fixed in",
            "fixed by",
            "introduced by",
            "triggered by",
            "replaced by",
            "hired by",
            "paid by",
            "promoted to",
            "shipped to",
            "fired from",
            "released in",
            "acquired by",
        )
    },
    "a part of": ("part_of", False),
    "a member of": ("member_of", False),
    "in": ("located_in", False),
    "at": ("located_in", False),
}

FUNCTIONAL: frozenset[str] = frozenset(
    {
        "lives_in",
        "works_at",
        "born_in",
        "born_on",
        "married_to",
        "located_in",
        "headquartered_in",
        "based_in",
        "reports_to",
    }
)

IMPLIES: dict[str, str] = {"moved_to": "lives_in"}

# Verbs of transfer whose "to" may come after a short object ("sends traffic to X").
GAPPED_TO: dict[str, str] = {
    "send": "sends_to",
    "forward": "forwards_to",
    "export": "exports_to",
    "write": "writes_to",
    "copy": "copies_to",
    "push": "pushes_to",
    "upload": "uploads_to",
}


class Form(NamedTuple):
    """One inflected surface form of a verb relation."""

    predicate: str
    event: bool
    kind: str  # "s3" (uses), "base" (use), "past" (used), "part" (used, after have), "ing"
    base: str  # the verb ("use")


def _inflect(base: str) -> tuple[str, str, str, str]:
    if base in IRREGULAR:
        return IRREGULAR[base]
    cons_y = base.endswith("y") and base[-2:-1] not in ("a", "e", "o", "u")
    sibilant = base.endswith(("s", "sh", "ch", "x", "z", "o"))
    s3 = base[:-1] + "ies" if cons_y else base + ("es" if sibilant else "s")
    if base.endswith("e"):
        past = base + "d"
    elif cons_y:
        past = base[:-1] + "ied"
    else:
        past = base + "ed"
    ing = base[:-1] + "ing" if base.endswith("e") and not base.endswith("ee") else base + "ing"
    return s3, past, past, ing


def verb_forms() -> dict[tuple[str, ...], list[Form]]:
    """Surface word sequence (lowercase) -> the forms it can be, for every verb relation."""
    out: dict[tuple[str, ...], list[Form]] = {}
    for base, particle, event in VERBS:
        s3, past, part, ing = _inflect(base)
        tail = tuple(particle.split())
        name = (past if event else s3) + "".join("_" + w for w in tail)
        inflected = ((s3, "s3"), (base, "base"), (past, "past"), (part, "part"), (ing, "ing"))
        for word, kind in inflected:
            forms = out.setdefault((word, *tail), [])
            if Form(name, event, kind, base) not in forms:
                forms.append(Form(name, event, kind, base))
    return out
