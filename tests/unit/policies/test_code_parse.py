"""The tree-sitter symbol extraction (chitta/policies/code_parse.py): hand-made
expectations per language, and Python's ``ast`` as the oracle on chitta's sources."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import chitta
from chitta.errors import InvalidArgument
from chitta.policies.code_parse import language_of, parse

CHITTA = Path(chitta.__file__).resolve().parent


def _syms(src: str, lang: str) -> dict[str, tuple[str, int, int]]:
    return {s.qualname: (s.kind, s.line_start, s.line_end) for s in parse(src.encode(), lang)}


def test_python_classes_methods_nested_and_docstrings() -> None:
    src = '''class Ledger:
    """Holds entries.

    More text."""

    @property
    def total(self):
        return sum(self.rows())

    def rows(self):
        def inner():
            return helper()
        return inner()


async def helper(x: int = 1) -> int:
    return x
'''
    assert _syms(src, "python") == {
        "Ledger": ("class", 1, 13),
        "Ledger.total": ("method", 7, 8),
        "Ledger.rows": ("method", 10, 13),
        "Ledger.rows.inner": ("function", 11, 12),
        "helper": ("function", 16, 17),
    }
    by = {s.qualname: s for s in parse(src.encode(), "python")}
    assert by["Ledger"].doc == "Holds entries."
    assert by["helper"].signature == "async def helper(x: int = 1) -> int"
    assert ("rows", True) in by["Ledger.total"].calls and ("sum", False) in by["Ledger.total"].calls
    assert by["Ledger.rows.inner"].calls == [("helper", False)]
    assert ("helper", False) not in by["Ledger.rows"].calls  # the nested def's call is its own


@pytest.mark.parametrize(
    ("lang", "src", "expected"),
    [
        ("javascript", "// adds\nfunction add(a, b) { return a + b }\nclass K {\n  run() { add(1, 2) }\n}\n",
         {"add": ("function", 2, 2), "K": ("class", 3, 5), "K.run": ("method", 4, 4)}),
        ("typescript", "interface Shape { area(): number }\ntype Id = string\nclass Sq implements Shape {\n  area(): number { return 1 }\n}\n",
         {"Shape": ("interface", 1, 1), "Id": ("type", 2, 2), "Sq": ("class", 3, 5), "Sq.area": ("method", 4, 4)}),
        ("go", "package m\n\ntype T struct{ n int }\n\ntype I interface{ M() }\n\nfunc (t *T) M() { helper() }\n\nfunc helper() {}\n",
         {"T": ("type", 3, 3), "I": ("interface", 5, 5), "T.M": ("method", 7, 7), "helper": ("function", 9, 9)}),
        ("rust", "struct P { x: i32 }\nimpl P {\n    fn new() -> P { P { x: 0 } }\n}\ntrait Q { fn q(&self); }\nfn main() { P::new(); }\n",
         {"P": ("type", 1, 1), "P.new": ("method", 3, 3), "Q": ("interface", 5, 5), "Q.q": ("method", 5, 5), "main": ("function", 6, 6)}),
        ("c", "struct s { int a; };\nstatic int add(int a, int b) { return a + b; }\nint main(void) { return add(1, 2); }\n",
         {"s": ("type", 1, 1), "add": ("function", 2, 2), "main": ("function", 3, 3)}),
        ("cpp", "namespace ns {\nclass A {\n public:\n  int f() { return g(); }\n  int g() { return 1; }\n};\n}\nint ns::A::h() { return 2; }\n",
         {"ns": ("module", 1, 7), "ns.A": ("class", 2, 6), "ns.A.f": ("method", 4, 4), "ns.A.g": ("method", 5, 5), "ns.A.h": ("function", 8, 8)}),
    ],
)  # fmt: skip
def test_languages_hand_made_expectations(
    lang: str, src: str, expected: dict[str, tuple[str, int, int]]
) -> None:
    assert _syms(src, lang) == expected


def test_calls_are_found_per_language() -> None:
    go = {s.qualname: s.calls for s in parse(b"package m\nfunc a() { b(); x.c() }\n", "go")}
    assert go["a"] == [("b", False), ("c", False)]
    js = {s.qualname: s.calls for s in parse(b"class K { f() { this.g(); h() } }", "javascript")}
    assert js["K.f"] == [("g", True), ("h", False)]


def test_unknown_language_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="no grammar for language 'cobol'"):
        parse(b"x", "cobol")
    assert language_of("a.cob") is None and language_of("A.PY") == "python"


def _ast_names(path: Path) -> set[str]:
    out: set[str] = set()

    def walk(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(".".join([*scope, child.name]))
                walk(child, [*scope, child.name])
            else:
                walk(child, scope)

    walk(ast.parse(path.read_bytes()), [])
    return out


def test_python_symbols_match_ast_on_chittas_own_sources() -> None:
    """>= 95% of the def/class statements ast finds in chitta/ are found (qualified
    names, nested ones included), and nothing is found that ast does not have."""
    expected = found = extra = 0
    for path in sorted(CHITTA.rglob("*.py")):
        want = _ast_names(path)
        got = {s.qualname for s in parse(path.read_bytes(), "python")}
        expected += len(want)
        found += len(want & got)
        extra += len(got - want)
    assert expected > 1000
    assert found / expected >= 0.95, f"{found} of {expected}"
    assert extra == 0
