"""Staleness of memories about code: a verdict per memory and the recall factor.

A memory's verdict, checked in this order:
- ``invalidated``: its meta holds ``invalidated_by`` (set by ``mark_invalidated``);
- ``stale``: one of its artifact refs changed after the memory was written
  (its ``written_ms``): for ``path#Qualified.name`` the symbol was deleted, or
  committed ("edited in <commit>"), or edited (an Edited event); for ``path`` and
  ``path:line`` the file was deleted or committed, or its content hash changed
  (code files: a new hash with a later mtime; artifacts: a later hash change);
- ``fresh`` otherwise (also for refs the code state does not know).

Recall multiplies a memory's score by the ``staleness`` factor (named in
``explain``): 1 fresh, ``STALE_MULTIPLIER`` stale, ``INVALIDATED_MULTIPLIER``
invalidated. With no stale or invalidated memory the factor is absent and recall
runs exactly as without this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from chitta.organs.code.artifacts import ArtifactsOrgan
from chitta.organs.code.call_graph import CallGraphOrgan
from chitta.organs.code.events import SymbolEventsOrgan
from chitta.organs.code.files import CodeFilesOrgan
from chitta.organs.code.symbols import SymbolsOrgan

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

__all__ = [
    "INVALIDATED_MULTIPLIER",
    "STALE_MULTIPLIER",
    "CodeState",
    "parse_ref",
    "staleness_hook",
    "verdict",
]

STALE_MULTIPLIER = 0.6  # as a contradicted memory (chitta.recall.factors.suppression)
INVALIDATED_MULTIPLIER = 0.3  # as a superseded one
_CHANGES = ("Deleted", "Committed", "Edited")
T = TypeVar("T")


def _organ(core: FieldCore, name: str, kind: type[T]) -> T | None:
    organ = core.registry.by_name.get(name)
    return organ if isinstance(organ, kind) else None


class CodeState:
    """The code organs of a field (any may be absent when not registered)."""

    def __init__(self, core: FieldCore) -> None:
        self.symbols = _organ(core, "symbols", SymbolsOrgan)
        self.files = _organ(core, "code_files", CodeFilesOrgan)
        self.events = _organ(core, "symbol_events", SymbolEventsOrgan)
        self.artifacts = _organ(core, "artifacts", ArtifactsOrgan)
        self.calls = _organ(core, "call_graph", CallGraphOrgan)

    def relative(self, path: str) -> str:
        """``path`` relative to the repository root an artifact names, when it lies in one."""
        if not os.path.isabs(path) or self.artifacts is None:
            return path
        for root in sorted(self.artifacts.roots(), key=len, reverse=True):
            rel = os.path.relpath(path, root)
            if not rel.startswith(".."):
                return rel.replace(os.sep, "/")
        return path


def parse_ref(ref: str) -> tuple[str, str | None, int | None]:
    """``(path, qualified name or None, line or None)`` of ``path``, ``path#Q.name``
    or ``path:line``."""
    path, sep, qual = ref.partition("#")
    if sep:
        return path, qual, None
    head, sep, tail = ref.rpartition(":")
    if sep and tail.isdigit() and head:
        return head, None, int(tail)
    return ref, None, None


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_change(state: CodeState, path: str, after: int) -> str | None:
    if state.events is not None:
        for e in state.events.of_file(path, after_ms=after):
            if e.kind == "Committed" and e.symbol is None:
                return f"file changed in {e.ref}" if e.ref else f"file changed at {_iso(e.at_ms)}"
    if state.files is not None:
        change = state.files.changed_after(path, after)
        if change is not None:
            return ("file deleted at " if change[1] else "file changed at ") + _iso(change[0])
    if state.artifacts is not None:
        a = state.artifacts.get(path)
        at = a.changed_after(after) if a is not None else None
        if at is not None:
            return f"file changed at {_iso(at)}"
    return None


def _symbol_change(state: CodeState, key: str, after: int) -> str | None:
    if state.events is None:
        return None
    found = {e.kind: e for e in state.events.of_symbol(key, after_ms=after) if e.kind in _CHANGES}
    live = state.symbols is not None and state.symbols.get(key) is not None
    if "Deleted" in found and not live:
        e = found["Deleted"]
        c = found.get("Committed")
        return f"deleted in {c.ref}" if c is not None and c.ref else f"deleted at {_iso(e.at_ms)}"
    if "Committed" in found and found["Committed"].ref:
        return f"edited in {found['Committed'].ref}"
    for kind in ("Committed", "Edited"):
        if kind in found:
            return f"edited at {_iso(found[kind].at_ms)}"
    return None


def verdict(
    state: CodeState, refs: tuple[str, ...], invalidated_by: str | None, written_ms: int
) -> dict[str, Any]:
    """``{"verdict", "reason", "ref"}`` of a memory (see the module docstring)."""
    if invalidated_by is not None:
        return {"verdict": "invalidated", "reason": f"invalidated by {invalidated_by}", "ref": None}
    for ref in refs:
        path, qual, line = parse_ref(ref)
        path = state.relative(path)
        if qual:
            why = _symbol_change(state, f"{path}#{qual}", written_ms)
        else:
            why = _file_change(state, path, written_ms)
            if why is not None and line is not None:
                why = f"line {line}: {why}"
        if why is not None:
            return {"verdict": "stale", "reason": why, "ref": ref}
    return {"verdict": "fresh", "reason": None, "ref": None}


def multiplier(v: Mapping[str, Any]) -> float:
    return {"invalidated": INVALIDATED_MULTIPLIER, "stale": STALE_MULTIPLIER}.get(
        str(v["verdict"]), 1.0
    )


def verdicts(core: FieldCore) -> dict[int, dict[str, Any]]:
    """The verdict of every live memory with artifact refs or an invalidation."""
    state = CodeState(core)
    return {
        mid: verdict(state, refs, by, written)
        for mid, (refs, by, written) in core.memories.claim_rows().items()
    }


def staleness_hook(core: FieldCore) -> Callable[[], Mapping[int, float]]:
    """For the recall engine: id -> multiplier of every stale or invalidated memory,
    recomputed only when the field applied more records since the last call."""
    cache: list[Any] = [None, {}]

    def stale() -> Mapping[int, float]:
        if cache[0] != core.applied:
            table = {mid: multiplier(v) for mid, v in verdicts(core).items()}
            cache[:] = [core.applied, {m: x for m, x in table.items() if x != 1.0}]
        out: Mapping[int, float] = cache[1]
        return out

    return stale


MAX_REFS = 64
MAX_REF_CHARS = 1024


def check_refs(refs: object) -> tuple[str, ...]:
    """The artifact refs of a remember call, checked: a list of at most ``MAX_REFS``
    strings ``path``, ``path#Qualified.name`` or ``path:line`` (line >= 1), each
    1-``MAX_REF_CHARS`` printable characters; surrounding whitespace is dropped."""
    from chitta.errors import InvalidArgument

    if isinstance(refs, (str, bytes)) or not isinstance(refs, (list, tuple)):
        raise InvalidArgument(
            f"artifacts must be a list of refs like ['a.py#A.f'], not {type(refs).__name__}"
        )
    if len(refs) > MAX_REFS:
        raise InvalidArgument(f"at most {MAX_REFS} artifacts per memory, got {len(refs)}")
    out: list[str] = []
    for ref in refs:
        if not isinstance(ref, str):
            raise InvalidArgument(f"an artifact ref is a str, not {type(ref).__name__}")
        r = ref.strip()
        if not r or len(r) > MAX_REF_CHARS or not r.isprintable():
            raise InvalidArgument(
                f"an artifact ref must be 1-{MAX_REF_CHARS} printable characters, got {ref!r:.80}"
            )
        path, qual, line = parse_ref(r)
        if not path or (qual is not None and not qual) or line == 0:
            raise InvalidArgument(
                f"artifact ref {ref!r:.80} is malformed; use 'path', 'path#Qualified.name' "
                "or 'path:line' (line from 1)"
            )
        if r not in out:
            out.append(r)
    return tuple(out)
