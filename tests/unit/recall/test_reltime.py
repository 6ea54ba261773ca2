"""Relative dates in a memory's text, resolved against its own date: checked against
dates worked out by hand on a calendar (8 May 2023 was a Monday)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chitta.recall.reltime import event_spans, names_a_time, relative_spans


def ms(y: int, m: int, d: int) -> int:
    return int(datetime(y, m, d, tzinfo=timezone.utc).timestamp() * 1000)


REF = ms(2023, 5, 8) + 15 * 3_600_000  # Monday 8 May 2023, 15:00 UTC


@pytest.mark.parametrize(
    ("text", "lo", "hi"),
    [
        ("I went to a support group yesterday", (2023, 5, 7), (2023, 5, 8)),
        ("we talked last night", (2023, 5, 7), (2023, 5, 8)),
        ("the day before yesterday it rained", (2023, 5, 6), (2023, 5, 7)),
        ("today I start", (2023, 5, 8), (2023, 5, 9)),
        ("3 days ago we met", (2023, 5, 5), (2023, 5, 6)),
        ("two weeks ago", (2023, 4, 21), (2023, 4, 28)),  # 24 April +- 3 days
        ("a month ago", (2023, 4, 1), (2023, 5, 1)),
        ("two years ago", (2021, 1, 1), (2022, 1, 1)),
        ("last week was busy", (2023, 5, 1), (2023, 5, 8)),
        ("this week", (2023, 5, 8), (2023, 5, 15)),
        ("next week", (2023, 5, 15), (2023, 5, 22)),
        ("last weekend", (2023, 5, 6), (2023, 5, 8)),
        ("last month", (2023, 4, 1), (2023, 5, 1)),
        ("last year", (2022, 1, 1), (2023, 1, 1)),
        ("last Tuesday", (2023, 5, 2), (2023, 5, 3)),
        ("last Monday", (2023, 5, 1), (2023, 5, 2)),
        ("on Friday", (2023, 5, 5), (2023, 5, 6)),
        ("next Friday", (2023, 5, 12), (2023, 5, 13)),
        ("a couple of days ago", (2023, 5, 6), (2023, 5, 7)),
    ],
)
def test_relative_expression_resolved_against_the_memory_date(
    text: str, lo: tuple[int, int, int], hi: tuple[int, int, int]
) -> None:
    assert relative_spans(text, REF) == ((ms(*lo), ms(*hi)),)


def test_last_weekend_said_on_a_sunday_is_the_one_before() -> None:
    sunday = ms(2023, 5, 14)
    assert relative_spans("last weekend", sunday) == ((ms(2023, 5, 6), ms(2023, 5, 8)),)


def test_text_without_relative_dates_names_none() -> None:
    assert relative_spans("we use postgres for the schema", REF) == ()
    assert relative_spans("", REF) == ()


def test_event_spans_add_absolute_dates_and_the_own_day() -> None:
    spans = event_spans("we fly out on 3 June 2023, and in July", REF)
    assert (ms(2023, 6, 3), ms(2023, 6, 4)) in spans
    assert (ms(2023, 7, 1), ms(2023, 8, 1)) in spans  # a year-less month: the memory's year
    assert (ms(2023, 5, 8), ms(2023, 5, 9)) in spans  # its own day


def test_names_a_time() -> None:
    assert names_a_time("I went yesterday")
    assert names_a_time("it was back in 2019")
    assert not names_a_time("the support group was powerful")
