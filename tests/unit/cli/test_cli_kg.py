"""`chitta kg ...` runs the knowledge graph organ's operations (real `chitta` processes;
the same operations through `Field.call` are the oracle)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from clitools import run

import chitta


def test_kg_commands_agree_with_the_operations(tmp_path: Path) -> None:
    root = str(tmp_path / "f")
    assert run("--path", root, "kg", "add", "Jeff", "uses", "Rust").returncode == 0
    assert (
        run("--path", root, "kg", "add", "jeff ", "uses", "rust", "--weight", "2").returncode == 0
    )
    r = run("--path", root, "kg", "add", "Jeff", "lives_in", "Paris", "--valid-from", "2025-01-01")
    assert r.returncode == 0, r.stderr
    r = run("--path", root, "kg", "invalidate", "Jeff", "lives_in", "Paris", "--at", "2026-03-01")
    assert r.returncode == 0, r.stderr
    assert run("--path", root, "kg", "alias", "JJ", "Jeff").returncode == 0
    by_cli = json.loads(run("--path", root, "kg", "query", "--subject", "JJ", "--json").stdout)
    old = run("--path", root, "kg", "query", "--subject", "jeff", "--as-of", "2025-06-01", "--json")
    entities = json.loads(run("--path", root, "kg", "entities", "--json").stdout)
    with chitta.open(root, read_only=True, embedder=None) as f:
        assert by_cli == json.loads(json.dumps(f.call("kg_query", subject="JJ")))
        as_of = datetime.fromisoformat("2025-06-01").timestamp()
        then = f.call("kg_query", subject="jeff", as_of=as_of)
        assert json.loads(old.stdout)["total"] == then["total"]
        assert entities["total"] == f.call("kg_entities")["total"]
    uses = [t for t in by_cli["triplets"] if t["predicate"] == "uses"]
    assert len(uses) == 1 and uses[0]["weight"] == 3.0  # "jeff "/"rust" reinforced Jeff uses Rust
    assert not [t for t in by_cli["triplets"] if t["predicate"] == "lives_in"]  # not true now
    then_lives = [t for t in json.loads(old.stdout)["triplets"] if t["predicate"] == "lives_in"]
    assert len(then_lives) == 1 and then_lives[0]["object"] == "Paris"  # true in June 2025
    table = run("--path", root, "kg", "query", "--predicate", "uses")
    assert table.returncode == 0 and "Rust" in table.stdout


def test_kg_bad_input_is_a_usage_error_and_writes_nothing(tmp_path: Path) -> None:
    root = str(tmp_path / "f")
    run("--path", root, "kg", "add", "a", "is", "b")
    before = json.loads(run("--path", root, "kg", "query", "--json").stdout)
    bad = run("--path", root, "kg", "invalidate", "a", "is", "b", "--at", "yesterday-ish")
    assert bad.returncode == 2 and "ISO date" in bad.stderr
    assert run("--path", root, "kg", "add", "a", "is", "b", "--confidence", "7").returncode == 2
    assert json.loads(run("--path", root, "kg", "query", "--json").stdout) == before
    assert run("--path", str(tmp_path / "none"), "kg", "query").returncode == 5
