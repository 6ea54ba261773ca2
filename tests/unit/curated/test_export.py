"""The export tree and its import: the files a foreign harness reads (checked
against the field's own answers), an edit entering as a human supersede, a new
file as a human fact, an unedited round trip writing nothing, a bad file
refused before anything is written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import log_bytes

import chitta
from chitta.curated.export import export_tree
from chitta.errors import InvalidArgument


def _facts(f: chitta.Field) -> dict[str, str]:
    a = f.call("memory_remember", body="ccache lives in ~/.ccache", paths=["build/cache"])["fact"]
    b = f.call("memory_remember", body="retry the socket test", kind="pitfall",
               fields={"symptom": "timeout", "fix": "retry twice"}, paths=["tests/flaky"],
               scope="repository")["fact"]  # fmt: skip
    c = f.call(
        "memory_remember",
        body="runners have two cores\nand 7 GB",
        paths=["build/ci", "build/cache"],
    )["fact"]
    return {"a": a, "b": b, "c": c}


def test_the_tree_holds_catalog_facts_index_and_manifest(
    field: chitta.Field, tmp_path: Path
) -> None:
    ids = _facts(field)
    out = tmp_path / "tree"
    seen: list[tuple[int, int]] = []
    got = export_tree(field.organ("curated"), out, lambda done, total: seen.append((done, total)))
    assert got["facts"] == 3 and seen[-1][0] == seen[-1][1]
    manifest = json.loads((out / "MANIFEST.json").read_text())
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {"MANIFEST.json"}
    assert set(manifest["files"]) == files
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest
    assert (out / "CATALOG.md").read_text() == field.call("memory_catalog")["text"]
    pitfall = (out / "fact" / f"{ids['b']}.md").read_text()
    assert "kind: pitfall" in pitfall and "field.fix: retry twice" in pitfall
    assert pitfall.endswith("---\nretry the socket test\n")
    index = (out / "index" / "build" / "cache.md").read_text()
    order = field.call("memory_recall", paths=["build/cache"], budget=100_000)["ids"]
    assert [
        line.split("[")[1].split("]")[0] for line in index.splitlines() if line.startswith("- ")
    ] == order


def test_an_unedited_round_trip_changes_nothing(
    field: chitta.Field, root: Path, tmp_path: Path
) -> None:
    _facts(field)
    field.call("memory_export", directory=str(tmp_path / "tree"))
    before = log_bytes(root)
    got = field.call("memory_import", directory=str(tmp_path / "tree"))
    assert got == {"superseded": [], "added": [], "unchanged": 3, "stale": []}
    assert log_bytes(root) == before


def test_edits_enter_as_human_supersedes(field: chitta.Field, tmp_path: Path) -> None:
    ids = _facts(field)
    out = tmp_path / "tree"
    field.call("memory_export", directory=str(out))
    path = out / "fact" / f"{ids['a']}.md"
    path.write_text(path.read_text().replace("~/.ccache", "/var/cache/ccache"))
    other = out / "fact" / f"{ids['c']}.md"
    other.write_text(other.read_text() + "\n\n")  # bytes differ, content the same: unchanged
    (out / "fact" / "new.md").write_text(
        "---\nkind: fact\npaths: tests/flaky\n---\nsockets time out on CI\n"
    )
    got = field.call("memory_import", directory=str(out))
    [(old, new)] = got["superseded"]
    assert old == ids["a"] and got["unchanged"] == 2 and len(got["added"]) == 1
    organ = field.organ("curated")
    assert organ.facts[old].superseded_by == new
    assert (
        organ.facts[new].provenance == "human"
        and organ.facts[new].body == "ccache lives in /var/cache/ccache"
    )
    assert [p.render() for p in organ.facts[new].paths] == ["build/cache"]
    assert organ.facts[got["added"][0]].provenance == "human"
    again = tmp_path / "again"
    field.call("memory_export", directory=str(again))
    assert (
        field.call("memory_import", directory=str(again))["unchanged"] == 4
    )  # the new state round-trips too


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("no header\n", "starts with"),
        ("---\nkind: fact\npaths: build/nope\n---\nx\n", "unknown topic path"),
        ("---\nkind: pitfall\npaths: build/cache\n---\nx\n", "needs the field"),
        ("---\nkind: fact\ncolour: red\npaths: build/cache\n---\nx\n", "unknown header"),
        ("---\nid: 01ARZ3NDEKTSV4RRFFQ69G5FAV\npaths: build/cache\n---\nx\n", "no fact"),
    ],
)
def test_a_bad_file_is_refused_before_anything_is_written(
    field: chitta.Field, root: Path, tmp_path: Path, text: str, match: str
) -> None:
    ids = _facts(field)
    out = tmp_path / "tree"
    field.call("memory_export", directory=str(out))
    edited = out / "fact" / f"{ids['a']}.md"
    edited.write_text(edited.read_text().replace("~/.ccache", "/elsewhere"))  # a good edit first
    (out / "fact" / "zz-bad.md").write_text(text)
    before = log_bytes(root)
    with pytest.raises(InvalidArgument, match=match):
        field.call("memory_import", directory=str(out))
    assert log_bytes(root) == before


def test_export_refuses_a_foreign_nonempty_directory(field: chitta.Field, tmp_path: Path) -> None:
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "keep.txt").write_text("mine")
    with pytest.raises(InvalidArgument, match="not empty"):
        field.call("memory_export", directory=str(tmp_path / "stuff"))
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(InvalidArgument, match="is a file"):
        field.call("memory_export", directory=str(tmp_path / "a-file"))
    with pytest.raises(InvalidArgument, match="MANIFEST"):
        field.call("memory_import", directory=str(tmp_path / "stuff"))
