"""Deferred sparse codes: a large group of vectors gets its codes off the caller's thread.

A memory's sparse code (``UpdateSparseCode``: the 64 of 16,384 learned atoms that
project most strongly onto its vector) costs one ``[dim] x [dim, 16384]`` product and
a partial sort: ~1 ms per memory on one core, fifty times what the rest of a write
costs. ``remember_many`` with ``CODE_INLINE_MAX`` or more vectors therefore logs its
puts (vectors included) as one atomic Batch and returns; the ids wait in the handle's
code backlog (``core.code_backlog``), and a background thread of the handle codes them
in steps of ``STEP``: one Batch of ``UpdateSparseCode`` per step, then the embedded-
write counters (write gate, the encoder's learning cadence) on that thread, as the
background embedder does (:mod:`chitta.field.deferred`). Smaller groups and single
writes code inline, in the same Batch as their puts, as before. A handle with
``core.defer_codes`` (the daemon's field) defers the codes of every ``remember_many``,
its embedder's vectors too, and its coder steps every ``EAGER_S`` instead of giving
way to the writes: the writer's critical path is the log append.

Replay applies the logged codes as written: it never re-derives one. Until its code is
logged a memory is found by the dense and keyword lanes; then by the sparse lane too.
A crash (or ``close()``, which does not wait) between the puts and their codes leaves
memories with vectors and no code: the next writable open queues them again (live,
with a non-zero vector, no code). ``Field.wait_embedded`` waits for this backlog too.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque

import numpy as np

from chitta import free_memory
from chitta.encode.field_encoding import code_columns
from chitta.errors import ChittaError
from chitta.field.background_priority import lower_this_thread
from chitta.field.core import FieldCore
from chitta.recall.blas import one_thread

# codes per background step: one Batch record (~300 KiB at 64 features), handed to the
# code store as arrays (core.commit_codes); the projections go in blocks of 128 rows
# (chitta/encode/sparse_encode.py), so a step holds ~35 MB at 16,384 features (D-075)
STEP = 1024
CODE_INLINE_MAX = 256  # groups with fewer vectors than this code inline
# The coder gives way to a running ingest: it steps once no group was queued for
# IDLE_S, or MAX_YIELD_S after its last step at the latest (it never starves), or at
# once while someone waits for it (wait_embedded, close of a small backlog).
IDLE_S = 0.05
MAX_YIELD_S = 10.0
# With core.defer_codes (the daemon) the coder steps once EAGER_STEP ids wait or EAGER_S
# after its last step, off the writer's thread. A product's cost per row falls with its
# rows until ~128 (one core: ~350 us a row at 16, 275 at 32, 180 at 128 and past; the
# 384 x 16,384 atoms are read once a block), so the coder gathers ~0.2 s of writes.
EAGER_STEP = 128
EAGER_S = 0.2


class CodeBacklog:
    """One handle's ids waiting for their sparse codes, and the thread that codes them."""

    def __init__(self) -> None:
        self.ids: deque[int] = deque()
        self.inflight = 0
        self.lock = threading.Lock()  # guards ids, inflight, thread
        self.step_lock = threading.Lock()  # one step at a time; close() takes it
        self.done = threading.Condition()
        self.thread: threading.Thread | None = None
        self.error: ChittaError | None = None
        self.coded = 0  # codes this handle logged from the backlog
        self.last_queued = 0.0  # time.monotonic() of the last queue()
        self.waiters = 0  # callers in wait(): the coder does not give way then

    def __len__(self) -> int:
        return len(self.ids) + self.inflight


def attach(core: FieldCore) -> None:
    """At a writable open: a backlog for this handle, holding what a crash (or a close
    that did not wait) left without codes; their coding starts in the background."""
    backlog = core.code_backlog = CodeBacklog()
    if core.encoder_organ.encoder is None:
        return
    left = core.index.ids_without_code()
    if len(left):
        queue(core, left.tolist())
    del backlog


def queue(core: FieldCore, ids: list[int]) -> None:
    """Ids whose puts (with vectors) are committed and whose codes are to come."""
    backlog: CodeBacklog | None = core.code_backlog
    if backlog is None:  # a handle opened without one (read-only handles do not write)
        raise ChittaError("this handle has no code backlog; open the field writable")
    with backlog.lock:
        backlog.ids.extend(ids)
        backlog.last_queued = time.monotonic()
        if backlog.thread is None:
            backlog.thread = threading.Thread(
                target=_run, args=(core, backlog), name="chitta-coder", daemon=True
            )
            backlog.thread.start()


def pending(core: FieldCore) -> int:
    backlog: CodeBacklog | None = getattr(core, "code_backlog", None)
    return 0 if backlog is None else len(backlog)


