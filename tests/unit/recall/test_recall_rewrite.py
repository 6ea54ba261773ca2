"""chitta.recall.rewrite.declarative: questions into statement word order (hand-written expectations)."""

from __future__ import annotations

import pytest

from chitta.errors import InvalidArgument
from chitta.recall.rewrite import declarative


@pytest.mark.parametrize(
    ("question", "statement"),
    [
        ("What did Caroline research?", "Caroline research"),
        ("When did Melanie paint a sunrise?", "Melanie paint a sunrise"),
        ("What activities does Melanie partake in?", "Melanie partake in activities"),
        ("How many children does Melanie have?", "Melanie have children"),
        ("How long ago was Caroline's 18th birthday?", "Caroline's 18th birthday"),
        ("What is Caroline's identity?", "Caroline's identity"),
        ("What kind of art does Caroline make?", "Caroline make art"),
        ("In which month was John in Italy?", "John in Italy month"),
        (
            "Who supports Caroline?",
            "supports Caroline",
        ),  # no inverted auxiliary: only the wh-word goes
        ("Would Caroline pursue writing as a career?", "Caroline pursue writing as a career"),
        ("How does Gina stay confident?", "Gina stay confident"),
        (
            "Caroline went to a support group.",
            "Caroline went to a support group.",
        ),  # a statement: unchanged
        ("What?", "What?"),  # nothing left: unchanged
        ("", ""),
    ],
)
def test_declarative(question: str, statement: str) -> None:
    assert declarative(question) == statement


def test_noun_phrase_kept_in_place() -> None:
    assert declarative("What activities does Melanie partake in?", move_noun_phrase=False) == (
        "activities Melanie partake in"
    )


def test_long_noun_phrase_is_not_searched_past_four_words() -> None:
    # the auxiliary lies 5 words on: the wh-word goes, the rest stays as written
    q = "What kind of counseling and mental health services is Caroline pursuing?"
    assert declarative(q) == "counseling and mental health services is Caroline pursuing"


def test_not_a_string() -> None:
    with pytest.raises(InvalidArgument):
        declarative(None)  # type: ignore[arg-type]
