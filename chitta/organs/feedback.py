"""Feedback and outcomes: what agents said about recalled memories and predictions.

``RecordFeedback`` (was a recalled memory useful?) and ``RecordSurprise`` (a
prediction error: expected vs actual, magnitude in [0, 1]) are facts, stored as
they come: counts per memory and per ``(domain, source)``, failures per session
(the input of frustration escalation), and the last ``KEEP`` surprises. The
learning they feed (source weights, the scorer model, surprise credit) is
computed by :mod:`chitta.field.learning` and logged as its own ops. The
operations ``feedback`` and ``record_outcome`` are those entry points.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import Operation, OrganBase, RestoreContext, SnapshotContext
from chitta.policies.credit import matches

KEEP = 256  # the most recent surprises kept for queries


def _feedback(organ: FeedbackOrgan, ctx: Any, **kw: Any) -> dict[str, Any]:
    from chitta.field import learning

    return learning.feedback(ctx, **kw)


def _outcome(organ: FeedbackOrgan, ctx: Any, **kw: Any) -> dict[str, Any]:
    from chitta.field import learning

    return learning.record_outcome(ctx, **kw)


def _stats(organ: FeedbackOrgan, ctx: Any) -> dict[str, Any]:
    return {
        **organ.stats(),
        "recent_surprises": [
            dict(zip(("expected", "actual", "surprise", "at"), r)) for r in organ.recent
        ],
    }


_ID = {"type": ["string", "integer"], "description": "a memory id a recall returned"}
_IDS = {"type": "array", "items": _ID, "maxItems": 256}
_TEXT = {"type": "string", "maxLength": 4096}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "feedback",
        _feedback,
        {
            "type": "object",
            "properties": {
                "memory_id": _ID,
                "recall_id": {
                    **_TEXT,
                    "description": "the recall_id of the recall it came from (then query may be "
                    "left out; memory_id too when that recall returned one memory)",
                },
                "useful": {"type": "boolean", "description": "did the memory help?"},
                "query": {
                    **_TEXT,
                    "description": "the recall query it came from (the scorer learns from it)",
                },
                "source": {**_TEXT, "description": "what produced it; default its source tool"},
                "session": _TEXT,
                "note": _TEXT,
            },
            "required": ["useful"],
            "additionalProperties": False,
        },
        "Say whether a recalled memory was useful (memory_id, or recall_id and memory_id). Updates the source's learned weight "
        "and, with the recall query, the learned scorer. Returns the new weights.",
        writes=True,
    ),
    Operation(
        "record_outcome",
        _outcome,
        {
            "type": "object",
            "properties": {
                "expected": {**_TEXT, "description": "what the memories predicted"},
                "actual": {**_TEXT, "description": "what happened (a tool result, a correction)"},
                "surprise": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "how surprising, 0-1; default 1 if actual differs "
                    "from expected, else 0",
                },
                "memory_ids": {**_IDS, "description": "the memories the prediction rested on"},
                "source": _TEXT,
                "session": _TEXT,
            },
            "required": ["expected", "actual"],
            "additionalProperties": False,
        },
        "Record an outcome (a tool result, a correction) against what memories predicted; "
        "the surprise credit of those memories moves their strength once a pattern holds.",
        writes=True,
    ),
    Operation(
        "feedback_stats",
        _stats,
        {"type": "object", "properties": {}, "additionalProperties": False},
        "Counts of feedback and outcomes the field holds, and the latest surprises.",
        reads=True,
    ),
)


class FeedbackOrgan(OrganBase):
    name = "feedback"
    handles = frozenset({OpType.RecordFeedback, OpType.RecordSurprise})
    operations = OPERATIONS

    def __init__(self) -> None:
        self.by_memory: dict[int, list[int]] = {}  # id -> [useful, not useful]
        self.by_source: dict[tuple[str, str], list[int]] = {}
        self.failures: dict[str, int] = {}  # session -> outcomes that differed from expected
        # the session of the latest outcome with one, and its run of consecutive failures
        # (frustration escalation: chitta.recall.learned)
        self.last_session: str | None = None
        self.failure_run = 0
        self.recent: list[list[Any]] = []  # [expected, actual, surprise, at (s)]
        self.surprises = 0

    def apply(self, op: Op) -> None:
        if isinstance(op, ops.RecordFeedback):
            slot = 0 if op.useful else 1
            if op.memory_id is not None:
                self.by_memory.setdefault(op.memory_id, [0, 0])[slot] += 1
            self.by_source.setdefault((op.domain, op.source), [0, 0])[slot] += 1
        elif isinstance(op, ops.RecordSurprise):
            self.surprises += 1
            failed = not matches(op.expected, op.actual)
            if op.session is not None:
                if failed:
                    self.failures[op.session] = self.failures.get(op.session, 0) + 1
                run = self.failure_run if op.session == self.last_session else 0
                self.failure_run = run + 1 if failed else 0
                self.last_session = op.session
            self.recent.append([op.expected, op.actual, float(op.surprise), op.at_ms / 1000.0])
            del self.recent[:-KEEP]

    def useful_counts(self, mid: int) -> tuple[int, int]:
        c = self.by_memory.get(mid)
        return (0, 0) if c is None else (c[0], c[1])

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        return {
            "memory": [[k, *c] for k, c in sorted(self.by_memory.items())],
            "source": [[d, s, *c] for (d, s), c in sorted(self.by_source.items())],
            "failures": sorted([k, n] for k, n in self.failures.items()),
            "recent": self.recent,
            "surprises": self.surprises,
            "run": [self.last_session, self.failure_run],
        }

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        self.by_memory = {int(k): [int(a), int(b)] for k, a, b in state["memory"]}
        self.by_source = {(str(d), str(s)): [int(a), int(b)] for d, s, a, b in state["source"]}
        self.failures = {str(k): int(n) for k, n in state["failures"]}
        self.recent = [[str(e), str(a), float(s), float(t)] for e, a, s, t in state["recent"]]
        self.surprises = int(state["surprises"])
        session, run = state["run"]
        self.last_session, self.failure_run = (None if session is None else str(session)), int(run)

    def stats(self) -> dict[str, Any]:
        return {
            "feedback": sum(a + b for a, b in self.by_memory.values()),
            "sources": len(self.by_source),
            "surprises": self.surprises,
        }