def _give_way(core: FieldCore, backlog: CodeBacklog, since: float) -> None:
    """Sleep while groups keep arriving (the writer's thread needs the GIL and the core
    more than the codes do), at most until MAX_YIELD_S after ``since``. A field that
    defers every code (``core.defer_codes``, the daemon's) does not give way: it steps
    once EAGER_STEP ids wait or EAGER_S after its last step, so codes lag writes by
    about EAGER_S and the backlog cannot grow under a steady load."""
    if core.defer_codes:
        while not core.closed and not backlog.waiters and len(backlog.ids) < EAGER_STEP:
            left = EAGER_S - (time.monotonic() - since)
            if left <= 0:
                return
            time.sleep(min(left, EAGER_S / 5))
        return
    while not core.closed and not backlog.waiters:
        now = time.monotonic()
        if now - backlog.last_queued >= IDLE_S or now - since >= MAX_YIELD_S:
            return
        time.sleep(IDLE_S)


def _run(core: FieldCore, backlog: CodeBacklog) -> None:
    lower_this_thread()
    since = time.monotonic()
    while True:
        _give_way(core, backlog, since)
        since = time.monotonic()
        with backlog.lock:
            if not backlog.ids or core.closed:
                backlog.thread = None
                break
        taken = step(core)
        free_memory.give_back()  # the step's projection blocks and partial sorts
        if not taken and backlog.error is not None:
            with backlog.lock:
                backlog.thread = None
            print(f"chitta: background sparse coding failed: {backlog.error}", file=sys.stderr)
            break
    with backlog.done:
        backlog.done.notify_all()


def step(core: FieldCore, limit: int = STEP) -> int:
    """Code and log up to ``limit`` ids of the backlog; returns how many were taken."""
    backlog: CodeBacklog = core.code_backlog
    with backlog.step_lock:
        with backlog.lock:
            ids = [backlog.ids.popleft() for _ in range(min(limit, len(backlog.ids)))]
            backlog.inflight = len(ids)
        try:
            n = _code(core, ids)
            backlog.error = None
        except ChittaError as exc:
            with backlog.lock:
                backlog.ids.extendleft(reversed(ids))
            backlog.error = exc
            return 0
        finally:
            backlog.inflight = 0
            with backlog.done:
                backlog.done.notify_all()
        backlog.coded += n
        if n:
            from chitta.field import maintain

            try:  # the learning cadence counts coded vectors, on this thread
                maintain.after_embedded_writes(core, n)
            except ChittaError as exc:
                backlog.error = exc
    return len(ids)


def _code(core: FieldCore, ids: list[int]) -> int:
    """Codes of the ids still live with a vector and no code, logged as one Batch."""
    if not ids:
        return 0
    with core.lock:
        if core.closed:
            return 0
        mids, vecs = _uncoded(core, ids)
        encoder = core.encoder_organ.encoder
        version = -1 if encoder is None else encoder.version
    if encoder is None or not len(mids):
        return 0
    with one_thread():  # outside the lock: writers go on meanwhile
        codes = code_columns(encoder, mids, vecs)
    with core.lock:
        if core.closed:
            return 0
        again, vecs2 = _uncoded(core, mids)
        current = core.encoder_organ.encoder
        if current is not encoder or current.version != version or again != mids:
            # the encoder learned, or a memory changed, meanwhile: code what is left now
            if current is None or not again:
                return 0
            with one_thread():
                codes = code_columns(current, again, vecs2)
        elif not np.array_equal(vecs, vecs2):
            with one_thread():
                codes = code_columns(current, again, vecs2)
        core.commit_codes(codes)
    return len(codes)


def _uncoded(core: FieldCore, ids: list[int]) -> tuple[list[int], np.ndarray]:
    """(ids still live, with a vector and no code; their vectors as put), under the lock."""
    index = core.index
    keep = [mid for mid in ids if index.code_version(mid) is None]
    mids, vecs = core.memories.vectors_of(keep)
    return mids, vecs


def wait(core: FieldCore, timeout: float | None) -> bool:
    """True once this handle's code backlog is empty, False at the timeout."""
    backlog: CodeBacklog | None = getattr(core, "code_backlog", None)
    if backlog is None:
        return True
    deadline = None if timeout is None else time.monotonic() + timeout
    with backlog.lock:
        backlog.waiters += 1
    try:
        return _wait(core, backlog, deadline)
    finally:
        with backlog.lock:
            backlog.waiters -= 1


def _wait(core: FieldCore, backlog: CodeBacklog, deadline: float | None) -> bool:
    while len(backlog):
        with backlog.lock:
            idle = backlog.thread is None
        # the thread stopped (an error, or a fork): code on this one
        if idle and not step(core) and backlog.error is not None:
            raise type(backlog.error)(
                f"{backlog.error} ({len(backlog)} memories still wait for sparse "
                "codes; they are coded again at the next open)"
            )
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        with backlog.done:
            if len(backlog):
                backlog.done.wait(0.05 if left is None else min(left, 0.05))
    return True


def finish(core: FieldCore) -> None:
    """At close: the running step commits; what is left waits for the next open."""
    backlog: CodeBacklog | None = getattr(core, "code_backlog", None)
    if backlog is None:
        return
    with backlog.lock:
        backlog.ids.clear()
        thread = backlog.thread
    backlog.step_lock.acquire()
    backlog.step_lock.release()
    if thread is not None and thread is not threading.current_thread():
        thread.join()
