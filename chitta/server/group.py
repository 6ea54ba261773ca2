"""Group commit for the daemon: the writing calls of many connections, run as one group.

The daemon's I/O loop posts each writing call as a :class:`Job` (:meth:`GroupCommit.post`)
and goes on serving. One writer thread takes what is queued (at most ``max_jobs``
jobs, about ``max_bytes`` of requests; always the first), runs it under the daemon's
writer lock, gives each job its own result or error and calls its ``reply`` (the
daemon's: frame and send the answer). No call waits for a timer: a group is whatever
queued while the previous one ran; alone, a call is a group of one.

Within a group:

- plain remembers (text and the simple arguments) of a field that embeds on the
  writer's thread (the hashing embedder) become one ``remember_many``: one embedding
  batch, one Batch record (one ``write(2)``; with ``fsync`` durability one sync);
  their sparse codes come from the field's background coder when the field defers
  them (``FieldCore.defer_codes``: the daemon's), else from one product inline. An item
  that fails validation fails only its own call (the group is retried item by item;
  nothing of a failed item is written);
- the commits a touching recall made while it ran beside the writer (captured:
  ``FieldCore.captured_commits``) become one Batch with every other recall's;
- every other job runs alone, in arrival order.

Each caller is answered only after its records were appended with the field's
durability (``flush``: in the OS; ``fsync``: on disk). Calls of one connection
never share a group (a connection has one call in flight), so each connection's
calls apply in the order it made them.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from chitta import ops
from chitta.errors import ChittaError, InvalidArgument
from chitta.field import Field
from chitta.field.background_priority import yield_on_wakeup
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
    captured ``ops`` to commit (OPS); ``size``: its request's bytes; ``reply``: called
    with the job once its group ran (on the writer thread)."""

    __slots__ = (
        "answered",
        "done",
        "error",
        "kind",
        "ops",
        "params",
        "reply",
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
        reply: Callable[[Job], None] | None = None,
    ) -> None:
        self.kind = kind
        self.run = run
        self.params = params
        self.ops = ops
        self.size = size
        self.reply = reply
        self.result: Any = None
        self.error: BaseException | None = None
        self.answered = False  # result or error set
        self.done = False  # its group ran

    def answer(self, result: Any = None, error: BaseException | None = None) -> None:
        self.result, self.error, self.answered = result, error, True

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


def mergeable(field: Field, params: dict[str, Any]) -> bool:
    """Whether a remember with these arguments can join a group's remember_many: the
    field embeds on the writer's thread (one embedding batch, codes shared or deferred)
    and the call carries only simple arguments (no dedup, own embedding, artifacts,
    provenance)."""
    core = field.core
    return core.backlog is None and core.encoding.enabled and params.keys() <= MERGEABLE


class GroupCommit:
    """The daemon's group committer (module doc); ``writer``: its writer lock;
    ``hold``: a context manager held around each group (the daemon's shared lock, so
    that maintenance runs alone); ``max_jobs`` 1 runs every job alone (no merging)."""

    def __init__(
        self,
        field: Field,
        writer: threading.Lock,
        *,
        max_jobs: int = MAX_JOBS,
        max_bytes: int = MAX_BYTES,
        hold: AbstractContextManager[Any] | None = None,
        batch_thread: bool = False,
    ) -> None:
        self.field = field
        # the writer thread SCHED_BATCH (background_priority.yield_on_wakeup): for a poster
        # that holds the GIL while it goes on (the daemon's loop serving reads itself)
        self.batch_thread = batch_thread
        self._writer = writer
        self._hold = hold if hold is not None else contextlib.nullcontext()
        self.max_jobs = max_jobs
        self.max_bytes = max_bytes
        self._cv = threading.Condition(threading.Lock())
        self._queue: deque[Job] = deque()
        self._waiting = False  # the writer thread sleeps on _cv
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.groups = 0  # groups run
        self.jobs = 0  # jobs run in them

    # ---- the writer thread ---------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="chitta-writer", daemon=True)
            self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Run what is queued, then end the writer thread."""
        with self._cv:
            self._stopping = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def post(self, job: Job) -> None:
        """Queue ``job``; its ``reply`` is called once its group ran."""
        with self._cv:
            self._queue.append(job)
            if self._waiting:
                self._cv.notify()

    def _serve(self) -> None:
        if self.batch_thread:
            yield_on_wakeup()  # woken, it waits for the poster's slice (background_priority.py)
        while True:
            with self._cv:
                while not self._queue:
                    if self._stopping:
                        return
                    self._waiting = True
                    self._cv.wait()
                    self._waiting = False
                group = self._take()
            self._lead(group)

    def _take(self) -> list[Job]:
        """The next group, taken off the queue (under ``_cv``)."""
        group = [self._queue.popleft()]
        size = group[0].size
        while self._queue and len(group) < self.max_jobs:
            size += self._queue[0].size
            if size > self.max_bytes:
                break
            group.append(self._queue.popleft())
        return group

    def _lead(self, group: list[Job]) -> None:
        try:
            with self._hold, self._writer:
                self._run(group)
                core = self.field.core
                with core.lock:  # the readers then find nothing due: they run side by side
                    if not core.closed:
                        core.index.ready_for_reads()
        except BaseException as exc:  # noqa: BLE001  every job of the group gets an answer
            for job in group:
                if not job.answered:
                    job.answer(error=exc)
        finally:
            self.groups += 1
            self.jobs += len(group)
            for job in group:
                job.done = True
                if job.reply is not None:
                    try:
                        job.reply(job)
                    except Exception as exc:  # noqa: BLE001  one reply's failure is its own
                        print(f"chitta serve: reply failed: {exc!r}", file=sys.stderr)

    # ---- one group, under the writer lock ---------------------------------------------
    def _run(self, group: list[Job]) -> None:
        remembers = [j for j in group if j.kind == REMEMBER]
        touches = [j for j in group if j.kind == OPS]
        # a field that defers its codes gains from remember_many even for one item (the
        # codes leave the writer's thread)
        if len(remembers) > 1 or (remembers and self.field.core.defer_codes):
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
