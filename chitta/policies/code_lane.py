"""The code lane of recall: a query that names a code symbol finds the memories that
reference it, and those referencing its callers and callees one hop out.

A query names a symbol with a token equal to its key (``a.py#Ledger.post``), its
qualified name (``Ledger.post``) or, for tokens that look like code (an underscore,
an inner capital, a dot, or a call's parenthesis), its short name (``fetch_page``).
Memories whose artifact refs name such a symbol (``path#Q.name``, or ``path:line``
inside its span) get the ``code`` prior ``1 + CODE_PRIOR`` on their fused score;
those referencing a caller or callee get ``1 + CODE_PRIOR / 2``; the engine adds them
as a lane so they are candidates even when no other lane found them. Nothing named,
or no memory referencing code: no lane, no prior, recall unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from chitta.organs.code.symbols import split_key
from chitta.policies.code_trust import CodeState, parse_ref

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

__all__ = ["CODE_PRIOR", "code_lane_hook", "named_symbols"]

CODE_PRIOR = 0.5
_TOKEN = re.compile(r"[A-Za-z_][\w.#/:-]*\w(\()?")


def _looks_like_code(token: str, call: bool) -> bool:
    return call or "_" in token or "." in token or any(c.isupper() for c in token[1:])


def named_symbols(state: CodeState, text: str) -> set[str]:
    """The keys of the symbols ``text`` names (see the module docstring)."""
    symbols = state.symbols
    if symbols is None or not symbols.symbols:
        return set()
    out: set[str] = set()
    for m in _TOKEN.finditer(text):
        token, call = m.group(0).rstrip("("), m.group(1) is not None
        if symbols.get(token) is not None:
            out.add(token)
            continue
        exact = [s.name for how, s in symbols.find(token, limit=50) if how == "exact"]
        if "." in token or "#" in token:
            out.update(n for n in exact if split_key(n)[1] == token or n == token)
        elif _looks_like_code(token, call):
            out.update(exact)
    return out


def _references(core: FieldCore, state: CodeState) -> dict[str, set[int]]:
    """Symbol key -> the live memories whose artifact refs name it."""
    out: dict[str, set[int]] = {}
    for mid, (refs, _by, _written) in core.memories.claim_rows().items():
        for ref in refs:
            path, qual, line = parse_ref(ref)
            path = state.relative(path)
            if qual:
                out.setdefault(f"{path}#{qual}", set()).add(mid)
            elif line is not None and state.symbols is not None:
                s = state.symbols.at_line(path, line)
                if s is not None:
                    out.setdefault(s.name, set()).add(mid)
    return out


def code_lane_hook(core: FieldCore) -> Callable[[str], Mapping[int, float]]:
    """For the recall engine: query text -> memory id -> its ``code`` prior."""
    cache: list[Any] = [None, {}]

    def lane(text: str) -> Mapping[int, float]:
        if cache[0] != core.applied:
            state = CodeState(core)
            known = state.symbols is not None and bool(state.symbols.symbols)
            cache[:] = [core.applied, _references(core, state) if known else {}]
        refs: dict[str, set[int]] = cache[1]
        if not refs or not text:
            return {}
        state = CodeState(core)
        named = named_symbols(state, text)
        out: dict[int, float] = {}
        if state.calls is not None:
            for key in sorted(named):
                for peer in [*state.calls.callers_of(key), *state.calls.callees_of(key)]:
                    for mid in refs.get(peer, ()):
                        out[mid] = 1.0 + CODE_PRIOR / 2
        for key in named:
            for mid in refs.get(key, ()):
                out[mid] = 1.0 + CODE_PRIOR
        return out

    return lane
