"""A rule-based parser from an English question to a :class:`RecallRequest`.

``parse("what did Ana decide about the schema in May?", ref_ms)`` gives kind ``decision``,
subject ``Ana``, topic ``schema`` and the month May (of any year). The rules, in order:

- **time**: absolute dates (:mod:`chitta.recall.timeq`) and relative ones
  (:mod:`chitta.recall.reltime`, against ``ref_ms``, or against the first absolute date the
  question names: "the weekend before 10 April 2023") give the range (the hull of the spans);
  a year-less month stays a month of any year; "when ...", "what date ...", "how long ago"
  ask for a time; "then" / "that day" with no date is the unbound slot ``time``;
- **kind**: decide / decision / chose / agreed -> decision; idea / hypothesis / speculate /
  guess -> thought ("what does X think about" asks an opinion, not for speculation); function / method / class / symbol / signature -> code_fact;
  lesson -> lesson;
- **role**: "what did I say / I told" -> user; "did you suggest / you said" -> assistant;
- **causal**: a file path (``name.ext``) or a call (``name()``) is the entity; edited /
  changed -> Edited, failed / broke -> TestFailed, passed -> TestPassed, committed ->
  Committed, deleted / removed -> Deleted, created / added -> Created ("tests" alone with
  one of these verbs binds the tool without an entity); "it" / "that file" after such a
  verb with no entity is the unbound slot ``causal_entity``;
- **subject**: the first run of capitalised words that is not a question word, a month, a
  weekday or a sentence-initial function word; a pronoun subject (did he / she / they)
  with no name is the unbound slot ``subject``;
- **predicate**: "what is X's <noun>" (the noun), "who <verb>s <topic>" and
  "what|where does X <verb>" (the verb, third person) bind a knowledge-graph predicate;
- **topic**: "about|regarding|concerning <words>" (up to a time or the end), or the
  object of "who <verb>s";
- **realm**: "in realm|project <name>" or ``realm:<name>``;
- **freetext**: the content words left after all of the above (None when none are).
"""

from __future__ import annotations

import calendar
import re

from chitta.recall.reltime import relative_spans
from chitta.recall.router_ir import RecallRequest
from chitta.recall.timeq import query_times

__all__ = ["parse"]

_ASKS_TIME = re.compile(  # searched in the lowercased question
    r"^\s*(?:when\b|since when\b|what (?:time|date|day|year|month)\b|which (?:day|date|year|month)\b)"
    r"|\bhow long ago\b|\bon what (?:day|date)\b"
)
_TIME_HOLE = re.compile(r"\b(?:then|that day|that time|at that point|back then)\b", re.IGNORECASE)
_KINDS = (
    ("decision", re.compile(r"\b(?:decid\w*|decision\w*|chose|choose|chosen|agree[ds]?|settled on)\b", re.IGNORECASE)),
    ("thought", re.compile(r"\b(?:ideas?|hypothes\w+|speculat\w+|guess(?:ed|es)?)\b", re.IGNORECASE)),
    ("code_fact", re.compile(r"\b(?:functions?|methods?|symbols?|signatures?)\b", re.IGNORECASE)),
    ("lesson", re.compile(r"\blessons?\b", re.IGNORECASE)),
)  # fmt: skip
# The kinds' words as token rules (what _KINDS says, without a regex scan per question)
_KIND_WORDS = {
    **dict.fromkeys(("chose", "choose", "chosen", "agree", "agreed", "agrees"), "decision"),
    **dict.fromkeys(("idea", "ideas", "guess", "guessed", "guesses"), "thought"),
    **dict.fromkeys(
        (
            "function",
            "functions",
            "method",
            "methods",
            "symbol",
            "symbols",
            "signature",
            "signatures",
        ),
        "code_fact",
    ),
    **dict.fromkeys(("lesson", "lessons"), "lesson"),
}
_KIND_PREFIXES = ("decid", "decision", "hypothes", "speculat")


def _kind_of(token: str) -> str:
    if token in _KIND_WORDS:
        return _KIND_WORDS[token]
    return "decision" if token.startswith(("decid", "decision")) else "thought"


