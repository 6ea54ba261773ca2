"""Recall context (chitta.recall.context): meta["recall_context"] is found by
the keyword lane, never shown, and follows updates, deletes and reopening."""

from __future__ import annotations

from pathlib import Path

import chitta
from chitta.recall.context import CONTEXT_KEY, MAX_CONTEXT_CHARS, context_of, keyword_document

CTX = {CONTEXT_KEY: "Ben: When did you run the charity race?"}


def bm25_ids(field: chitta.Field, query: str) -> list[int]:
    return [h.id for h in field.recall(query, lanes=("bm25",), touch=False)]


def test_context_of_reads_only_nonempty_strings() -> None:
    assert context_of(None) is None
    assert context_of({}) is None
    assert context_of({CONTEXT_KEY: 3}) is None
    assert context_of({CONTEXT_KEY: "  "}) is None
    assert context_of({CONTEXT_KEY: "x"}) == "x"
    assert context_of({CONTEXT_KEY: "a" * (MAX_CONTEXT_CHARS + 5)}) == "a" * MAX_CONTEXT_CHARS
    assert keyword_document("t", None) == "t"
    assert keyword_document("t", "c") == "c\nt\nt\nt"  # own text weighted 3x (OWN_TEXT_WEIGHT)


def test_memory_found_by_its_context_and_shown_without_it(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        a = field.remember("Ana: Yes, last Tuesday!", meta=CTX)
        b = field.remember("Ana: The weather was lovely.")
        hits = field.recall("charity race", lanes=("bm25",), touch=False)
        assert [h.id for h in hits] == [a]
        assert hits[0].text == "Ana: Yes, last Tuesday!"
        assert bm25_ids(field, "weather") == [b]
        assert bm25_ids(field, "tuesday") == [a]


def test_context_survives_reopening(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        a = field.remember("Ana: Yes, last Tuesday!", meta=CTX)
    with chitta.open(tmp_path / "f", embedder=None) as field:
        assert bm25_ids(field, "charity race") == [a]


def test_new_text_keeps_the_context(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        a = field.remember("Ana: Yes, last Tuesday!", meta=CTX)
        assert bm25_ids(field, "charity") == [a]
        field.update(a, text="Ana: Yes, last Wednesday!")
        assert bm25_ids(field, "charity") == [a]
        assert bm25_ids(field, "wednesday") == [a]
        assert bm25_ids(field, "tuesday") == []


def test_new_meta_without_context_drops_it(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        a = field.remember("Ana: Yes, last Tuesday!", meta=CTX)
        field.update(a, meta={"other": 1})
        assert bm25_ids(field, "charity") == []
        assert bm25_ids(field, "tuesday") == [a]
        field.update(a, meta={CONTEXT_KEY: "Ben: Did you paint the lake?"})
        assert bm25_ids(field, "lake") == [a]


def test_forgotten_memory_not_found_by_its_context(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as field:
        a = field.remember("Ana: Yes, last Tuesday!", meta=CTX)
        field.remember("Ben: I ran a race too.")
        assert a in bm25_ids(field, "race")
        field.forget(a)
        assert a not in bm25_ids(field, "race")
        assert bm25_ids(field, "charity") == []


def test_first_context_given_later_needs_the_text_in_the_same_update(tmp_path: Path) -> None:
    # Documented limit: the index keeps no text of memories that never had a context.
    with chitta.open(tmp_path / "f", embedder=None) as field:
        a = field.remember("Ana: Yes, last Tuesday!")
        field.update(a, meta=CTX)
        assert bm25_ids(field, "charity") == []
        field.update(a, text="Ana: Yes, last Tuesday!", meta=CTX)
        assert bm25_ids(field, "charity") == [a]
