"""Source files to symbols and calls, with tree-sitter (the PyPI ``tree-sitter``
package and one grammar package per language, loaded on first use).

``parse(source, language)`` returns the file's symbols: qualified name (classes,
impl blocks, namespaces and enclosing functions qualify what they hold, joined
by "."), kind, 1-based inclusive lines, signature (the text before the body,
whitespace collapsed), doc (a Python docstring's first paragraph, or the comment
right above), a hash of the symbol's source text, and the names it calls
(``(name, via_self)``; calls inside a nested symbol belong to that one).
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, field
from typing import Any

from chitta.errors import InvalidArgument

__all__ = ["EXTENSIONS", "LANGUAGES", "ParsedSymbol", "language_of", "parse"]

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
}  # fmt: skip
# language -> (grammar module, its function returning the language pointer)
LANGUAGES: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}
MAX_SIGNATURE = 300
MAX_DOC = 500
_parsers: dict[str, Any] = {}


@dataclass
class ParsedSymbol:
    qualname: str
    kind: str
    line_start: int
    line_end: int
    signature: str
    doc: str | None
    body_hash: str
    calls: list[tuple[str, bool]] = field(default_factory=list)


def language_of(path: str) -> str | None:
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower()) if dot >= 0 else None


def _parser(language: str) -> Any:
    p = _parsers.get(language)
    if p is not None:
        return p
    if language not in LANGUAGES:
        raise InvalidArgument(
            f"no grammar for language {language!r}; chitta indexes {sorted(LANGUAGES)}"
        )
    module, fn = LANGUAGES[language]
    try:
        import tree_sitter

        grammar = importlib.import_module(module)
    except ImportError as exc:
        raise InvalidArgument(
            f"parsing {language} needs the PyPI packages tree-sitter and "
            f"{module.replace('_', '-')} ({exc}); pip install them"
        ) from exc
    p = _parsers[language] = tree_sitter.Parser(tree_sitter.Language(getattr(grammar, fn)()))
    return p


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", "replace")


def _one_line(s: str, limit: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


# -- what each language calls a symbol -----------------------------------------------
# node type -> kind; the name is the node's "name" field unless _name says otherwise
_DEFS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": {
        "function_declaration": "function", "generator_function_declaration": "function",
        "class_declaration": "class", "method_definition": "method",
    },
    "go": {"function_declaration": "function", "method_declaration": "method", "type_spec": "type"},
    "rust": {
        "function_item": "function", "function_signature_item": "function",
        "struct_item": "type", "enum_item": "type", "union_item": "type", "type_item": "type",
        "trait_item": "interface", "mod_item": "module",
    },
    "c": {"function_definition": "function", "struct_specifier": "type", "enum_specifier": "type"},
    "cpp": {
        "function_definition": "function", "class_specifier": "class", "struct_specifier": "class",
        "namespace_definition": "module", "enum_specifier": "type",
    },
}  # fmt: skip
_DEFS["typescript"] = _DEFS["tsx"] = {
    **_DEFS["javascript"],
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "type",
}
_CALLS = {"call", "call_expression"}
_SCOPES_ONLY = {"impl_item"}  # qualify their contents without being a symbol (Rust impl)


def _declarator_name(node: Any) -> str | None:
    """The name of a C/C++ function: down the declarator chain to an identifier."""
    d = node.child_by_field_name("declarator")
    while d is not None:
        if d.type in ("identifier", "field_identifier", "destructor_name", "operator_name"):
            return _text(d)
        if d.type == "qualified_identifier":
            return _text(d).replace("::", ".")
        d = d.child_by_field_name("declarator") or (
            d.named_children[0]
            if d.type in ("reference_declarator",) and d.named_children
            else None
        )
    return None


def _name(node: Any, language: str) -> str | None:
    if language in ("c", "cpp") and node.type == "function_definition":
        return _declarator_name(node)
    if (
        node.type in ("struct_specifier", "class_specifier", "enum_specifier")
        and node.child_by_field_name("body") is None
    ):
        return None  # a use or forward declaration, not a definition
    n = node.child_by_field_name("name")
    return _text(n).replace("::", ".") if n is not None else None


def _kind(node: Any, language: str, kind: str, scope_kinds: list[str]) -> str:
    if kind == "function" and scope_kinds and scope_kinds[-1] in ("class", "impl", "interface"):
        return "method"
    if language == "go" and node.type == "type_spec":
        t = node.child_by_field_name("type")
        return "interface" if t is not None and t.type == "interface_type" else "type"
    return kind


def _signature(node: Any, language: str) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    raw = bytes(node.text)[: max(0, end - node.start_byte)].decode("utf-8", "replace")
    raw = raw.rstrip().rstrip(":{").rstrip()
    return _one_line(raw, MAX_SIGNATURE)


def _doc(node: Any, language: str) -> str | None:
    if language == "python":
        body = node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children:
            s = first.named_children[0]
            if s.type == "string":
                text = _text(s).strip("rbuRBU").strip("\"'")
                return _one_line(text.strip().split("\n\n", 1)[0], MAX_DOC) or None
        return None
    prev = node.prev_named_sibling
    if (
        prev is not None
        and prev.type in ("comment", "line_comment", "block_comment")
        and prev.end_point[0] + 1 >= node.start_point[0]
    ):
        text = _text(prev).lstrip("/*!").rstrip("*/").strip()
        return _one_line(text, MAX_DOC) or None
    return None


def _call_name(node: Any) -> tuple[str, bool] | None:
    f = node.child_by_field_name("function")
    if f is None:
        return None
    if f.type == "identifier":
        return _text(f), False
    for field_name in ("attribute", "property", "field", "name"):
        leaf = f.child_by_field_name(field_name)
        if leaf is not None:
            obj = f.child_by_field_name("object") or f.child_by_field_name("operand")
            via_self = obj is not None and _text(obj) in ("self", "this", "cls")
            return _text(leaf), via_self
    return None


def parse(source: bytes, language: str) -> list[ParsedSymbol]:
    """The symbols of ``source`` (see the module docstring), in source order."""
    defs = _DEFS.get(language)
    if defs is None:
        raise InvalidArgument(
            f"no grammar for language {language!r}; chitta indexes {sorted(LANGUAGES)}"
        )
    tree = _parser(language).parse(source)
    out: list[ParsedSymbol] = []

    def walk(node: Any, scope: list[str], kinds: list[str], owner: ParsedSymbol | None) -> None:
        for child in node.named_children:
            t = child.type
            if t in defs and (name := _name(child, language)):
                kind = _kind(child, language, defs[t], kinds)
                if language == "go" and t == "method_declaration":
                    recv = child.child_by_field_name("receiver")
                    rtype = _text(recv).strip("()").split()[-1].lstrip("*") if recv else ""
                    qual = ".".join(
                        [*scope, rtype.split("[")[0], name] if rtype else [*scope, name]
                    )
                else:
                    qual = ".".join([*scope, name])
                sym = ParsedSymbol(
                    qual, kind, child.start_point[0] + 1, child.end_point[0] + 1,
                    _signature(child, language), _doc(child, language),
                    hashlib.blake2b(bytes(child.text), digest_size=8).hexdigest(),
                )  # fmt: skip
                out.append(sym)
                walk(child, [*scope, *qual.split(".")[len(scope) :]], [*kinds, kind], sym)
            elif t in _SCOPES_ONLY and (ty := child.child_by_field_name("type")) is not None:
                walk(child, [*scope, _text(ty).split("<")[0]], [*kinds, "impl"], owner)
            else:
                if t in _CALLS and owner is not None and (call := _call_name(child)):
                    owner.calls.append(call)
                walk(child, scope, kinds, owner)

    walk(tree.root_node, [], [], None)
    return out
