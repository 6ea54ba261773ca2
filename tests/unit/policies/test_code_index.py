"""The code indexer on real git repositories made in the test: first index,
incremental re-index, edits, deletions, renames, ClearProject, and bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from code_repo import commit, git, make_repo, write

import chitta
from chitta.errors import InvalidArgument
from chitta.policies.code_index import index_code

LEDGER = """class Ledger:
    def post(self, amount):
        return self.check(amount)

    def check(self, amount):
        return amount > 0


def fetch_page(url):
    return get(url)


def get(url):
    return url
"""
UTIL = "def get(url):\n    return url\n\n\ndef slug(s):\n    return s.lower()\n"


def _organ(f: chitta.Field, name: str) -> Any:
    return f._core.registry.by_name[name]


def _state(f: chitta.Field) -> tuple[Any, ...]:
    sym, graph, files = _organ(f, "symbols"), _organ(f, "call_graph"), _organ(f, "code_files")
    return (
        {n: (s.line_start, s.line_end, s.body_hash) for n, s in sym.symbols.items()},
        {(a, b) for a, bs in graph.callees.items() for b in bs},
        {p: c.content_hash for p, c in files.files.items()},
        len(_organ(f, "symbol_events").events),
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo", {"app/ledger.py": LEDGER, "app/util.py": UTIL, "README.md": "hi"}
    )


def test_first_index_files_symbols_edges(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        r = index_code(f._core, repo, "demo")
        syms, edges, files, _ = _state(f)
    assert set(files) == {"app/ledger.py", "app/util.py"}  # README.md: no grammar
    assert set(syms) == {
        "app/ledger.py#Ledger", "app/ledger.py#Ledger.post", "app/ledger.py#Ledger.check",
        "app/ledger.py#fetch_page", "app/ledger.py#get", "app/util.py#get", "app/util.py#slug",
    }  # fmt: skip
    # self.check -> the class's check; get -> the same file's get (two files define one)
    assert edges == {
        ("app/ledger.py#Ledger.post", "app/ledger.py#Ledger.check"),
        ("app/ledger.py#fetch_page", "app/ledger.py#get"),
    }
    assert (r.files_changed, r.symbols_upserted, r.edges_added) == (2, 7, 2)
    assert (r.symbols_total, r.edges_total) == (7, 2)


def test_reindex_is_incremental_by_content_hash(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        index_code(f._core, repo, "demo")
        before = _state(f)
        again = index_code(f._core, repo, "demo")
        assert (again.files_changed, again.files_unchanged) == (0, 2) and _state(f) == before
        (repo / "app/util.py").touch()  # a new mtime, the same content: not parsed
        assert index_code(f._core, repo, "demo").files_changed == 0
        # one line inserted above Ledger.check: check and what follows move, post is edited
        write(repo, {"app/ledger.py": LEDGER.replace("        return self.check(amount)\n",
                                                     "        print(amount)\n        return self.check(amount)\n")})  # fmt: skip
        r = index_code(f._core, repo, "demo")
        assert (r.files_changed, r.files_unchanged) == (1, 1)
        ev = _organ(f, "symbol_events")
        edited = [e.symbol for e in ev.events if e.kind == "Edited"]
        # the class's text changed too; check, fetch_page and get only moved: no edit
        assert edited == ["app/ledger.py#Ledger", "app/ledger.py#Ledger.post"]
        assert r.symbols_upserted == 5  # every symbol whose span moved is upserted
        assert _organ(f, "symbols").get("app/ledger.py#get").line_start == 14


def test_deleted_file_removes_its_symbols_and_edges(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        index_code(f._core, repo, "demo")
        git(repo, "rm", "-q", "app/ledger.py")
        commit(repo, "drop ledger")
        r = index_code(f._core, repo, "demo")
        syms, edges, files, _ = _state(f)
        assert set(syms) == {"app/util.py#get", "app/util.py#slug"} and edges == set()
        assert set(files) == {"app/util.py"} and (r.files_removed, r.symbols_removed) == (1, 5)
        deleted = [e.symbol for e in _organ(f, "symbol_events").events if e.kind == "Deleted"]
        assert sorted(deleted) == sorted(n for n in before_names() if n.startswith("app/ledger.py"))
        assert _organ(f, "code_files").changed_after("app/ledger.py", 0)[1] is True


def before_names() -> list[str]:
    return ["app/ledger.py#Ledger", "app/ledger.py#Ledger.post", "app/ledger.py#Ledger.check",
            "app/ledger.py#fetch_page", "app/ledger.py#get"]  # fmt: skip


def test_renamed_file_moves_its_symbols(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        index_code(f._core, repo, "demo")
        git(repo, "mv", "app/util.py", "app/tools.py")
        commit(repo, "rename")
        index_code(f._core, repo, "demo")
        syms, _, files, _ = _state(f)
        assert "app/tools.py#slug" in syms and "app/util.py#slug" not in syms
        assert set(files) == {"app/ledger.py", "app/tools.py"}
        kinds = {(e.kind, e.symbol) for e in _organ(f, "symbol_events").events}
        assert ("Deleted", "app/util.py#slug") in kinds and (
            "Created",
            "app/tools.py#slug",
        ) in kinds


def test_clear_project_then_reindex_is_no_edit(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        index_code(f._core, repo, "demo")
        syms, edges, files, events = _state(f)
        r = index_code(f._core, repo, "demo", clear=True)
        assert r.files_changed == 2 and _state(f) == (syms, edges, files, events)  # no new events
        f._core.commit(chitta.ops.ClearProject(project="demo", at_ms=1))
        assert _state(f)[:3] == ({}, set(), {})


def test_replay_rebuilds_the_same_code_state(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        index_code(f._core, repo, "demo")
        write(repo, {"app/util.py": UTIL + "\n\ndef more():\n    return slug('X')\n"})
        index_code(f._core, repo, "demo")
        live = _state(f)
        f.checkpoint()
    with chitta.open(tmp_path / "f", embedder=None, load_checkpoint=False) as replayed:
        assert _state(replayed) == live
    with chitta.open(tmp_path / "f", embedder=None) as restored:
        assert _state(restored) == live


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside.py", "outside the project"),
        ("blob.py", "binary file"),
        ("notes.cob", "unknown language"),
        ("missing.py", "is not a file"),
    ],
)
def test_bad_paths_change_nothing(repo: Path, tmp_path: Path, path: str, message: str) -> None:
    (repo / "blob.py").write_bytes(b"\x00\x01def f(): pass\n")
    (repo / "notes.cob").write_text("IDENTIFICATION DIVISION.\n")
    (tmp_path / "outside.py").write_text("def f():\n    pass\n")
    with chitta.open(tmp_path / "f", embedder=None) as f:
        index_code(f._core, repo, "demo")
        before, applied = _state(f), f._core.applied
        with pytest.raises(InvalidArgument, match=message):
            index_code(f._core, repo, "demo", paths=["app/util.py", path])
        assert _state(f) == before and f._core.applied == applied


def test_binary_source_in_a_full_index_is_skipped_with_a_reason(repo: Path, tmp_path: Path) -> None:
    (repo / "blob.py").write_bytes(b"\x00\x01def f(): pass\n")
    with chitta.open(tmp_path / "f", embedder=None) as f:
        r = index_code(f._core, repo, "demo")
        assert r.files_skipped == {"blob.py": "binary"} and "blob.py" not in _state(f)[2]


def test_not_a_directory_and_bad_project(repo: Path, tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        with pytest.raises(InvalidArgument, match="not a directory"):
            index_code(f._core, repo / "app/util.py", "demo")
        with pytest.raises(InvalidArgument, match="project must be"):
            index_code(f._core, repo, " ")
        assert f._core.applied == 0
