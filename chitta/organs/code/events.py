"""The symbol-event log organ: typed events keyed on symbol identity.

Events: Created, Edited, Deleted, TestFailed, TestPassed, Committed, each with
symbol, file, time, session, harness, an optional memory id and ``ref`` (a
commit hash or change id). Sources, all in the log, so replay rebuilds the
same log (D-042):
- AnalyticsEvent ops with ``event="symbol_event"`` (``outcome`` the event kind);
- UpsertSymbol: a new (or removed) name is Created; a known name is Edited
  unless the op and the symbol held both carry the same ``body_hash``;
- RemoveSymbol of a known symbol: Deleted.
ClearProject makes no events (re-indexing after a clear is not an edit; the
body hashes kept here still tell a real edit from a re-upsert).
Indexed by symbol key and by file path.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.code.event_ops import OPERATIONS
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext

__all__ = ["SymbolEvent", "SymbolEventsOrgan"]

SIDECAR = "symbol_events.rec"
MAGIC = b"CHITTASE"
VERSION = 1


class SymbolEvent(NamedTuple):
    kind: str
    symbol: str | None
    file: str | None
    at_ms: int
    session: str | None = None
    harness: str | None = None
    memory_id: int | None = None
    ref: str | None = None

    def public(self) -> dict[str, Any]:
        return self._asdict()


class SymbolEventsOrgan(OrganBase):
    name = "symbol_events"
    handles = frozenset({OpType.AnalyticsEvent, OpType.UpsertSymbol, OpType.RemoveSymbol})
    operations = OPERATIONS

    def __init__(self) -> None:
        self.events: list[SymbolEvent] = []
        self.by_symbol: dict[str, list[int]] = {}
        self.by_file: dict[str, list[int]] = {}
        # symbol -> (file, body hash, live): what an upsert is compared with
        self.known: dict[str, tuple[str, str | None, bool]] = {}
        self.ignored = 0  # symbol events with an unknown kind, removals of unknown symbols

    def apply(self, op: Op) -> None:
        if isinstance(op, ops.AnalyticsEvent):
            self._analytics(op)
        elif isinstance(op, ops.UpsertSymbol):
            self._upsert(op)
        elif isinstance(op, ops.RemoveSymbol):
            k = self.known.get(op.name)
            if k is None or not k[2]:
                self.ignored += 1
                return
            self.known[op.name] = (k[0], k[1], False)
            self._log(SymbolEvent("Deleted", op.name, k[0], op.at_ms))

    def _analytics(self, op: ops.AnalyticsEvent) -> None:
        if op.event != "symbol_event":
            return  # another organ's analytics
        if op.outcome not in ops.SYMBOL_EVENTS or (op.symbol is None and op.file_path is None):
            self.ignored += 1
            return
        mid = op.memory_ids[0] if op.memory_ids else None
        self._log(
            SymbolEvent(
                op.outcome, op.symbol, op.file_path, op.at_ms, op.session, op.harness, mid, op.ref
            )
        )

    def _upsert(self, op: ops.UpsertSymbol) -> None:
        if not op.name:
            return
        k = self.known.get(op.name)
        self.known[op.name] = (op.file_path, op.body_hash, True)
        if k is None or not k[2]:
            kind = "Created"
        elif op.body_hash is not None and op.body_hash == k[1]:
            return  # moved, not edited
        else:
            kind = "Edited"
        self._log(
            SymbolEvent(kind, op.name, op.file_path, op.at_ms, op.session, op.harness, op.memory_id)
        )

    def _log(self, e: SymbolEvent) -> None:
        i = len(self.events)
        self.events.append(e)
        if e.symbol is not None:
            self.by_symbol.setdefault(e.symbol, []).append(i)
        if e.file is not None:
            self.by_file.setdefault(e.file, []).append(i)

    # -- queries ---------------------------------------------------------------------
    def of_symbol(self, name: str, *, after_ms: int | None = None) -> list[SymbolEvent]:
        out = [self.events[i] for i in self.by_symbol.get(name, ())]
        return out if after_ms is None else [e for e in out if e.at_ms > after_ms]

    def of_file(self, path: str, *, after_ms: int | None = None) -> list[SymbolEvent]:
        out = [self.events[i] for i in self.by_file.get(path, ())]
        return out if after_ms is None else [e for e in out if e.at_ms > after_ms]

    # -- checkpoints -----------------------------------------------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows: list[Any] = [list(e) for e in self.events]
        rows.append(sorted([n, f, h, live] for n, (f, h, live) in self.known.items()))
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"events": len(self.events), "known": len(self.known), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        if int(state["events"]) == 0 and int(state["known"]) == 0 and SIDECAR not in ctx.sidecars:
            rows: list[Any] = [[]]
        else:
            rows = ctx.read_records(SIDECAR, MAGIC, VERSION)
        if not rows:
            raise ValueError("symbol_events: the sidecar lacks its symbol row")
        for kind, sym, file, at, sess, harness, mid, ref in rows[:-1]:
            self._log(
                SymbolEvent(
                    str(kind), _s(sym), _s(file), int(at), _s(sess), _s(harness),
                    None if mid is None else int(mid), _s(ref),
                )
            )  # fmt: skip
        self.known = {str(n): (str(f), _s(h), bool(live)) for n, f, h, live in rows[-1]}
        if len(self.events) != int(state["events"]) or len(self.known) != int(state["known"]):
            raise ValueError("symbol_events: the sidecar and the state disagree")
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for e in self.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return {"events": len(self.events), **{f"events_{k}": n for k, n in sorted(kinds.items())}}


def _s(value: Any) -> str | None:
    return None if value is None else str(value)
