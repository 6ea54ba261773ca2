"""Relative time expressions, resolved against a reference day.

"I went to the support group yesterday", written with ``at=`` 8 May 2023, is about
7 May 2023. :func:`relative_spans` finds the relative expressions of a text and
returns the UTC spans ``[lo_ms, hi_ms)`` they name, counted from ``ref_ms``: the
memory's own date for a memory's text, the asker's reference time for a query.

Recognised (English, case-insensitive):

- ``today``, ``tonight``, ``this morning|afternoon|evening``: the reference day;
- ``yesterday``, ``last night``: the day before; ``the day before yesterday``: two before;
- ``N days|weeks|months|years ago`` (N a numeral, ``a``, ``one``..``twelve``, ``a couple of``,
  ``a few`` = 3): that day, or the week / month / year around it;
- ``last|this|next week|weekend|month|year``: the calendar unit (weeks run Monday to Sunday);
- ``last|this|next <weekday>`` and ``on <weekday>``: the nearest such day before the reference
  (``next``: after; ``this``: in the reference week).

:func:`event_spans` adds the absolute dates a text names (:mod:`chitta.recall.timeq`), a
year-less month taken in the reference year: a memory's *event dates* are its own day
plus all of these.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone

from chitta.recall.timeq import DAY_MS, query_times

_NUM = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUM_RE = r"(\d{1,3}|a couple of|a couple|couple of|a few|few|several|an|a|one|two|three|four|" \
    r"five|six|seven|eight|nine|ten|eleven|twelve)"  # fmt: skip
_DAY_RE = "(" + "|".join(_WEEKDAYS) + ")"
_PATTERN = re.compile(
    r"\b(?:"
    r"(the day before yesterday)"  # g1
    r"|(yesterday|last night)"  # g2
    r"|(today|tonight|this (?:morning|afternoon|evening))"  # g3
    rf"|{_NUM_RE}\s+(day|week|month|year)s?\s+ago"  # g4 count, g5 unit
    r"|(last|this|next|past)\s+(week|weekend|month|year)"  # g6 which, g7 unit
    rf"|(last|this|next|on)\s+{_DAY_RE}"  # g8 which, g9 weekday
    r")\b",
    re.IGNORECASE,
)
# Every form above contains one of these words: most texts are told "none" by this scan.
_MAYBE = re.compile(r"(?i)\b(?:yesterday|today|tonight|night|ago|last|this|next|past|on)\b")


def _day0(ref_ms: int) -> datetime:
    d = datetime.fromtimestamp(ref_ms / 1000, timezone.utc)
    return datetime(d.year, d.month, d.day, tzinfo=timezone.utc)


def _ms(d: datetime) -> int:
    return int(d.timestamp() * 1000)


def _day(d: datetime) -> tuple[int, int]:
    lo = _ms(d)
    return lo, lo + DAY_MS


def _month_of(year: int, month: int) -> tuple[int, int]:
    while month < 1:
        year, month = year - 1, month + 12
    while month > 12:
        year, month = year + 1, month - 12
    lo = datetime(year, month, 1, tzinfo=timezone.utc)
    hi = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc)
    return _ms(lo), _ms(hi)


def _year_of(year: int) -> tuple[int, int]:
    return (
        _ms(datetime(year, 1, 1, tzinfo=timezone.utc)),
        _ms(datetime(year + 1, 1, 1, tzinfo=timezone.utc)),
    )


def _count(word: str) -> int:
    w = " ".join(word.lower().split())
    return int(w) if w.isdigit() else _NUM[w]


def _unit_around(day: datetime, unit: str, n: int) -> tuple[int, int]:
    """The span ``n`` units before ``day``: a day, a week around it, its month or its year."""
    if unit == "day":
        return _day(day - timedelta(days=n))
    if unit == "week":
        mid = day - timedelta(days=7 * n)
        return _ms(mid - timedelta(days=3)), _ms(mid + timedelta(days=4))
    if unit == "month":
        return _month_of(day.year, day.month - n)
    return _year_of(day.year - n)


def _calendar(day: datetime, which: str, unit: str) -> tuple[int, int]:
    step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
    if unit in ("week", "weekend"):
        monday = day - timedelta(days=day.weekday()) + timedelta(days=7 * step)
        if unit == "weekend":
            sat = monday + timedelta(days=5)
            if which in ("last", "past") and day.weekday() >= 5:
                sat = day - timedelta(days=day.weekday() - 5) - timedelta(days=7)
            return _ms(sat), _ms(sat + timedelta(days=2))
        return _ms(monday), _ms(monday + timedelta(days=7))
    if unit == "month":
        return _month_of(day.year, day.month + step)
    return _year_of(day.year + step)


def _weekday(day: datetime, which: str, name: str) -> tuple[int, int]:
    want = _WEEKDAYS[name.lower()]
    if which == "next":
        ahead = (want - day.weekday()) % 7 or 7
        return _day(day + timedelta(days=ahead))
    if which == "this":
        return _day(day - timedelta(days=day.weekday()) + timedelta(days=want))
    back = (day.weekday() - want) % 7
    if which == "last" and back == 0:
        back = 7
    return _day(day - timedelta(days=back))


def relative_spans(text: str, ref_ms: int) -> tuple[tuple[int, int], ...]:
    """The spans the relative expressions of ``text`` name, counted from the day of ``ref_ms``."""
    if not text or _MAYBE.search(text) is None:
        return ()
    day = _day0(ref_ms)
    out: list[tuple[int, int]] = []
    for m in _PATTERN.finditer(text):
        g = m.groups()
        if g[0]:
            out.append(_day(day - timedelta(days=2)))
        elif g[1]:
            out.append(_day(day - timedelta(days=1)))
        elif g[2]:
            out.append(_day(day))
        elif g[3]:
            out.append(_unit_around(day, g[4].lower(), _count(g[3])))
        elif g[5]:
            out.append(_calendar(day, g[5].lower(), g[6].lower()))
        elif g[7]:
            out.append(_weekday(day, g[7].lower(), g[8]))
    return tuple(out)


def event_spans(text: str, ref_ms: int) -> tuple[tuple[int, int], ...]:
    """The event dates of a text written at ``ref_ms``: its relative expressions, the absolute
    dates it names (a year-less month or day in the year of ``ref_ms``), and its own day."""
    spans = list(relative_spans(text, ref_ms))
    named = query_times(text)
    if named is not None:
        spans.extend(named.spans)
        year = _day0(ref_ms).year
        spans.extend(_month_of(year, mo) for mo in sorted(named.months))
    spans.append(_day(_day0(ref_ms)))
    return tuple(spans)


def names_a_time(text: str) -> bool:
    """Whether ``text`` states a time (a relative expression or an absolute date): what a
    memory answering "when ...?" usually carries."""
    if not text:
        return False
    if _MAYBE.search(text) is not None and _PATTERN.search(text) is not None:
        return True
    return query_times(text) is not None
