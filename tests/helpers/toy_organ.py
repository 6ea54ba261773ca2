"""A toy organ, written the way CONTRIBUTING.md says: one file, one registry line.

``SessionTally`` keeps, per agent session, how many SessionEvent ops of each
event kind the log holds. It offers one query (``session_tally``) and one
write (``session_note``) as operations, and one maintenance pass (closing sessions
left registered, hourly), so both reach Python (``Field.call``),
the daemon (``RemoteField.call``) and MCP with no other edit. Its snapshot goes
to a sidecar through the shared organ sidecar format.

Register it with ``chitta.organs.registry.register(SessionTally)``, or in a
process chitta starts with ``CHITTA_ORGANS=toy_organ:SessionTally`` (this
directory on ``PYTHONPATH``).
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs import Maintenance, Operation, OrganBase, RestoreContext, SnapshotContext

SIDECAR = "session_tally.rec"
MAGIC = b"CHITTALY"


def _tally(organ: SessionTally, ctx: Any, *, session: str) -> dict[str, Any]:
    counts = organ.counts.get(session, {})
    return {
        "session": session,
        "events": dict(sorted(counts.items())),
        "total": sum(counts.values()),
    }


def _note(
    organ: SessionTally, ctx: Any, *, session: str, event: str = "register"
) -> dict[str, Any]:
    ctx.commit(ops.SessionEvent(event=event, session=session, at_ms=ctx.now_ms()))
    return _tally(organ, ctx, session=session)


def _close_open_sessions(organ: SessionTally, ctx: Any) -> int:
    """Maintenance: a session registered and never deregistered gets a deregister event."""
    stale = sorted(
        s for s, per in organ.counts.items() if per.get("register", 0) > per.get("deregister", 0)
    )
    for session in stale:
        ctx.commit(ops.SessionEvent(event="deregister", session=session, at_ms=ctx.now_ms()))
    return len(stale)


class SessionTally(OrganBase):
    name = "session_tally"
    handles = frozenset({OpType.SessionEvent})
    operations = (
        Operation(
            "session_tally",
            _tally,
            {
                "type": "object",
                "properties": {"session": {"type": "string", "description": "a session id"}},
                "required": ["session"],
                "additionalProperties": False,
            },
            "How many session events of each kind the field holds for one agent session.",
            reads=True,
        ),
        Operation(
            "session_note",
            _note,
            {
                "type": "object",
                "properties": {
                    "session": {"type": "string"},
                    "event": {"type": "string", "enum": sorted(ops.SESSION_EVENTS)},
                },
                "required": ["session"],
                "additionalProperties": False,
            },
            "Record a lifecycle event of an agent session; returns its tally.",
            writes=True,
        ),
    )
    maintenance = (Maintenance("close_open_sessions", _close_open_sessions, every_s=3600.0),)

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}

    def apply(self, op: Op) -> None:
        if type(op) is ops.SessionEvent:
            per = self.counts.setdefault(op.session, {})
            per[op.event] = per.get(op.event, 0) + 1

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [[s, e, n] for s, per in sorted(self.counts.items()) for e, n in sorted(per.items())]
        ctx.write_records(SIDECAR, MAGIC, 1, rows)
        return {"sessions": len(self.counts)}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        for session, event, n in ctx.read_records(SIDECAR, MAGIC, 1):
            self.counts.setdefault(str(session), {})[str(event)] = int(n)
        if len(self.counts) != int(state["sessions"]):
            raise ValueError("session_tally: the sidecar and the state disagree")

    def stats(self) -> dict[str, Any]:
        return {"sessions": len(self.counts)}
