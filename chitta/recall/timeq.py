"""Dates a query names, as a soft time prior over memories' event times.

"What did Maria donate in December 2023?" asks about what happened then: the
memories whose event time (``Memory.created_ms``, the ``at`` they were
written with) falls in December 2023 are the likelier answers.
:func:`query_times` finds the absolute dates a query names and returns them as
a :class:`QueryTimes`; ``RecallSettings.time_prior`` multiplies the fused
score of the candidates inside it (``slack`` days after each span count too:
an event is often told some days after it happened).

Recognised (English, month names capitalised as written):

- a day: ``8 May 2023``, ``8th of May, 2023``, ``May 8, 2023``, ``2023-05-08``;
- a month: ``May 2023``, ``December, 2023``;
- a month without a year (``in June``, ``June 3rd``): that month of any year;
- a year alone: ``in 2022``.

Relative expressions ("last year", "yesterday", "3 weeks ago") are left
alone on purpose: whether they count from the asker's now or from the time a
memory talks about cannot be told from the query. "May" and "March" count as
months only next to a number or after a preposition ("in May"), so the verbs
do not.
"""

from __future__ import annotations

import calendar
import dataclasses
import re
from datetime import datetime, timezone

import numpy as np
import numpy.typing as npt

DAY_MS = 86_400_000

_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
_ABBREV = {name: i for i, name in enumerate(calendar.month_abbr) if name} | {"Sept": 9}
_AMBIGUOUS = {"May", "March"}  # also verbs: months only beside a number or after a preposition
_PREPOSITIONS = {
    "in",
    "on",
    "of",
    "since",
    "during",
    "until",
    "by",
    "from",
    "before",
    "after",
    "early",
    "late",
    "mid",
    "through",
    "throughout",
    "between",
    "and",
    "around",
    "last",
    "next",
    "this",
}
_MONTH_RE = "(" + "|".join(sorted([*_MONTHS, *_ABBREV], key=len, reverse=True)) + r")\.?"
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d{2})"
# One alternation, tried left to right at each position: the most specific forms first.
_PATTERN = re.compile(
    r"\b(?:"
    rf"{_ORD}\s+(?:of\s+)?{_MONTH_RE},?\s+{_YEAR}"  # 8 May 2023, 8th of May, 2023   (g1 day, g2 month, g3 year)
    rf"|{_MONTH_RE}\s+{_ORD},?\s+{_YEAR}"  # May 8, 2023                                (g4 month, g5 day, g6 year)
    r"|((?:19|20)\d{2})-(\d{2})-(\d{2})"  # 2023-05-08                                 (g7 year, g8 month, g9 day)
    rf"|{_MONTH_RE},?\s+{_YEAR}"  # May 2023                                          (g10 month, g11 year)
    rf"|{_ORD}\s+(?:of\s+)?{_MONTH_RE}"  # 8 May                                       (g12 day, g13 month)
    rf"|{_MONTH_RE}\s+{_ORD}\b"  # May 8                                               (g14 month, g15 day)
    rf"|{_MONTH_RE}"  # May                                                             (g16 month)
    rf"|{_YEAR}"  # 2023                                                                (g17 year)
    r")\b"
)


def _ms(dt: datetime) -> int:
    return int(dt.replace(tzinfo=timezone.utc).timestamp() * 1000)


def _month_span(year: int, month: int) -> tuple[int, int]:
    end = datetime(year + 1, 1, 1) if month == 12 else datetime(year, month + 1, 1)
    return _ms(datetime(year, month, 1)), _ms(end)


