"""update(id, text=) re-extracts (chitta/field/extract_write.py ``update_ops``).

Oracles: the facts each text states (written out by hand), the field's controllable
clock for the update's time, and the log: the ops are in the update's own Batch, and
a reopen with the extractor replaced gives the same graph (replay never extracts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chitta

T0 = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def facts(f: chitta.Field, **query: Any) -> set[tuple[str, str, str]]:
    rows = f.call("kg_query", limit=1000, **query)["triplets"]
    return {(r["subject"], r["predicate"], r["object"]) for r in rows}


def test_update_text_replaces_the_memorys_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, clock = tmp_path / "f", Clock()
    with chitta.open(root, embedder=None, clock=clock) as f:
        f.call("kg_set_extraction", on=True)
        mid = f.remember("Maria lives in Lisbon. Maria uses Rust. Maria has a cat.")
        other = f.remember("Maria has a cat.")  # a second source: that fact stays
        clock.now += 10
        f.update(mid, text="Maria lives in Porto. Maria uses Rust.")
        now = facts(f)
        assert now == {
            ("Maria", "lives_in", "Porto"),
            ("Maria", "uses", "Rust"),
            ("Maria", "has", "cat"),
        }
        # Lisbon ends at the update's time, not before; Rust (in both texts) is untouched
        assert facts(f, as_of=T0 + 9) == {
            ("Maria", "lives_in", "Lisbon"),
            ("Maria", "uses", "Rust"),
            ("Maria", "has", "cat"),
        }
        rust = f.call("kg_query", subject="Maria", predicate="uses", object="Rust")["triplets"][0]
        assert rust["weight"] == 1.0 and rust["source_memory_ids"] == [mid]
        porto = f.call("kg_query", subject="Maria", predicate="lives_in")["triplets"][0]
        assert porto["valid_from"] == T0 + 10 and porto["source_memory_ids"] == [mid]
        cat = f.call("kg_query", subject="Maria", predicate="has", object="cat")["triplets"][0]
        assert sorted(cat["source_memory_ids"]) == sorted([mid, other])
        clock.now += 10
        f.update(mid, tags=["x"])  # no text: the facts stay as they are
        assert facts(f) == now
        f.update(mid, text="Nothing to see here.")
        assert facts(f) == {("Maria", "has", "cat")}
        final = f.call("kg_query", limit=1000, as_of=T0 + 15)
    # the update's own Batch: the content change and its fact ops together
    records = list(chitta.field.inspect.iter_records(root))
    groups = [[op["op"] for op in r["fields"]["ops"]] for r in records if r["op"] == "Batch"]
    updates = [g for g in groups if g[0] == "UpdateMemoryContent"]
    assert updates == [  # the two text updates (the tags one is a lone op, no facts)
        ["UpdateMemoryContent", "InvalidateTriplet", "AddTriplet"],
        ["UpdateMemoryContent", "InvalidateTriplet", "InvalidateTriplet"],
    ], updates

    from chitta.encode import extract as extractor
    from chitta.field import extract_write

    def changed(text: str) -> list[Any]:
        return [extractor.Extracted("Replay", "re_extracted", text[:10])]

    monkeypatch.setattr(extract_write, "extract", changed)
    monkeypatch.setattr(extractor, "extract", changed)
    with chitta.open(root, embedder=None, read_only=True) as f:
        assert facts(f) == {("Maria", "has", "cat")}
        assert f.call("kg_query", limit=1000, as_of=T0 + 15) == final


def test_update_with_extraction_off_leaves_the_facts(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "g", embedder=None) as f:
        mid = f.remember("Jeff uses Rust.")
        f.call("kg_add", subject="Jeff", predicate="uses", object="Rust", source_memory_id=mid)
        f.update(mid, text="Jeff uses Go.")
        assert facts(f) == {("Jeff", "uses", "Rust")}
