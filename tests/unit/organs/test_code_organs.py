"""The code organs (chitta/organs/code/) against plain reference models.

Random op sequences go through a real field; a second, deliberately naive
implementation (dicts and sets, written from docs/OPS.md) gives the expected
symbols, descriptions, call edges and symbol events. Replay determinism and
checkpoint equality of every organ are the contract test's (test_contract.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chitta
from chitta import ops

NAMES = ["a.py#f", "a.py#A.g", "b.py#h", "b.py#B", "c.py#k"]
FILES = {n: n.split("#")[0] for n in NAMES}


def _organ(f: chitta.Field, name: str) -> Any:
    return f._core.registry.by_name[name]


def _op() -> st.SearchStrategy[ops.Op]:
    name = st.sampled_from(NAMES)
    project = st.sampled_from(["p", "q"])
    return st.one_of(
        st.builds(
            lambda n, p, h, ln: ops.UpsertSymbol(
                name=n,
                kind="function",
                file_path=FILES[n],
                project=p,
                line_start=ln,
                line_end=ln + 2,
                body_hash=h,
                at_ms=ln,
            ),
            name,
            project,
            st.sampled_from([None, "h1", "h2"]),
            st.integers(1, 50),
        ),
        st.builds(lambda n: ops.RemoveSymbol(name=n, at_ms=1), name),
        st.builds(lambda a, b: ops.AddSymCallEdge(caller=a, callee=b), name, name),
        st.builds(lambda a, b: ops.RemoveSymCallEdge(caller=a, callee=b), name, name),
        st.builds(lambda p: ops.ClearProject(project=p, at_ms=1), project),
        st.builds(
            lambda n, d: ops.UpdateSymbolDescription(name=n, description=d),
            name,
            st.sampled_from(["x", "y"]),
        ),
    )


class Reference:
    """The expected state, from the op table's one-line meanings."""

    def __init__(self) -> None:
        self.symbols: dict[str, dict[str, Any]] = {}
        self.edges: set[tuple[str, str]] = set()
        self.project: dict[str, str] = {}  # every symbol upserted with a project, live or not
        self.hashes: dict[str, str | None] = {}
        self.events: list[tuple[str, str]] = []

    def apply(self, op: ops.Op) -> None:
        if isinstance(op, ops.UpsertSymbol):
            live_before = op.name in self.hashes
            if not live_before:
                self.events.append(("Created", op.name))
            elif not (op.body_hash is not None and op.body_hash == self.hashes[op.name]):
                self.events.append(("Edited", op.name))
            self.hashes[op.name] = op.body_hash
            self.symbols[op.name] = {"file": op.file_path, "project": op.project, "desc": None,
                                     "lines": (op.line_start, op.line_end)}  # fmt: skip
            self.project[op.name] = op.project or ""
        elif isinstance(op, ops.RemoveSymbol):
            self.symbols.pop(op.name, None)
            if op.name in self.hashes:
                del self.hashes[op.name]
                self.events.append(("Deleted", op.name))
            self.edges = {e for e in self.edges if op.name not in e}
            self.project.pop(op.name, None)
        elif isinstance(op, ops.AddSymCallEdge):
            self.edges.add((op.caller, op.callee))
        elif isinstance(op, ops.RemoveSymCallEdge):
            self.edges.discard((op.caller, op.callee))
        elif isinstance(op, ops.ClearProject):
            gone = {n for n, p in self.project.items() if p == op.project}
            for n in gone:
                self.symbols.pop(n, None)
                del self.project[n]
            self.edges = {e for e in self.edges if not (set(e) & gone)}
        elif isinstance(op, ops.UpdateSymbolDescription) and op.name in self.symbols:
            self.symbols[op.name]["desc"] = op.description


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_op(), max_size=30))
def test_symbols_graph_and_events_match_a_reference_model(
    tmp_path_factory: Any, run: list[ops.Op]
) -> None:
    root = tmp_path_factory.mktemp("f")
    ref = Reference()
    with chitta.open(root, embedder=None) as f:
        for op in run:
            ref.apply(op)
            f._core.commit(op)
        sym, graph, events = (
            _organ(f, "symbols"),
            _organ(f, "call_graph"),
            _organ(f, "symbol_events"),
        )
        got = {
            n: {"file": s.file_path, "project": s.project, "desc": s.description,
                "lines": (s.line_start, s.line_end)}
            for n, s in sym.symbols.items()
        }  # fmt: skip
        assert got == ref.symbols
        assert {(a, b) for a, bs in graph.callees.items() for b in bs} == ref.edges
        assert {(a, b) for b, as_ in graph.callers.items() for a in as_} == ref.edges
        assert [(e.kind, e.symbol) for e in events.events] == ref.events
        for n in NAMES:  # the per-file and per-symbol indexes agree with the tables
            assert {s.name for s in sym.in_file(FILES[n])} == {
                m for m in got if FILES[m] == FILES[n]
            }
            assert [e.kind for e in events.of_symbol(n)] == [k for k, s in ref.events if s == n]
    with chitta.open(root, embedder=None, load_checkpoint=False) as again:  # replay from the log
        assert set(_organ(again, "symbols").symbols) == set(ref.symbols)
        assert [(e.kind, e.symbol) for e in _organ(again, "symbol_events").events] == ref.events