_GATE_REL_ALONE = frozenset({"yesterday", "today", "tonight", "ago"})
_GATE_REL_WHICH = frozenset({"last", "this", "next", "past", "on"})
_GATE_REL_UNIT = frozenset(
    {"week", "weekend", "month", "year", "night", "morning", "afternoon", "evening"}
    | {d.lower() for d in calendar.day_name}
)
_GATE_TIME = frozenset({"when", "time", "date", "day", "year", "month", "ago"})
_GATE_HOLE = frozenset({"then", "that", "point"})
_GATE_TESTS = frozenset({"test", "tests"})
_GATE_ENTITY_HOLE = frozenset({"it", "that", "this"})
_GATE_PRONOUN = frozenset({"he", "she", "they"})
_GATE_DOES = frozenset({"does", "do"})
_GATE_TOPIC = frozenset({"about", "regarding", "concerning"})
_ROLE_USER = re.compile(
    r"\bwhat (?:did|do|have) i (?:say|said|tell|told|ask|asked|mention|mentioned|write|wrote)\b"
    r"|\bi (?:said|told you|asked|mentioned)\b",
    re.IGNORECASE,
)
_ROLE_ASSISTANT = re.compile(
    r"\b(?:did|have) you (?:say|suggest|tell|recommend|propose)\b"
    r"|\byou (?:said|suggested|told me|recommended|proposed)\b",
    re.IGNORECASE,
)
_EXT = r"(?:py|pyi|js|ts|tsx|rs|go|c|cc|cpp|h|hpp|java|rb|md|toml|json|ya?ml|txt|sh|cfg|ini)"
_ENTITY = re.compile(rf"((?:[\w-]+/)*[\w-]+\.{_EXT})\b|\b([A-Za-z_][\w.]*)\(\)")
_TOOLS = (
    ("TestFailed", re.compile(r"\b(?:fail\w*|broke|break\w*|broken)\b", re.IGNORECASE)),
    ("TestPassed", re.compile(r"\bpass(?:ed|es|ing)?\b", re.IGNORECASE)),
    ("Committed", re.compile(r"\bcommit\w*\b", re.IGNORECASE)),
    ("Deleted", re.compile(r"\b(?:delet\w*|removed?)\b", re.IGNORECASE)),
    ("Edited", re.compile(r"\b(?:edit\w*|chang\w*|modif\w*|touch\w*)\b", re.IGNORECASE)),
    ("Created", re.compile(r"\b(?:creat\w*|added|add)\b", re.IGNORECASE)),
)
_TESTS = re.compile(r"\btests?\b", re.IGNORECASE)
_ENTITY_HOLE = re.compile(r"\b(?:it|that file|that function|this file)\b", re.IGNORECASE)
_PRONOUN_SUBJECT = re.compile(
    r"\b(?:did|does|do|has|have|is|was|will|would|can|could)\s+(?:he|she|they)\b"
    r"|^\s*(?:he|she|they)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*(?:\s+[A-Z][a-z]+)*")
