"""Tokenizer rules (chitta.organs.index.bm25 docstring): Unicode, case, stopwords, stemming, errors."""

from __future__ import annotations

import pytest

from chitta.errors import InvalidArgument
from chitta.organs.index import tokenize


def test_ascii_lowercase_and_punctuation_split() -> None:
    assert tokenize("Hello, WORLD! foo-bar/baz") == ["hello", "world", "foo", "bar", "baz"]


def test_alnum_and_snake_case_tokens_stay_whole() -> None:
    assert tokenize("Listen on port8080 with v2 of snake_case") == [
        "listen",
        "port8080",
        "v2",
        "snake_case",
    ]


def test_dot_splits_and_edge_underscores_trimmed() -> None:
    assert tokenize("v2.1 config.yaml __init__") == ["v2", "1", "config", "yaml", "init"]


def test_stopwords_dropped_by_default_and_kept_on_request() -> None:
    assert tokenize("The cat is on the mat") == ["cat", "mat"]
    assert tokenize("The cat is", stopwords=False) == ["the", "cat", "is"]


def test_apostrophe_tail_is_a_stopword() -> None:
    assert tokenize("Caroline's dog doesn't bark") == ["caroline", "dog", "doesn", "bark"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ÜBER Ærø ÇA", ["über", "ærø", "ça"]),
        ("ŁÓDŹ Ŷ", ["łódź", "ŷ"]),
        ("ΣΟΦΟΣ σοφος", ["σοφοσ", "σοφοσ"]),
        ("МОСКВА Ёлка", ["москва", "ёлка"]),
        ("ＡＢＣ１２３", ["abc123"]),
        ("TIẾNG VIỆT", ["tiếng", "việt"]),
    ],
)
def test_unicode_lowercasing(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_cjk_ideographs_are_single_tokens() -> None:
    assert tokenize("東京タワーへ行く") == ["東", "京", "タワー", "へ", "行", "く"]


def test_hangul_runs_stay_whole() -> None:
    assert tokenize("한국어 텍스트") == ["한국어", "텍스트"]


def test_emoji_and_symbols_separate() -> None:
    assert tokenize("deploy🚀done €5 x×y") == ["deploy", "done", "5", "x", "y"]


def test_light_stemming_off_by_default() -> None:
    assert tokenize("running studies") == ["running", "studies"]


@pytest.mark.parametrize(
    ("words", "stem"),
    [
        ("study studies studied studying", "studi"),
        ("run runs running", "run"),
        ("paint paints painted painting", "paint"),
        ("base based basing bases", "bas"),
        ("box boxes", "box"),
        ("class classes", "class"),
    ],
)
def test_light_stemming_conflates_forms(words: str, stem: str) -> None:
    assert set(tokenize(words, stem=True)) == {stem}


def test_stemming_leaves_non_alpha_tokens() -> None:
    assert tokenize("port8080s snake_cases Städte", stem=True) == [
        "port8080s",
        "snake_cases",
        "städte",
    ]


@pytest.mark.parametrize(
    "raw",
    [b"\xff", b"ab\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80x"],
    ids=["ff", "truncated", "overlong", "surrogate", "above_max", "stray_continuation"],
)
def test_invalid_utf8_bytes_raise_invalid_argument(raw: bytes) -> None:
    with pytest.raises(InvalidArgument, match="invalid UTF-8"):
        tokenize(raw)


def test_valid_utf8_bytes_equal_str() -> None:
    text = "Grüße aus Zürich"
    assert tokenize(text.encode()) == tokenize(text)


def test_lone_surrogate_str_raises_invalid_argument() -> None:
    with pytest.raises(InvalidArgument):
        tokenize("bad \ud800 text")


def test_non_str_text_raises_invalid_argument() -> None:
    with pytest.raises(InvalidArgument):
        tokenize(42)  # type: ignore[arg-type]


def test_empty_text_has_no_tokens() -> None:
    assert tokenize("") == []
    assert tokenize("  ... --- !!! ") == []
