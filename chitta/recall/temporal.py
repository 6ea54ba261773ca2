"""Date-aware ranking for the router's Temporal dispatch.

A memory's *event dates* are its own day (``at=``, ``Memory.created_ms``) plus what its
text names: relative expressions resolved against that day ("yesterday", "last Tuesday",
"two weeks ago") and absolute dates (:func:`chitta.recall.reltime.event_spans`). A
:class:`TemporalPrior` multiplies each candidate's fused score:

- by ``1 + time_prior`` when the request has a time range or months and one of the
  candidate's event dates meets them (up to ``slack_days`` after the range counts too);
- by ``1 + when_prior`` when the request asks for a time ("when ...?") and the candidate's
  text states one (it can answer with a date).

The event dates of a memory are a pure function of its text and date, kept in an
:class:`EventDates` cache keyed by id (checked against the memory's content time, so an edit recomputes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime, timezone

import numpy as np
import numpy.typing as npt

from chitta.recall.reltime import event_spans, names_a_time
from chitta.recall.router_ir import RecallRequest
from chitta.recall.timeq import DAY_MS

__all__ = ["WHEN_PRIOR", "EventDates", "TemporalPrior"]

WHEN_PRIOR = 0.5  # LoCoMo dev (docs/DECISIONS.md D-055)
CACHE_MAX = 200_000


def _months(spans: tuple[tuple[int, int], ...]) -> frozenset[int]:
    out: set[int] = set()
    for lo, hi in spans:
        if hi - lo >= 365 * DAY_MS:
            return frozenset(range(1, 13))
        a = datetime.fromtimestamp(lo / 1000, timezone.utc)
        b = datetime.fromtimestamp((hi - 1) / 1000, timezone.utc)
        y, m = a.year, a.month
        while (y, m) <= (b.year, b.month):
            out.add(m)
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return frozenset(out)


class EventDates:
    """id -> what the text of that memory says about time (see the module doc): whether it
    states a time, and the event dates it names beyond the memory's own day (kept only for
    texts that name some), with the content time each entry was computed at. A bounded cache
    (one per field handle: chitta/organs/router_log.py)."""

    def __init__(self) -> None:
        self.stamp: dict[int, int] = {}  # id -> the content time the entry was computed at
        self.states: dict[int, bool] = {}
        self.extra: dict[int, tuple[tuple[tuple[int, int], ...], frozenset[int]]] = {}

    def compute(self, mid: int, text: str | None, created_ms: int, stamp: int) -> bool:
        if len(self.states) >= CACHE_MAX:
            self.states.clear()
            self.extra.clear()
            self.stamp.clear()
        if text is None:
            return False
        spans = event_spans(text, created_ms)[:-1]  # the last one is the memory's own day
        self.extra.pop(mid, None)
        if spans:
            self.extra[mid] = (spans, _months(spans))
        self.stamp[mid] = stamp
        said = names_a_time(text)
        self.states[mid] = said
        return said

    def drop(self, mid: int) -> None:
        self.states.pop(mid, None)
        self.extra.pop(mid, None)
        self.stamp.pop(mid, None)


@dataclasses.dataclass
class TemporalPrior:
    """The per-candidate multiplier of a request (see the module doc)."""

    request: RecallRequest
    text_of: Callable[[int], str | None]
    dates: EventDates
    # ids -> when each one's content last changed (MemoriesOrgan.updated_ms): stale entries
    updated_of: Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.int64]]
    time_prior: float
    when_prior: float = WHEN_PRIOR
    slack_days: float = 0.0
    boosted: int = 0  # candidates the last call boosted (for explain)

    def __call__(
        self, ids: npt.NDArray[np.uint64], created_ms: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float64]:
        req = self.request
        out = np.ones(len(ids), np.float64)
        lo, hi = req.time_from_ms, req.time_to_ms
        ranged = lo is not None and hi is not None and self.time_prior > 0
        months = frozenset(req.months) if self.time_prior > 0 else frozenset()
        asks = req.asks_time and self.when_prior > 0
        if not (ranged or months or asks):
            return out
        ids_l = ids.tolist()
        said = list(map(self.dates.states.get, ids_l))  # the cache, read at C speed
        now = self.updated_of(ids).tolist()
        stale = [i for i, (a, b) in enumerate(zip(map(self.dates.stamp.get, ids_l), now)) if a != b]
        if stale:  # first sight of these memories (or an edited text): their dates, once each
            at = created_ms.tolist()
            for i in stale:
                mid = ids_l[i]
                said[i] = self.dates.compute(mid, self.text_of(mid), at[i], now[i])
        if ranged or months:
            created = np.asarray(created_ms, np.int64)
            day = created - created % DAY_MS
            top = (hi or 0) + int(self.slack_days * DAY_MS)
            hit = np.zeros(len(ids), np.bool_)
            if ranged:  # the memory's own day, then what its text names
                hit |= (day < top) & (day + DAY_MS > (lo or 0))
            if months:
                month = (
                    day.astype("datetime64[ms]").astype("datetime64[M]").astype(np.int64) % 12 + 1
                )
                hit |= np.isin(month, list(months))
            for i, got in enumerate(map(self.dates.extra.get, ids_l)):
                if got is None or hit[i]:
                    continue
                if ranged and any(s < top and e > (lo or 0) for s, e in got[0]) or got[1] & months:
                    hit[i] = True
            out[hit] *= 1.0 + self.time_prior
        if asks:
            out[np.array(said, np.bool_)] *= 1.0 + self.when_prior
        self.boosted = int((out != 1.0).sum())
        return out