_POSSESSIVE = re.compile(
    r"\b(?i:what)(?: is|'s| was| are| were)\s+([A-Z][\w]*)'s\s+(\w+)\s*\??\s*$"
)
_WHO_VERB = re.compile(
    r"^\s*who\s+([a-z]+s)\s+(?:the\s+|a\s+|an\s+)?([\w\s-]+?)\s*\??\s*$", re.IGNORECASE
)
_DOES_VERB = re.compile(
    r"^\s*(?i:what|where|who|whom)\s+(?:does|do)\s+([A-Z][\w]*)\s+([a-z]+)(?:\s+(?:in|at|for|to|with))?\s*\??\s*$"
)
_TOPIC = re.compile(
    r"\b(?:about|regarding|concerning)\s+(?:the\s+|a\s+|an\s+|our\s+|my\s+)?([a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)"
    r"(?=\s+(?:in|on|during|since|last|this|next|yesterday|today|before|after|\d|a|an|one|two|"
    r"three|four|five|six|seven|eight|nine|ten|few|couple)\b|\s*[?.!,](?!\w)|\s*$)",
    re.IGNORECASE,
)
_REALM = re.compile(
    r"\b(?:in (?:the )?(?:realm|project)\s+([\w.-]+)|realm:([\w.-]+))", re.IGNORECASE
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_DIGIT = re.compile(r"\d")
_DATEISH = re.compile(r"\d[\d-]*|\d{1,2}(?:st|nd|rd|th)")

_MONTHS = {m.lower() for m in calendar.month_name if m} | {
    m.lower() for m in calendar.month_abbr if m
}
_DAYS = {d.lower() for d in calendar.day_name}
_NOT_NAMES = {
    "what", "when", "where", "who", "whom", "whose", "why", "how", "which", "did", "does", "do",
    "is", "are", "was", "were", "has", "have", "had", "can", "could", "would", "should", "will",
    "tell", "show", "list", "find", "give", "the", "a", "an", "in", "on", "at", "any", "all",
    "my", "our", "please", "remind", "summarize", "summarise", "recall", "i", "since", "after",
    "before", "during", "last", "next", "this", "that", "these", "those", "there", "yesterday",
    "today", "and", "or", "but", "so", "if", "of", "for", "from", "to", "with", "it", "its",
    "we", "you", "he", "she", "they", "me", "us", "them", "his", "her", "their", "tests", "test",
    "get", "name", "explain", "describe", "state", "say", "decisions", "decision", "lessons",
}  # fmt: skip
_STOP = _NOT_NAMES | {
    "about", "regarding", "concerning", "me", "ago", "time", "date", "day", "days", "week",
    "weeks", "weekend", "month", "months", "year", "years", "morning", "evening", "afternoon",
    "night", "tonight", "be", "been", "being", "am", "not", "no", "yes", "as", "by", "up", "out",
    "into", "over", "some", "any", "ever", "every", "also", "just", "then", "than", "one", "two",
    "three", "four", "five", "six", "seven", "eight", "nine", "ten", "a", "couple", "few",
    "several", "long", "much", "many", "happen", "happened", "happens", "go", "went", "back",
    "point", "thing", "things", "said", "say", "says", "tell", "told", "ask", "asked", "mention",
    "mentioned", "suggest", "suggested", "recommend", "recommended", "you", "there", "here",
    "past", "first", "recent", "recently", "latest", "earlier", "later", "around", "near",
    "through", "until", "made", "make", "think", "thought", "idea", "ideas", "decide", "decided",
    "deciding", "choose", "chose", "chosen", "agree", "agreed", "settled", "s", "'s",
    "something", "anything", "agrees",
    "realm", "project", "file", "function", "lesson", "lessons", "learned", "all", "everything",
}  # fmt: skip


def _name(text: str) -> str | None:
    """The first run of capitalised words that can be a name (see the module doc)."""
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        while words and (words[0].lower() in _NOT_NAMES or words[0].lower() in _MONTHS
                         or words[0].lower() in _DAYS):  # fmt: skip
            words = words[1:]
        kept: list[str] = []
        for w in words:
            if w.lower() in _NOT_NAMES or w.lower() in _MONTHS or w.lower() in _DAYS:
                break
            kept.append(w)
        if kept:
            name = " ".join(kept)
            return name.removesuffix("'s")
    return None


def _hull(spans: list[tuple[int, int]]) -> tuple[int | None, int | None]:
    if not spans:
        return None, None
    return min(s[0] for s in spans), max(s[1] for s in spans)


def parse(text: str, ref_ms: int, *, realm: str | None = None) -> RecallRequest:
    """The request ``text`` makes (see the module doc), relative dates counted from ``ref_ms``."""
    low = text.lower()
    toks = [x.removesuffix("'s") for x in _WORD.findall(low)]
    ws = set(toks)  # each rule below runs only when a word it needs is there (cheap gates)
    asks_time = bool(ws & _GATE_TIME) and _ASKS_TIME.search(low) is not None
    months: tuple[int, ...] = ()
    named = query_times(text) if ws & _MONTHS or _DIGIT.search(text) else None
    # "the weekend before April 10, 2023": relative dates count from a date the question names
    anchor = named.spans[0][0] if named is not None and named.spans else ref_ms
    relative = ws & _GATE_REL_ALONE or (ws & _GATE_REL_WHICH and ws & _GATE_REL_UNIT)
    spans: list[tuple[int, int]] = list(relative_spans(text, anchor)) if relative else []
    if named is not None:
        spans.extend(named.spans)
        months = tuple(sorted(named.months))
    lo, hi = _hull(spans)
    unbound: list[str] = []
    if lo is None and not months and ws & _GATE_HOLE and _TIME_HOLE.search(text) is not None:
        unbound.append("time")
    kind_words = {t for t in toks if t in _KIND_WORDS or t.startswith(_KIND_PREFIXES)}
    kinds = tuple(sorted({_kind_of(t) for t in kind_words}))
    if "settled on" in low and "decision" not in kinds:
        kinds = tuple(sorted((*kinds, "decision")))
    role = None
    if "i" in ws and _ROLE_USER.search(text):
        role = "user"
    elif "you" in ws and _ROLE_ASSISTANT.search(text):
        role = "assistant"
    entity = None
    em = _ENTITY.search(text) if ("." in text or "()" in text) else None
    if em is not None:
        entity = em.group(1) or f"{em.group(2)}()"
    tests = bool(ws & _GATE_TESTS)
    hole = bool(ws & _GATE_ENTITY_HOLE) and _ENTITY_HOLE.search(text) is not None
    tool = None
    if entity is not None or tests or hole:
        tool = next((name for name, rx in _TOOLS if rx.search(text)), None)
    if tool is not None and entity is None and not tests:
        if hole:
            unbound.append("causal_entity")
        else:
            tool = None
    if tool is not None or entity is not None:
        kinds = tuple(k for k in kinds if k != "code_fact")
    subject = predicate = topic = None
    pm = _POSSESSIVE.search(text) if "'s" in text else None
    wm = _WHO_VERB.match(text) if pm is None and toks[:1] == ["who"] else None
    dm = _DOES_VERB.match(text) if pm is None and wm is None and ws & _GATE_DOES else None
    if pm is not None:
        subject, predicate = pm.group(1), pm.group(2).lower()
    elif wm is not None and not asks_time:
        predicate, topic = wm.group(1).lower(), " ".join(wm.group(2).lower().split())
    elif dm is not None and dm.group(2).lower() not in _STOP:
        subject, predicate = dm.group(1), _third_person(dm.group(2).lower())
        used_verb = dm.group(2).lower()
    if subject is None and entity is None and wm is None:
        subject = _name(text)
    if subject is None and ws & _GATE_PRONOUN and _PRONOUN_SUBJECT.search(text):
        unbound.append("subject")
    if topic is None and ws & _GATE_TOPIC:
        tm = _TOPIC.search(text)
        if tm is not None and not set(tm.group(1).lower().split()) <= _STOP | _GATE_REL_UNIT:
            topic = " ".join(tm.group(1).lower().split())  # "talk about yesterday": no topic
    rm = _REALM.search(text) if "realm" in low or "project" in ws else None
    if rm is not None and realm is None:
        realm = rm.group(1) or rm.group(2)
    used = {used_verb} if dm is not None and predicate is not None else set()
    for part in (subject, predicate, topic, realm, entity):
        if part:
            used.update(_WORD.findall(part.lower()))
    rest = [
        w
        for w in toks
        if w not in _STOP and w not in used and w not in _MONTHS and w not in _DAYS
        and w not in kind_words and not _DATEISH.fullmatch(w)
        and not (tool is not None and any(rx.fullmatch(w) for _, rx in _TOOLS))
    ]  # fmt: skip
    return RecallRequest(
        text=text,
        ref_ms=ref_ms,
        kind_filter=kinds,
        realm=realm,
        subject=subject,
        predicate=predicate,
        topic=topic,
        freetext=" ".join(rest) or None,
        time_from_ms=lo,
        time_to_ms=hi,
        months=months,
        asks_time=asks_time,
        causal_tool=tool,
        causal_entity=entity,
        role=role,
        unbound=tuple(sorted(set(unbound))),
    )


def _third_person(verb: str) -> str:
    if verb.endswith("s"):
        return verb
    if verb.endswith(("ch", "sh", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"
