"""Payloads of the code-index ops: files, symbols and the symbol call graph.

A symbol is keyed by its qualified ``name`` (unique within a field; qualify
it with the project where several projects share a field).
"""

from __future__ import annotations

from typing import ClassVar

from chitta.ops.base import I64, U64, OpBase, OpType

__all__ = [
    "SYMBOL_KINDS",
    "AddSymCallEdge",
    "ClearProject",
    "RemoveSymCallEdge",
    "RemoveSymbol",
    "UpdateSymbolDescription",
    "UpsertCodeFile",
    "UpsertSymbol",
]

SYMBOL_KINDS: frozenset[str] = frozenset(
    {"function", "method", "class", "module", "variable", "constant", "type", "interface"}
)
"""Values of ``UpsertSymbol.kind``."""


class UpsertSymbol(OpBase, frozen=True, kw_only=True, array_like=True):
    """Insert or update a code symbol (function, class, method, ...).

    Lines are 1-based and inclusive (0 = unknown). ``embedding`` is
    little-endian float32 bytes. An upsert of a new name counts as a ``Created``
    symbol event; of a known name, as ``Edited`` unless both it and the symbol
    held carry the same ``body_hash`` (the symbol only moved; D-042).
    """

    op_type: ClassVar[OpType] = OpType.UpsertSymbol
    enums: ClassVar[dict[str, frozenset[str]]] = {"kind": SYMBOL_KINDS}

    name: str
    kind: str
    file_path: str
    project: str | None = None
    line_start: int = 0
    line_end: int = 0
    signature: str | None = None
    description: str | None = None
    embedding: bytes | None = None
    at_ms: I64 = 0
    session: str | None = None
    harness: str | None = None
    memory_id: U64 | None = None
    # a hash of the symbol's source text: an equal hash is a move, not an edit
    body_hash: str | None = None


class RemoveSymbol(OpBase, frozen=True, kw_only=True, array_like=True):
    """Remove a symbol and every call edge that touches it."""

    op_type: ClassVar[OpType] = OpType.RemoveSymbol

    name: str
    at_ms: I64


class AddSymCallEdge(OpBase, frozen=True, kw_only=True, array_like=True):
    """Add a ``caller -> callee`` edge to the call graph."""

    op_type: ClassVar[OpType] = OpType.AddSymCallEdge

    caller: str
    callee: str
    at_ms: I64 = 0


class RemoveSymCallEdge(OpBase, frozen=True, kw_only=True, array_like=True):
    """Remove the ``caller -> callee`` edge."""

    op_type: ClassVar[OpType] = OpType.RemoveSymCallEdge

    caller: str
    callee: str
    at_ms: I64 = 0


class UpsertCodeFile(OpBase, frozen=True, kw_only=True, array_like=True):
    """Register or update a code file of ``project``, keyed by ``path``."""

    op_type: ClassVar[OpType] = OpType.UpsertCodeFile

    path: str
    project: str
    mtime_ms: I64
    content_hash: str | None = None
    language: str | None = None
    deleted: bool = False  # the file is gone (its symbols go by RemoveSymbol ops beside it)


class ClearProject(OpBase, frozen=True, kw_only=True, array_like=True):
    """Remove every code file of ``project`` and the symbols defined in them."""

    op_type: ClassVar[OpType] = OpType.ClearProject

    project: str
    at_ms: I64


class UpdateSymbolDescription(OpBase, frozen=True, kw_only=True, array_like=True):
    """Replace the description of symbol ``name``."""

    op_type: ClassVar[OpType] = OpType.UpdateSymbolDescription

    name: str
    description: str
    at_ms: I64 = 0