def test_symbol_events_moved_symbol_is_not_an_edit(tmp_path: Path) -> None:
    up = {"kind": "function", "file_path": "a.py", "project": "p"}
    with chitta.open(tmp_path / "f", embedder=None) as f:
        for op in (
            ops.UpsertSymbol(name="a.py#f", line_start=1, line_end=3, body_hash="h1", at_ms=10, **up),
            ops.UpsertSymbol(name="a.py#f", line_start=5, line_end=7, body_hash="h1", at_ms=20, **up),
            ops.UpsertSymbol(name="a.py#f", line_start=5, line_end=8, body_hash="h2", at_ms=30, **up),
            ops.RemoveSymbol(name="a.py#f", at_ms=40),
            ops.RemoveSymbol(name="a.py#f", at_ms=41),  # unknown now: counted, no event
            ops.AnalyticsEvent(event="symbol_event", outcome="TestFailed", symbol="a.py#f",
                               file_path="a.py", at_ms=50, harness="codex", memory_ids=(7,)),
            ops.AnalyticsEvent(event="symbol_event", outcome="Renamed", symbol="a.py#f", at_ms=60),
            ops.AnalyticsEvent(event="exposure", at_ms=70),  # not a symbol event: not ours
        ):  # fmt: skip
            f._core.commit(op)
        ev = _organ(f, "symbol_events")
        assert [(e.kind, e.at_ms) for e in ev.of_symbol("a.py#f")] == [
            ("Created", 10), ("Edited", 30), ("Deleted", 40), ("TestFailed", 50)
        ]  # fmt: skip
        assert ev.of_symbol("a.py#f")[-1].memory_id == 7 and ev.ignored == 2
        assert [e.kind for e in ev.of_file("a.py", after_ms=30)] == ["Deleted", "TestFailed"]


def test_code_files_keep_history_across_clear_project(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        for op in (
            ops.UpsertCodeFile(path="a.py", project="p", mtime_ms=10, content_hash="h1"),
            ops.UpsertCodeFile(path="b.py", project="q", mtime_ms=10, content_hash="x"),
            ops.ClearProject(project="p", at_ms=15),
            ops.UpsertCodeFile(path="a.py", project="p", mtime_ms=20, content_hash="h1"),
            ops.UpsertCodeFile(path="a.py", project="p", mtime_ms=30, content_hash="h2"),
            ops.UpsertCodeFile(path="a.py", project="p", mtime_ms=40, deleted=True),
            ops.UpsertCodeFile(path="zz.py", project="p", mtime_ms=40, deleted=True),
        ):
            f._core.commit(op)
        files = _organ(f, "code_files")
        assert set(files.files) == {"b.py"} and files.ignored == 1
        assert files.changed_after("a.py", 10) == (30, False)  # re-adding h1 was no change
        assert files.changed_after("a.py", 30) == (40, True)
        assert files.changed_after("a.py", 40) is None


def test_artifacts_record_hash_changes(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        for at, h in ((1, "a"), (2, "a"), (3, "b"), (4, None)):
            f._core.commit(
                ops.UpsertArtifact(path="doc.md", repo_root="/r", content_hash=h, at_ms=at)
            )
        a = _organ(f, "artifacts").get("doc.md")
        assert (
            a.changes == [(1, "a"), (3, "b")]
            and a.changed_after(1) == 3
            and a.changed_after(3) is None
        )
        assert _organ(f, "artifacts").roots() == {"/r"}
