"""Payloads of the lifecycle-event ops: sessions, transcripts, tasks, the user
model, themes, analytics, hypothetical branches, triggers and the predictor.

Each carries an ``event`` naming what happened, from a documented set, and the
fields that event needs; fields an event does not use stay at their defaults.
"""

from __future__ import annotations

from typing import Any, ClassVar

from chitta.ops.base import I64, U64, OpBase, OpType

__all__ = [
    "ANALYTICS_EVENTS",
    "BRANCH_EVENTS",
    "PREDICTOR_EVENTS",
    "SESSION_EVENTS",
    "SYMBOL_EVENTS",
    "TASK_EVENTS",
    "TASK_KINDS",
    "THEME_EVENTS",
    "TRANSCRIPT_EVENTS",
    "TRIGGER_EVENTS",
    "USER_MODEL_EVENTS",
    "USER_MODEL_KINDS",
    "AnalyticsEvent",
    "BranchEvent",
    "PredictorEvent",
    "SessionEvent",
    "TaskEvent",
    "ThemeEvent",
    "TranscriptEvent",
    "TriggerEvent",
    "UserModelEvent",
]

SESSION_EVENTS = frozenset({"register", "heartbeat", "deregister", "message_send", "message_ack"})
TRANSCRIPT_EVENTS = frozenset({"register", "update_progress", "add_turn", "create_episode"})
TASK_EVENTS = frozenset({"create", "start", "progress", "complete", "fail", "cancel"})
TASK_KINDS = frozenset({"sadhana", "long_task", "dream", "background"})
USER_MODEL_EVENTS = frozenset({"upsert", "observe", "remove"})
USER_MODEL_KINDS = frozenset(
    {"profile", "goal", "habit", "anticipation", "calibration", "user", "org", "person"}
)
THEME_EVENTS = frozenset({"create", "update_centroid", "assign_member", "remove_member", "delete"})
ANALYTICS_EVENTS = frozenset(
    {
        "exposure",
        "recall_query",
        "correction",
        "usage_outcome",
        "symbol_event",
        "router_request",  # the router's log (chitta/organs/router_log.py)
        "router_fill",
        "router_metrics",
    }
)
SYMBOL_EVENTS = frozenset({"Created", "Edited", "Deleted", "TestFailed", "TestPassed", "Committed"})
"""Values of ``AnalyticsEvent.outcome`` when ``event == "symbol_event"``."""
BRANCH_EVENTS = frozenset({"create", "resolve", "discard"})
TRIGGER_EVENTS = frozenset({"add", "dismiss", "fire"})
PREDICTOR_EVENTS = frozenset({"transition", "access"})


class SessionEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """An agent session's lifecycle, and messages between sessions.

    ``message_send`` uses ``message_id``, ``to_session`` and ``body``;
    ``message_ack`` uses ``message_id``.
    """

    op_type: ClassVar[OpType] = OpType.SessionEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": SESSION_EVENTS}

    event: str
    session: str
    at_ms: I64
    harness: str | None = None
    pid: int | None = None
    cwd: str | None = None
    message_id: U64 | None = None
    to_session: str | None = None
    body: str | None = None


class TranscriptEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """A transcript's lifecycle: registered, read up to ``offset``, a turn, an episode.

    ``create_episode`` links the episode memory ``memory_id`` to turns
    ``first_turn..last_turn``.
    """

    op_type: ClassVar[OpType] = OpType.TranscriptEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": TRANSCRIPT_EVENTS}

    event: str
    transcript: str
    at_ms: I64
    session: str | None = None
    path: str | None = None
    offset: int | None = None
    turn: int | None = None
    role: str | None = None
    text: str | None = None
    first_turn: int | None = None
    last_turn: int | None = None
    memory_id: U64 | None = None


class TaskEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """A background task's lifecycle (``kind`` in ``TASK_KINDS``)."""

    op_type: ClassVar[OpType] = OpType.TaskEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": TASK_EVENTS, "kind": TASK_KINDS}

    event: str
    task: str
    at_ms: I64
    kind: str | None = None
    session: str | None = None
    title: str | None = None
    progress: float | None = None
    detail: str | None = None
    meta: dict[str, Any] | None = None


class UserModelEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """Upsert (full overwrite), observe (count one sighting) or remove a user-model entity.

    Entities are keyed by ``(kind, key)``; ``payload`` is opaque JSON-like data.
    """

    op_type: ClassVar[OpType] = OpType.UserModelEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {
        "event": USER_MODEL_EVENTS,
        "kind": USER_MODEL_KINDS,
    }

    event: str
    kind: str
    key: str
    at_ms: I64
    payload: dict[str, Any] | None = None
    confidence: float | None = None


class ThemeEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """Theme clustering: create, move the centroid, add or drop a member, delete.

    ``centroid`` is little-endian float32 bytes; ``member``/``realm`` name the
    memory an assign/remove concerns.
    """

    op_type: ClassVar[OpType] = OpType.ThemeEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": THEME_EVENTS}

    event: str
    theme: U64
    at_ms: I64
    label: str | None = None
    centroid: bytes | None = None
    coherence: float | None = None
    member: U64 | None = None
    realm: str | None = None


class AnalyticsEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """Usage analytics: an exposure, a recall query, a correction, an outcome,
    or a symbol event (``outcome`` in ``SYMBOL_EVENTS``, ``symbol`` and
    ``file_path`` set, ``ref`` a commit hash or change id)."""

    op_type: ClassVar[OpType] = OpType.AnalyticsEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": ANALYTICS_EVENTS}

    event: str
    at_ms: I64
    session: str | None = None
    harness: str | None = None
    memory_ids: tuple[U64, ...] = ()
    query: str | None = None
    outcome: str | None = None
    value: float | None = None
    symbol: str | None = None
    file_path: str | None = None
    ref: str | None = None


class BranchEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """A hypothetical branch: created from ``parent``, resolved with an outcome, or discarded."""

    op_type: ClassVar[OpType] = OpType.BranchEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": BRANCH_EVENTS}

    event: str
    branch: U64
    at_ms: I64
    parent: U64 | None = None
    hypothesis: str | None = None
    outcome: str | None = None
    memory_ids: tuple[U64, ...] = ()


class TriggerEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """A trigger: added (``pattern`` -> ``action``), dismissed, or fired."""

    op_type: ClassVar[OpType] = OpType.TriggerEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": TRIGGER_EVENTS}

    event: str
    trigger: U64
    at_ms: I64
    pattern: str | None = None
    action: str | None = None
    memory_id: U64 | None = None
    context: str | None = None


class PredictorEvent(OpBase, frozen=True, kw_only=True, array_like=True):
    """Markov predictor: bump the edge ``from_id -> to_id`` by ``delta``
    (``transition``), or record an access of ``to_id`` (``access``)."""

    op_type: ClassVar[OpType] = OpType.PredictorEvent
    enums: ClassVar[dict[str, frozenset[str]]] = {"event": PREDICTOR_EVENTS}

    event: str
    to_id: U64
    at_ms: I64
    from_id: U64 | None = None
    delta: float = 1.0