@dataclasses.dataclass(frozen=True)
class QueryTimes:
    """Absolute spans ``[lo_ms, hi_ms)`` (UTC) and months of any year that a query names."""

    spans: tuple[tuple[int, int], ...] = ()
    months: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.spans or self.months)

    def contains(self, ms: int, *, slack_days: float = 0.0) -> bool:
        """Whether event time ``ms`` lies in a span (or a named month), or up to ``slack_days`` after one."""
        return bool(self.mask(np.array([ms], np.int64), slack_days=slack_days)[0])

    def mask(self, ms: npt.NDArray[np.int64], *, slack_days: float = 0.0) -> npt.NDArray[np.bool_]:
        """:meth:`contains` for an array of event times."""
        ms = np.asarray(ms, np.int64)
        slack = int(slack_days * DAY_MS)
        hit = np.zeros(ms.shape, np.bool_)
        for lo, hi in self.spans:
            hit |= (ms >= lo) & (ms < hi + slack)
        if self.months and len(ms):
            years = {datetime.fromtimestamp(int(m) / 1000, timezone.utc).year for m in ms.tolist()}
            for y in {
                y for yr in years for y in (yr - 1, yr)
            }:  # a December's slack runs into January
                for m in self.months:
                    lo, hi = _month_span(y, m)
                    hit |= (ms >= lo) & (ms < hi + slack)
        return hit


def _month(name: str | None) -> int | None:
    """The month a matched name (full or abbreviated) means."""
    if name is None:
        return None
    name = name.rstrip(".")
    if name in _MONTHS:
        return _MONTHS[name]
    return _ABBREV.get(name)


def _valid_day(year: int, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= calendar.monthrange(year, month)[1]


# Every form _PATTERN knows starts, at a word boundary, with a digit or a month name
# (whose first three letters this lists): a query without one names no date, and
# most queries are told so by this one cheap scan.
_MAYBE = re.compile(
    r"\b(?:\d|" + "|".join(sorted({name[:3] for name in [*_MONTHS, *_ABBREV]})) + ")"
)


def query_times(text: str) -> QueryTimes | None:
    """The dates ``text`` names (see the module doc), or None when it names none."""
    if not isinstance(text, str) or not text or _MAYBE.search(text) is None:
        return None
    return _scan(text)


def _scan(text: str) -> QueryTimes | None:
    spans: list[tuple[int, int]] = []
    months: set[int] = set()
    for m in _PATTERN.finditer(text):
        g = m.groups()
        before = text[: m.start()].split()[-1:]
        prev = before[0].lower().strip(",.;:") if before else ""
        if g[0] or g[3] or g[6]:  # a full date
            if g[0]:
                day, month, year = int(g[0]), _month(g[1]), int(g[2])
            elif g[3]:
                month, day, year = _month(g[3]), int(g[4]), int(g[5])
            else:
                year, month, day = int(g[6]), int(g[7]), int(g[8])
            if month is not None and _valid_day(year, month, day):
                lo = _ms(datetime(year, month, day))
                spans.append((lo, lo + DAY_MS))
        elif g[9]:  # month and year
            month = _month(g[9])
            if month is not None:
                spans.append(_month_span(int(g[10]), month))
        elif g[11] or g[13]:  # a day of a month, no year: the month of any year
            month = _month(g[12] or g[13])
            if month is not None:
                months.add(month)
        elif g[15]:  # a month name alone
            name = g[15].rstrip(".")
            if name in _ABBREV and name not in _MONTHS:
                continue  # "Jan", "Sat"...: an abbreviation alone is more likely a name
            if name in _AMBIGUOUS and prev not in _PREPOSITIONS:
                continue
            months.add(_MONTHS[name])
        elif g[16]:
            year = int(g[16])
            spans.append((_ms(datetime(year, 1, 1)), _ms(datetime(year + 1, 1, 1))))
    result = QueryTimes(tuple(spans), frozenset(months))
    return result if result else None


def dated_mask(
    text: str | None, created_ms: npt.NDArray[np.int64], *, slack_days: float = 0.0
) -> npt.NDArray[np.bool_] | None:
    """Which of the candidates (event times ``created_ms``) fall in the dates ``text`` names;
    None when it names none or none falls in them (then the prior changes nothing)."""
    when = query_times(text) if text else None
    if when is None:
        return None
    hit = when.mask(created_ms, slack_days=slack_days)
    return hit if hit.any() else None
