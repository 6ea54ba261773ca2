"""The symbols organ: code symbols keyed by ``<path>#<Qualified.name>``.

Applies UpsertSymbol (insert or replace every field the op carries),
RemoveSymbol, UpdateSymbolDescription and ClearProject (removes the symbols
upserted with that project). Indexes: by file, and by the last part of the
qualified name (``post`` finds ``ledger.py#Ledger.post``) for name lookups.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext

__all__ = ["Symbol", "SymbolsOrgan", "short_name", "split_key"]

SIDECAR = "symbols.rec"
MAGIC = b"CHITTASY"
VERSION = 1


def split_key(name: str) -> tuple[str, str]:
    """``(path, qualified name)`` of a symbol key ``path#Qualified.name``."""
    path, sep, qual = name.partition("#")
    return (path, qual) if sep else ("", name)


def short_name(name: str) -> str:
    """The last part of a symbol key's qualified name (``a.py#A.f`` -> ``f``)."""
    return split_key(name)[1].rsplit(".", 1)[-1]


class Symbol:
    __slots__ = (
        "at_ms", "body_hash", "description", "embedding", "file_path", "kind",
        "line_end", "line_start", "name", "project", "signature",
    )  # fmt: skip

    def __init__(self, op: ops.UpsertSymbol) -> None:
        self.name, self.kind, self.file_path, self.project = (
            op.name, op.kind, op.file_path, op.project,
        )  # fmt: skip
        self.line_start, self.line_end = op.line_start, op.line_end
        self.signature, self.description, self.embedding = (
            op.signature,
            op.description,
            op.embedding,
        )
        self.at_ms, self.body_hash = op.at_ms, op.body_hash

    def op(self) -> ops.UpsertSymbol:
        """The upsert that recreates this symbol (its snapshot row)."""
        return ops.UpsertSymbol(
            name=self.name, kind=self.kind, file_path=self.file_path, project=self.project,
            line_start=self.line_start, line_end=self.line_end, signature=self.signature,
            description=self.description, embedding=self.embedding, at_ms=self.at_ms,
            body_hash=self.body_hash,
        )  # fmt: skip

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "file": self.file_path,
            "project": self.project,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "signature": self.signature,
            "description": self.description,
        }


