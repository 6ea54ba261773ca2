"""Write-time extraction (chitta/field/extract_write.py) through a real field.

Oracles: the facts the sentences state (written out by hand per test), the field's
controllable clock for the times, and the log itself for replay (a reopen with the
extractor replaced must rebuild the same graph from the logged ops alone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chitta
from chitta.encode import HashingEmbedder
from chitta.errors import InvalidArgument

T0 = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def facts(f: chitta.Field, **query: Any) -> set[tuple[str, str, str]]:
    rows = f.call("kg_query", limit=1000, **query)["triplets"]
    return {(r["subject"], r["predicate"], r["object"]) for r in rows}


def row(f: chitta.Field, s: str, p: str, o: str, **query: Any) -> dict[str, Any]:
    rows = f.call("kg_query", subject=s, predicate=p, object=o, **query)["triplets"]
    assert len(rows) == 1, rows
    return dict(rows[0])


@pytest.fixture
def field(tmp_path: Path) -> Any:
    clock = Clock()
    f = chitta.open(tmp_path / "f", embedder=None, clock=clock)
    f.call("kg_set_extraction", on=True)
    yield f, clock
    f.close()


def test_off_without_an_embedder_on_with_one(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "a", embedder=None) as f:
        f.remember("Jeff uses Rust.")
        assert facts(f) == set()
        assert f.call("kg_extract", text="x")["extraction_on"] is False
    with chitta.open(tmp_path / "b", embedder=HashingEmbedder(32)) as f:
        mid = f.remember("Jeff uses Rust.")
        assert facts(f) == {("Jeff", "uses", "Rust")}
        assert row(f, "Jeff", "uses", "Rust")["source_memory_ids"] == [mid]
        f.call("kg_set_extraction", on=False)
        f.remember("Maria uses Go.")
        assert facts(f) == {("Jeff", "uses", "Rust")}


def test_turning_it_on_reaches_the_plain_remember_path(field: Any) -> None:
    f, _ = field
    f.remember("Jeff uses Rust.")  # remember(text) alone: the native entry when extraction is off
    f.remember_many(["Rust has async via Tokio.", {"text": "Maria lives in Lisbon."}])
    assert facts(f) == {
        ("Jeff", "uses", "Rust"),
        ("Rust", "has", "async"),
        ("Maria", "lives_in", "Lisbon"),
    }


def test_reopened_with_the_setting_on_it_still_extracts(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.call("kg_set_extraction", on=True)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        f.remember("Jeff uses Rust.")
        assert facts(f) == {("Jeff", "uses", "Rust")}


def test_a_later_functional_fact_invalidates_the_earlier_at_its_time(field: Any) -> None:
    f, clock = field
    f.remember("Maria lives in Lisbon.")
    clock.now = T0 + 100
    f.remember("Maria lives in Porto.", at=T0 + 50)  # the new memory's time is its event time
    assert facts(f, subject="Maria") == {("Maria", "lives_in", "Porto")}
    lisbon = row(f, "Maria", "lives_in", "Lisbon", as_of=T0 + 10)
    assert lisbon["invalidated_at"] == T0 + 50
    assert facts(f, subject="Maria", as_of=T0 + 49) == {("Maria", "lives_in", "Lisbon")}
    assert facts(f, subject="Maria", as_of=T0 + 50) == {("Maria", "lives_in", "Porto")}
    # As the field knew it before the second memory: Lisbon, still current.
    assert facts(f, subject="Maria", known_at=T0 + 1) == {("Maria", "lives_in", "Lisbon")}


def test_a_non_functional_fact_does_not_invalidate(field: Any) -> None:
    f, clock = field
    f.remember("Jeff uses Rust.")
    clock.now += 10
    f.remember("Jeff uses Go.")
    assert facts(f, subject="Jeff") == {("Jeff", "uses", "Rust"), ("Jeff", "uses", "Go")}


def test_an_older_memory_does_not_supersede_a_newer_fact(field: Any) -> None:
    f, clock = field
    clock.now = T0 + 100
    f.remember("Tom works at SAP.")
    f.remember("Tom works at Siemens.", at=T0)  # imported late, happened earlier
    assert facts(f, subject="Tom") == {("Tom", "works_at", "SAP")}
    siemens = row(f, "Tom", "works_at", "Siemens", as_of=T0 + 1)
    assert siemens["invalidated_at"] == T0 + 100


def test_moving_supersedes_where_one_lives(field: Any) -> None:
    f, clock = field
    f.remember("Jeff lives in Paris.")
    clock.now += 60
    f.remember("Jeff moved to Berlin.")
    assert facts(f, subject="Jeff", predicate="lives_in") == {("Jeff", "lives_in", "Berlin")}
    assert row(f, "Jeff", "lives_in", "Paris", as_of=T0)["invalidated_at"] == T0 + 60


def test_duplicates_reinforce(field: Any) -> None:
    f, clock = field
    a = f.remember("Jeff uses Rust.")
    clock.now += 1
    b = f.remember("Jeff uses Rust and Tokio.")
    r = row(f, "Jeff", "uses", "Rust")
    assert r["weight"] == 2.0
    assert r["source_memory_ids"] == [a, b]
    assert row(f, "Jeff", "uses", "Tokio")["weight"] == 1.0


def test_negation_invalidates_the_positive_and_back(field: Any) -> None:
    f, clock = field
    f.remember("Ana uses Vim.")
    clock.now += 10
    f.remember("Ana no longer uses Vim.")
    assert facts(f, subject="Ana") == {("Ana", "not_uses", "Vim")}
    assert row(f, "Ana", "uses", "Vim", as_of=T0)["invalidated_at"] == T0 + 10
    clock.now += 10
    f.remember("Ana uses Vim.")
    assert facts(f, subject="Ana") == {("Ana", "uses", "Vim")}


def test_a_past_state_is_not_current_but_was(field: Any) -> None:
    f, clock = field
    clock.now = T0 + 1000
    f.remember("Jeff used to work at Microsoft.")
    assert facts(f, subject="Jeff") == set()
    assert facts(f, subject="Jeff", as_of=T0) == {("Jeff", "works_at", "Microsoft")}
    # A past event stays true: it happened.
    f.remember("Sofia founded Brightline.")
    assert facts(f, subject="Sofia") == {("Sofia", "founded", "Brightline")}


def test_within_one_batch_later_memories_win(field: Any) -> None:
    f, _ = field
    f.remember_many(
        [
            {"text": "Lena lives in Oslo.", "at": T0 - 20},
            {"text": "Lena lives in Bergen.", "at": T0 - 10},
        ]
    )
    assert facts(f, subject="Lena") == {("Lena", "lives_in", "Bergen")}
    assert row(f, "Lena", "lives_in", "Oslo", as_of=T0 - 15)["invalidated_at"] == T0 - 10


def test_replay_does_not_extract_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "f"
    clock = Clock()
    with chitta.open(root, embedder=None, clock=clock) as f:
        f.call("kg_set_extraction", on=True)
        f.remember("Maria lives in Lisbon. Maria uses Rust.")
        clock.now += 5
        f.remember_many(["Maria moved to Porto.", "Rust has async via Tokio."])
        before = f.call("kg_query", limit=1000, as_of=T0 - 1e6)
        current = f.call("kg_query", limit=1000)
        assert current["total"] == 4

    from chitta.encode import extract as extractor
    from chitta.field import extract_write

    def changed(text: str) -> list[Any]:
        return [extractor.Extracted("Replay", "re_extracted", text[:10])]

    monkeypatch.setattr(extract_write, "extract", changed)
    monkeypatch.setattr(extractor, "extract", changed)
    with chitta.open(root, embedder=None, read_only=True) as f:
        assert f.call("kg_query", limit=1000) == current
        assert f.call("kg_query", limit=1000, as_of=T0 - 1e6) == before
    with chitta.open(root, embedder=None, clock=clock) as f:  # the changed extractor is live
        f.remember("Anything at all.")
        assert ("Replay", "re_extracted", "Anything a") in facts(f)


def test_kg_extract_previews_and_writes_nothing(field: Any) -> None:
    f, _ = field
    before = f.stats().records_applied
    out = f.call("kg_extract", text="Ben isn't the team lead. Ben will join Acme.")
    assert out["triplets"] == [
        {
            "subject": "Ben",
            "predicate": "not_is",
            "object": "team lead",
            "negated": True,
            "tense": "present",
        },
        {
            "subject": "Ben",
            "predicate": "joined",
            "object": "Acme",
            "negated": False,
            "tense": "future",
        },
    ]
    assert f.stats().records_applied == before
    assert facts(f) == set()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("kg_set_extraction", {"on": "yes"}),
        ("kg_set_extraction", {"on": 1}),
        ("kg_set_extraction", {}),
        ("kg_extract", {"text": 3}),
        ("kg_extract", {"text": ""}),
        ("kg_extract", {"text": "x", "more": 1}),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    field: Any, name: str, arguments: dict[str, Any]
) -> None:
    f, _ = field
    before = f.stats().records_applied
    with pytest.raises(InvalidArgument):
        f.call(name, **arguments)
    assert f.stats().records_applied == before
    assert f.call("kg_extract", text="x")["extraction_on"] is True


def test_future_facts_are_plans(field: Any) -> None:
    f, clock = field
    f.remember("Omar works at Acme.")
    clock.now += 1
    f.remember("Omar will work at Initech.")
    assert facts(f, subject="Omar") == {
        ("Omar", "works_at", "Acme"),
        ("Omar", "works_at", "Initech"),
    }
    assert row(f, "Omar", "works_at", "Initech")["confidence"] == 0.5


def test_a_background_embedder_gets_the_memory_and_its_facts_in_one_write(tmp_path: Path) -> None:
    from _deferred_embedders import Gated

    model = Gated(32)
    model.gate.clear()  # the vector cannot arrive before remember() returns
    with chitta.open(tmp_path / "f", embedder=model) as f:
        mid = f.remember("Priya works at Stripe.")
        assert facts(f) == {("Priya", "works_at", "Stripe")}  # logged with the put
        assert row(f, "Priya", "works_at", "Stripe")["source_memory_ids"] == [mid]
        model.gate.set()
        assert f.wait_embedded(timeout=30)
        memory = f.get(mid)
        assert memory.embedding is not None
        assert memory.text == "Priya works at Stripe."
