"""Group commit for the daemon: the writing calls of many connections, run as one group.

A connection thread with a writing call queues it as a :class:`Job` and waits. The
first thread to find no group running leads: it takes what is queued (at most
``max_jobs`` jobs, about ``max_bytes`` of requests; always its own), runs them under
the daemon's writer lock, gives each job its own result or error and wakes its
thread, then hands the lead to the oldest job still queued. No thread is added and
no call waits for a timer: a group is whatever queued while the previous one ran.

Within a group:

- plain remembers (text and the simple arguments) of a field that embeds on the
  writer's thread (the hashing embedder) become one ``remember_many``: one embedding
  batch, one sparse-code product, one Batch record (one ``write(2)``; with
  ``fsync`` durability one sync). An item that fails validation fails only its own
  call (the group is retried item by item; nothing of a failed item is written);
- the commits a touching recall made while it ran beside the writer (captured:
  ``FieldCore.captured_commits``) become one Batch with every other recall's;
- every other job runs alone, in arrival order.

Each caller is answered only after its records were appended with the field's
durability (``flush``: in the OS; ``fsync``: on disk). Calls of one connection
never share a group (a connection has one call in flight), so each connection's
calls apply in the order it made them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from chitta import ops
from chitta.errors import ChittaError, InvalidArgument
from chitta.field import Field
from chitta.ops import Op

MAX_JOBS = 64  # jobs one group takes at most (the model's batch and BLAS gain little past it)
MAX_BYTES = 4 << 20  # request bytes one group takes at most (its first job always goes)
#: remember() arguments a merged remember_many item may carry (others run the call alone)
MERGEABLE = frozenset(
    {"text", "kind", "realm", "session", "source_tool", "tags", "confidence", "meta", "at"}
)

CALL, REMEMBER, OPS = 0, 1, 2


class Job:
    """One queued writing call: ``run`` (CALL), remember ``params`` (REMEMBER) or
    captured ``ops`` to commit (OPS); ``size``: its request's bytes."""

    __slots__ = (
        "_wake",
        "answered",
        "done",
        "error",
        "kind",
        "ops",
        "params",
        "result",
        "run",
        "size",
    )

    def __init__(
        self,
        kind: int,
        *,
        run: Callable[[], Any] | None = None,
        params: dict[str, Any] | None = None,
        ops: list[Op] | None = None,
        size: int = 0,
    ) -> None:
        self.kind = kind
        self.run = run
        self.params = params
        self.ops = ops
        self.size = size
        self.result: Any = None
        self.error: BaseException | None = None
        self.answered = False  # result or error set
        self.done = False  # its group ran
        self._wake = threading.Lock()
        self._wake.acquire()  # released once: done, or made the next leader

    def answer(self, result: Any = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.answered = result, error, True

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


def mergeable(field: Field, params: dict[str, Any]) -> bool:
    """Whether a remember with these arguments can join a group's remember_many: the
    field embeds on the writer's thread (a sparse-code product to share) and the call
    carries only simple arguments (no dedup, own embedding, artifacts, provenance)."""
    core = field.core
    return core.backlog is None and core.encoding.enabled and params.keys() <= MERGEABLE


class GroupCommit:
    """The daemon's group committer (module doc); ``writer``: its writer lock."""

    def __init__(
        self,
        field: Field,
        writer: threading.Lock,
        *,
        max_jobs: int = MAX_JOBS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.field = field
        self._writer = writer
        self.max_jobs = max_jobs
        self.max_bytes = max_bytes
        self._mu = threading.Lock()
        self._queue: deque[Job] = deque()
        self._leading = False
        self.groups = 0  # groups run
        self.jobs = 0  # jobs run in them

    def submit(self, job: Job) -> Any:
        """Queue ``job``, wait until its group ran, return its result (or raise its error)."""
        with self._mu:
            self._queue.append(job)
            lead = not self._leading
            self._leading = True
        if not lead:
            job._wake.acquire()
            if job.done:
                return job.outcome()
        try:  # this thread leads; its own job is at the head of the queue
            self._lead()
        finally:
            with self._mu:
                if self._queue:
                    self._queue[0]._wake.release()  # not done: it leads the next group
                else:
                    self._leading = False
        return job.outcome()

    def _lead(self) -> None:
        with self._mu:
            group = [self._queue.popleft()]
            size = group[0].size
            while self._queue and len(group) < self.max_jobs:
                size += self._queue[0].size
                if size > self.max_bytes:
                    break
                group.append(self._queue.popleft())
        try:
            with self._writer:
                self._run(group)
        except BaseException as exc:  # every job of the group gets an answer
            for job in group:
                if not job.answered:
                    job.answer(error=exc)
            raise
        finally:
            self.groups += 1
            self.jobs += len(group)
            for job in group:
                job.done = True
            for job in group[1:]:  # the leader's own job is group[0]
                job._wake.release()

    # ---- one group, under the writer lock ---------------------------------------------
    def _run(self, group: list[Job]) -> None:
        remembers = [j for j in group if j.kind == REMEMBER]
        touches = [j for j in group if j.kind == OPS]
        if len(remembers) > 1:
            self._remember_many(remembers)
        else:
            for job in remembers:
                _attempt(job, lambda j=job: self.field.remember(**j.params))  # type: ignore[misc]
        for job in group:
            if job.kind == CALL:
                assert job.run is not None
                _attempt(job, job.run)
        if len(touches) > 1:
            self._commit_ops(touches)
        else:
            for job in touches:
                _attempt(job, lambda j=job: _commit(self.field, j.ops or []))  # type: ignore[misc]

    def _remember_many(self, jobs: list[Job]) -> None:
        core = self.field.core
        before = core.pending_puts.next_local  # ids are taken only once every item checked
        try:
            ids = self.field.remember_many([dict(j.params or {}) for j in jobs])
        except InvalidArgument:
            if core.pending_puts.next_local != before:
                raise  # failed after the checks: not one item's fault
            for job in jobs:  # an item failed its checks: each call on its own
                _attempt(job, lambda j=job: self.field.remember(**j.params))  # type: ignore[misc]
            return
        except ChittaError as exc:
            for job in jobs:
                job.answer(error=exc)
            return
        for job, mid in zip(jobs, ids):
            job.answer(mid)

    def _commit_ops(self, jobs: list[Job]) -> None:
        merged = [op for j in jobs for op in _flat(j.ops or [])]
        try:
            _commit(self.field, merged)
        except ChittaError as exc:
            for job in jobs:
                job.answer(error=exc)
            return
        for job in jobs:
            job.answer()


def _flat(group: list[Op]) -> list[Op]:
    out: list[Op] = []
    for op in group:
        if isinstance(op, ops.Batch):
            out.extend(op.unpack())
        else:
            out.append(op)
    return out


def _commit(field: Field, group: list[Op]) -> None:
    field.core.check_writable()
    field.core.commit_group(_flat(group))


def _attempt(job: Job, fn: Callable[[], Any]) -> None:
    try:
        job.answer(fn())
    except Exception as exc:  # noqa: BLE001  the caller gets it (the daemon reports bugs as internal)
        job.answer(error=exc)
