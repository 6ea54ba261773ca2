"""Pinned recall and the roles that read it.

``pin(task, ...)`` runs a recall once, before the task's first attempt, and logs
the ordered fact ids **and** the rendered bytes; ``pinned(task)`` returns those
bytes, whatever was written since (a later fact would change BM25's statistics
and so a fresh recall's order). A pin is written once: nobody re-pins, and the
task it governs cannot pin at all (``by_task``).

Roles: ``channel(task, role)`` gives the implementer its recalled-memory channel
(the pinned bytes); a reviewer receives no memory and is refused with
:class:`chitta.errors.RoleRefused`, so an empty answer is never an accident.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.curated import read_path
from chitta.errors import InvalidArgument, NotFound, RoleRefused

if TYPE_CHECKING:
    from chitta.organs.curated import CuratedOrgan

__all__ = ["IMPLEMENTER", "REVIEWER", "ROLES", "channel", "pin", "pinned", "task_id"]

IMPLEMENTER, REVIEWER = "implementer", "reviewer"
ROLES = (IMPLEMENTER, REVIEWER)
TASK_PATTERN = "[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}"
_TASK = re.compile(TASK_PATTERN)


def task_id(value: object, what: str = "task_id") -> str:
    if not isinstance(value, str) or not _TASK.fullmatch(value):
        raise InvalidArgument(f"{what} must match {TASK_PATTERN}, got {value!r:.60}")
    return value


def pin(
    organ: CuratedOrgan,
    ctx: Any,
    *,
    task: str,
    query: str = "",
    paths: object = None,
    budget: object = None,
    by_task: str | None = None,
) -> dict[str, Any]:
    task = task_id(task)
    if by_task is not None and task_id(by_task, "by_task") == task:
        raise RoleRefused(f"task {task} cannot pin its own recall; its orchestrator pins it")
    if task in organ.pins:
        raise RoleRefused(
            f"task {task} is already pinned; read it with memory_pinned (pins never change)"
        )
    if not isinstance(query, str):
        raise InvalidArgument("query must be text")
    size = read_path.budget_of(organ, budget)
    chosen = (
        read_path.chosen(organ, paths)
        if paths is not None
        else read_path.choose_paths(organ, ctx, query, task)
    )
    got = read_path.recall(organ, chosen, query, size)
    ctx.commit(
        ops.CuratedEvent(
            event="pin",
            key=task,
            at_ms=ctx.now_ms(),
            refs=got.ids,
            blob=got.text,
            paths=tuple(p.render() for p in chosen),
            text=query or None,
        )
    )
    return {"task": task, **got.as_dict()}


def pinned(organ: CuratedOrgan, task: str) -> tuple[tuple[str, ...], bytes]:
    found = organ.pins.get(task_id(task))
    if found is None:
        raise NotFound(f"task {task} has no pin; pin it (memory_pin) before its first attempt")
    return found[0], found[1]


def channel(organ: CuratedOrgan, task: str, role: str) -> bytes:
    if role == REVIEWER:
        raise RoleRefused(
            "the reviewer role receives no memory: a reviewer that reads what the implementer "
            "read makes correlated mistakes; review from the task's evidence instead"
        )
    if role != IMPLEMENTER:
        raise InvalidArgument(f"role must be one of {list(ROLES)}, not {role!r:.40}")
    return pinned(organ, task)[1]
