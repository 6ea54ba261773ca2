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
:class:`EventDates` cache keyed by id (checked against the text, so an edit recomputes).
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

WHEN_PRIOR = 0.5  # LoCoMo dev (docs/DECISIONS.md D-1xx router)
CACHE_MAX = 200_000


@dataclasses.dataclass(frozen=True)
class Dated:
    text: str
    spans: tuple[tuple[int, int], ...]
    months: frozenset[int]  # calendar months the spans touch (all 12 for a year or longer)
    states_time: bool


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
    """id -> the event dates of that memory (see the module doc); a bounded cache."""

    def __init__(self) -> None:
        self._cache: dict[int, Dated] = {}

    def of(self, mid: int, text: str, created_ms: int) -> Dated:
        got = self._cache.get(mid)
        if got is not None and got.text is text or (got is not None and got.text == text):
            return got
        spans = event_spans(text, created_ms)
        dated = Dated(text, spans, _months(spans), names_a_time(text))
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[mid] = dated
        return dated


@dataclasses.dataclass
class TemporalPrior:
    """The per-candidate multiplier of a request (see the module doc)."""

    request: RecallRequest
    text_of: Callable[[int], str | None]
    dates: EventDates
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
        slack = int(self.slack_days * DAY_MS)
        t_gain, w_gain = 1.0 + self.time_prior, 1.0 + self.when_prior
        for i, (mid, at) in enumerate(zip(ids.tolist(), created_ms.tolist())):
            text = self.text_of(int(mid))
            if text is None:
                continue
            d = self.dates.of(int(mid), text, int(at))
            m = 1.0
            if ranged and any(s < hi + slack and e > lo for s, e in d.spans):  # type: ignore[operator]
                m *= t_gain
            elif months and d.months & months:
                m *= t_gain
            if asks and d.states_time:
                m *= w_gain
            out[i] = m
        self.boosted = int((out != 1.0).sum())
        return out
