"""The error tree in docs/API.md is exactly the class hierarchy of chitta.errors.

The oracle is introspection of the real module: every exception class defined in
``chitta.errors`` (aliases counted once), its parent in the tree (its one base that is
a chitta error) and its built-in bases (the tree's "(also ...)").
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import chitta.errors

API = Path(__file__).resolve().parents[3] / "docs" / "API.md"
LINE = re.compile(r"^(?P<lead>[│├└─ ]*)(?P<name>[A-Za-z]\w*)(?: \(also (?P<also>[^)]*)\))?")


def documented_tree() -> dict[str, tuple[str | None, frozenset[str]]]:
    """name -> (parent name or None, built-in bases) from the code block under '## Errors'."""
    text = API.read_text(encoding="utf-8")
    section = text.split("## Errors (`chitta.errors`)", 1)[1]
    block = section.split("```", 2)[1]
    tree: dict[str, tuple[str | None, frozenset[str]]] = {}
    stack: list[str] = []  # the names on the path to the current depth
    for raw in block.splitlines():
        if not raw.strip():
            continue
        m = LINE.match(raw)
        assert m, f"unparsed line in the API.md error tree: {raw!r}"
        depth = len(m.group("lead")) // 4
        assert depth <= len(stack), f"the tree skips a level at {raw!r}"
        del stack[depth:]
        also = frozenset(a.strip() for a in (m.group("also") or "").split(",") if a.strip())
        name = m.group("name")
        assert name not in tree, f"{name} is twice in the tree"
        tree[name] = (stack[-1] if stack else None, also)
        stack.append(name)
    return tree


def real_tree() -> dict[str, tuple[str | None, frozenset[str]]]:
    tree: dict[str, tuple[str | None, frozenset[str]]] = {}
    for _, cls in inspect.getmembers(chitta.errors, inspect.isclass):
        if cls.__module__ != chitta.errors.__name__ or not issubclass(
            cls, chitta.errors.ChittaError
        ):
            continue
        ours = [b for b in cls.__bases__ if issubclass(b, chitta.errors.ChittaError)]
        assert len(ours) <= 1, f"{cls.__name__} has two chitta parents: the tree cannot show it"
        builtins = frozenset(
            b.__name__ for b in cls.__bases__ if b not in ours and b is not Exception
        )
        tree[cls.__name__] = (ours[0].__name__ if ours else None, builtins)
    return tree


def test_error_tree_matches_chitta_errors() -> None:
    documented, real = documented_tree(), real_tree()
    assert set(documented) == set(real), (
        f"docs/API.md's error tree lacks {sorted(set(real) - set(documented))} and names "
        f"{sorted(set(documented) - set(real))} that chitta.errors does not define: update the tree"
    )
    for name, (parent, also) in real.items():
        assert documented[name] == (parent, also), (
            f"{name}: chitta.errors says parent {parent}, also {sorted(also)}; "
            f"docs/API.md says {documented[name]}"
        )


def test_parser_sees_a_wrong_tree() -> None:
    """The parser is not vacuous: the documented tree has its root and a nested level."""
    documented = documented_tree()
    assert documented["ChittaError"] == (None, frozenset())
    assert documented["CrcMismatch"][0] == "CorruptionError"
    assert documented["InvalidArgument"] == ("ChittaError", frozenset({"ValueError"}))