class SymbolsOrgan(OrganBase):
    name = "symbols"
    handles = frozenset(
        {
            OpType.UpsertSymbol,
            OpType.RemoveSymbol,
            OpType.UpdateSymbolDescription,
            OpType.ClearProject,
        }
    )

    def __init__(self) -> None:
        self.symbols: dict[str, Symbol] = {}
        self.by_file: dict[str, set[str]] = {}
        self.by_short: dict[str, set[str]] = {}
        self.ignored = 0  # ops naming a symbol this field does not hold

    def apply(self, op: Op) -> None:
        if isinstance(op, ops.UpsertSymbol):
            self._upsert(op)
        elif isinstance(op, ops.RemoveSymbol):
            if op.name in self.symbols:
                self._remove(op.name)
            else:
                self.ignored += 1
        elif isinstance(op, ops.UpdateSymbolDescription):
            s = self.symbols.get(op.name)
            if s is None:
                self.ignored += 1
            else:
                s.description = op.description
        elif isinstance(op, ops.ClearProject):
            for name in [n for n, s in self.symbols.items() if s.project == op.project]:
                self._remove(name)

    def _upsert(self, op: ops.UpsertSymbol) -> None:
        if not op.name:
            self.ignored += 1
            return
        old = self.symbols.get(op.name)
        if old is not None and old.file_path != op.file_path:
            self._unindex(old)
        self.symbols[op.name] = Symbol(op)
        self.by_file.setdefault(op.file_path, set()).add(op.name)
        self.by_short.setdefault(short_name(op.name), set()).add(op.name)

    def _unindex(self, s: Symbol) -> None:
        names = self.by_file.get(s.file_path)
        if names is not None:
            names.discard(s.name)
            if not names:
                del self.by_file[s.file_path]

    def _remove(self, name: str) -> None:
        s = self.symbols.pop(name)
        self._unindex(s)
        short = self.by_short.get(short_name(name))
        if short is not None:
            short.discard(name)
            if not short:
                del self.by_short[short_name(name)]

    # -- queries ---------------------------------------------------------------------
    def get(self, name: str) -> Symbol | None:
        return self.symbols.get(name)

    def in_file(self, path: str) -> list[Symbol]:
        """The symbols of ``path``, by first line then name."""
        found = [self.symbols[n] for n in self.by_file.get(path, ())]
        return sorted(found, key=lambda s: (s.line_start, s.name))

    def at_line(self, path: str, line: int) -> Symbol | None:
        """The innermost symbol of ``path`` whose span holds ``line`` (1-based)."""
        best: Symbol | None = None
        for s in self.in_file(path):
            if s.line_start <= line <= s.line_end and (
                best is None or s.line_end - s.line_start < best.line_end - best.line_start
            ):
                best = s
        return best

    def find(self, text: str, limit: int = 20) -> list[tuple[str, Symbol]]:
        """Symbols named by ``text``: ``("exact", s)`` for the key or the qualified
        name, then ``("prefix", s)`` for qualified names / short names starting with it,
        then ``("fuzzy", s)`` for short names within edit distance 2 (case-folded)."""
        out: list[tuple[str, Symbol]] = []
        seen: set[str] = set()

        def add(how: str, names: list[str]) -> None:
            for n in sorted(names):
                if n not in seen and len(out) < limit:
                    seen.add(n)
                    out.append((how, self.symbols[n]))

        if not text:
            return out
        add("exact", [n for n in self.symbols if n == text or split_key(n)[1] == text])
        add("exact", sorted(self.by_short.get(text, ())))
        low = text.casefold()
        add(
            "prefix",
            [n for n in self.symbols if split_key(n)[1].casefold().startswith(low)]
            + [
                n
                for short, ns in self.by_short.items()
                if short.casefold().startswith(low)
                for n in ns
            ],
        )
        if len(low) >= 4:
            add(
                "fuzzy",
                [
                    n
                    for short, ns in self.by_short.items()
                    if _within(short.casefold(), low, 2)
                    for n in ns
                ],
            )
        return out

    def nearest(self, vector: Any, k: int) -> list[tuple[float, Symbol]]:
        """The ``k`` symbols whose embedding is closest to ``vector`` by cosine (brute force
        over the symbols that carry one of its width), best first, then by name."""
        import numpy as np

        q = np.asarray(vector, np.float32)
        qn = float(np.linalg.norm(q))
        if qn == 0:
            return []
        out: list[tuple[float, Symbol]] = []
        for s in self.symbols.values():
            if s.embedding is None or len(s.embedding) != 4 * len(q):
                continue
            v = np.frombuffer(s.embedding, "<f4")
            n = float(np.linalg.norm(v))
            if n > 0:
                out.append((float(q @ v) / (qn * n), s))
        out.sort(key=lambda cs: (-cs[0], cs[1].name))
        return out[:k]

    # -- checkpoints -----------------------------------------------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [ops.encode(self.symbols[n].op()) for n in sorted(self.symbols)]
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"symbols": len(rows), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        empty = int(state["symbols"]) == 0 and SIDECAR not in ctx.sidecars
        for payload in [] if empty else ctx.read_records(SIDECAR, MAGIC, VERSION):
            op = ops.decode(OpType.UpsertSymbol, bytes(payload))
            assert type(op) is ops.UpsertSymbol
            self._upsert(op)
        if len(self.symbols) != int(state["symbols"]):
            raise ValueError("symbols: the sidecar and the state disagree")
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        return {"symbols": len(self.symbols), "files": len(self.by_file), "ignored": self.ignored}


def _within(a: str, b: str, limit: int) -> bool:
    """Whether the Levenshtein distance of ``a`` and ``b`` is at most ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return False
        prev = cur
    return prev[-1] <= limit
