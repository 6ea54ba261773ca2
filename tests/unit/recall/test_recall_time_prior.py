"""The time prior: dates a query names favour memories whose event time lies in them."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.recall.timeq import DAY_MS, QueryTimes, dated_mask, query_times


def ms(y: int, m: int, d: int) -> int:
    return int(datetime(y, m, d, tzinfo=timezone.utc).timestamp() * 1000)


def day(y: int, m: int, d: int) -> tuple[int, int]:
    return (ms(y, m, d), ms(y, m, d) + DAY_MS)


@pytest.mark.parametrize(
    ("query", "spans", "months"),
    [
        ("What did Ana do on 8 May, 2023?", [day(2023, 5, 8)], set()),
        ("on the 8th of May 2023", [day(2023, 5, 8)], set()),
        ("What happened on October 13, 2023?", [day(2023, 10, 13)], set()),
        ("logs of 2024-02-29", [day(2024, 2, 29)], set()),
        ("What did Ana donate in December 2023?", [(ms(2023, 12, 1), ms(2024, 1, 1))], set()),
        ("trips in February, 2023", [(ms(2023, 2, 1), ms(2023, 3, 1))], set()),
        ("How often in 2022?", [(ms(2022, 1, 1), ms(2023, 1, 1))], set()),
        ("When did Ana go camping in June?", [], {6}),
        ("What did we do in May?", [], {5}),
        ("her birthday, June 3rd", [], {6}),
        ("Jan 5, 2024 meeting", [day(2024, 1, 5)], set()),
        (
            "in June 2023 and in July 2023",
            [(ms(2023, 6, 1), ms(2023, 7, 1)), (ms(2023, 7, 1), ms(2023, 8, 1))],
            set(),
        ),
    ],
)
def test_query_times_finds_the_dates(
    query: str, spans: list[tuple[int, int]], months: set[int]
) -> None:
    assert query_times(query) == QueryTimes(tuple(spans), frozenset(months))


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what she likes?",  # the verb, not the month
        "They march on",
        "Jan said hello",  # an abbreviation alone is a name
        "What did she do last year?",  # relative: left alone on purpose
        "on 2023-02-30",  # no such day
        "31 June 2023",
        "room 3021",  # not a year of 19xx/20xx
        "",
    ],
)
def test_query_times_ignores_what_is_not_a_date(query: str) -> None:
    assert query_times(query) is None


def test_mask_spans_months_and_slack() -> None:
    when = QueryTimes((day(2023, 5, 8),), frozenset({12}))
    times = np.array(
        [
            ms(2023, 5, 8) + 3_600_000,
            ms(2023, 5, 9),
            ms(2023, 5, 12),
            ms(2021, 12, 31),
            ms(2022, 1, 3),
            ms(2022, 3, 1),
        ],
        np.int64,
    )
    assert when.mask(times).tolist() == [True, False, False, True, False, False]
    # 5 days of slack: up to 5 days after each span (and after each December)
    assert when.mask(times, slack_days=5).tolist() == [True, True, True, True, True, False]
    assert when.contains(ms(2023, 5, 8)) and not when.contains(ms(2023, 5, 7))


def test_dated_mask_is_none_when_nothing_matches() -> None:
    times = np.array([ms(2023, 5, 8)], np.int64)
    assert dated_mask("no date here", times) is None
    assert dated_mask("in March 2020", times) is None
    assert dated_mask(None, times) is None
    got = dated_mask("in May 2023", times)
    assert got is not None and got.tolist() == [True]


def _same_text_two_dates(field: chitta.Field) -> tuple[int, int]:
    # the same text on two days: without a prior they tie (id order decides)
    a = field.remember("went hiking with the dog", at=datetime(2023, 5, 8, 12, tzinfo=timezone.utc))
    b = field.remember(
        "went hiking with the dog", at=datetime(2023, 6, 20, 12, tzinfo=timezone.utc)
    )
    return a, b


def test_a_named_date_ranks_its_memories_first(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b = _same_text_two_dates(f)
        assert [h.id for h in f.recall("hiking dog", touch=False)] == [a, b]  # the tie
        assert [h.id for h in f.recall("Who went hiking in June 2023?", touch=False)] == [b, a]
        assert [h.id for h in f.recall("Who went hiking in June?", touch=False)] == [b, a]
        assert [h.id for h in f.recall("Who went hiking on 8 May, 2023?", touch=False)] == [a, b]
        assert [h.id for h in f.recall("Who went hiking in 2019?", touch=False)] == [
            a,
            b,
        ]  # none there
        hits = f.recall("hiking in June 2023", lanes=("bm25",), touch=False)
        # b was second in the keyword lane (RRF k 20: 1/22), times 1 + RecallSettings.time_prior
        assert [h.id for h in hits] == [b, a]
        assert [h.fused for h in hits] == [pytest.approx(2 / 22), pytest.approx(1 / 21)]


def test_explain_shows_what_the_time_prior_added_and_zero_turns_it_off(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        a, b = _same_text_two_dates(f)
        by_id = {h.id: h for h in f.recall("hiking in June 2023", explain=True, touch=False)}
        time = [x for x in by_id[b].factors if x.name == "time"]
        assert not [x for x in by_id[a].factors if x.name == "time"]
        assert len(time) == 1 and time[0].kind == "prior" and time[0].value == pytest.approx(2.0)
        assert time[0].contribution > 0
        f.core.engine.settings = dataclasses.replace(f.core.engine.settings, time_prior=0.0)
        assert [h.id for h in f.recall("hiking in June 2023", touch=False)] == [a, b]


def test_slack_days_reach_memories_told_after_the_date(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        b = f.remember("went hiking with the dog", at=datetime(2023, 8, 30, tzinfo=timezone.utc))
        a = f.remember("went hiking with the dog", at=datetime(2023, 7, 2, tzinfo=timezone.utc))
        assert [h.id for h in f.recall("hiking in June 2023", touch=False)] == [
            b,
            a,
        ]  # neither in June: tie
        f.core.engine.settings = dataclasses.replace(
            f.core.engine.settings, time_prior_slack_days=7.0
        )
        assert [h.id for h in f.recall("hiking in June 2023", touch=False)] == [
            a,
            b,
        ]  # 2 July: 2 days after
        assert [h.id for h in f.recall("hiking in May 2023", touch=False)] == [
            b,
            a,
        ]  # 2 July: 32 days after


def test_the_prefilter_never_hides_a_date() -> None:
    """query_times skips the full scan when no word starts with a digit or a month's
    first letters; on texts mixing dates, near-dates and words, it answers exactly
    as the full scan (timeq._scan) does."""
    from chitta.recall import timeq

    rng = np.random.default_rng(11)
    pieces = [
        "8 May 2023",
        "May 8, 2023",
        "2023-05-08",
        "in December 2023",
        "in 2022",
        "in June",
        "Sept 3",
        "the 3rd of March",
        "March on",
        "Jan",
        "w12",
        "x2023",
        "May",
        "june",
        "DECEMBER 2023",
        "hiking",
        "what did",
        "we",
        "Caroline",
        "Sat",
        "Augusta",
        "Octopus",
        "1999",
        "20th",
        ",",
        "?",
    ]
    texts = [" ".join(rng.choice(pieces, size=int(rng.integers(1, 7)))) for _ in range(3000)]
    seen_dates = 0
    for text in texts:
        full = timeq._scan(text)
        assert query_times(text) == full, text
        seen_dates += full is not None
    assert 500 < seen_dates < len(texts)  # both paths exercised
    assert timeq._MAYBE.search("what did the team decide") is None
