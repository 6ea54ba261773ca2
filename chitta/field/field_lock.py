"""The field's lock: exclusive for whatever changes the field, shared for reads that change
nothing, so recalls of several threads (the daemon's readers, an MCP host's) run together.

- ``with lock:`` is exclusive and reentrant, as the ``RLock`` it replaces: it waits until no
  other thread holds it either way, and while it waits no new shared read begins.
- ``with lock.reading(prepare) as shared:`` holds off writers (and other reads starting)
  while ``prepare`` looks at what the read needs; lazy work (texts to index, rows to
  quantize) is done once no other read runs; then the read becomes a shared one without
  letting a writer in between, so nothing ``prepare`` saw can change until it ends.
  ``shared`` says whether it runs shared. Inside a shared read, lazy work an organ would
  still do raises ``SharedReadNeedsWrite`` (chitta/organs/shared_reads.py) and the caller
  reruns the read exclusively.
- A thread holding the lock exclusively that starts a read keeps its exclusive hold; taking
  it exclusively inside a shared read is a bug (it would wait for itself) and raises.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType

from chitta.organs import shared_reads

READY, WORK, EXCLUSIVE = "ready", "work", "exclusive"  # what a read's prepare() returns


class FieldLock:
    def __init__(self) -> None:
        self._mu = (
            threading.RLock()
        )  # held by the exclusive holder (and briefly by a reader entering)
        self._count = threading.Lock()
        self._no_readers = threading.Condition(self._count)
        self._readers = 0
        self._local = threading.local()
        self._owner: int | None = None  # the exclusive holder's thread id (outermost hold)
        self._since = 0.0  # time.monotonic() when that hold began

    def _depths(self) -> tuple[int, int]:
        loc = self._local
        return getattr(loc, "ex", 0), getattr(loc, "sh", 0)

    def __enter__(self) -> None:
        ex, sh = self._depths()
        if sh:
            raise RuntimeError("the field's lock taken exclusively inside a shared read")
        self._mu.acquire()
        self._local.ex = ex + 1
        if ex == 0:
            self._owner = threading.get_ident()
            self._since = time.monotonic()
            self._wait_for_readers()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._local.ex -= 1
        if not self._local.ex:
            self._owner = None
        self._mu.release()

    def held_longer_than(self, seconds: float) -> bool:
        """Some thread has held the lock exclusively for more than ``seconds`` (a hint for
        a caller that would rather not wait behind a long hold: it may end at once)."""
        return self._owner is not None and time.monotonic() - self._since > seconds

    @contextmanager
    def reading(self, prepare: Callable[[bool], str]) -> Iterator[bool]:
        """A read: ``prepare(may_work)`` runs first with the writer's lock held (no writer,
        no other read starting) and returns READY (run shared), WORK (lazy work is due:
        called again with ``may_work`` True once no read runs, to do it) or EXCLUSIVE (run
        this read exclusively). Yields whether the read runs shared."""
        ex, sh = self._depths()
        if ex or sh:  # inside an exclusive hold (or another read): that hold covers this read
            if sh:
                shared_reads.enter()
                try:
                    yield True
                finally:
                    shared_reads.leave()
                return
            with self:
                prepare(True)
                yield False
            return
        self._mu.acquire()
        self._local.ex = 1
        self._owner = threading.get_ident()
        self._since = time.monotonic()
        exclusive = False
        try:
            verdict = prepare(False)
            if verdict == WORK:
                self._wait_for_readers()
                exclusive = True
                verdict = prepare(True)
        except BaseException:
            self._local.ex = 0
            self._owner = None
            self._mu.release()
            raise
        if verdict != READY:
            try:
                if not exclusive:
                    self._wait_for_readers()
                yield False
            finally:
                self._local.ex = 0
                self._owner = None
                self._mu.release()
            return
        with self._count:  # -> shared: counted before the writer's lock is let go
            self._readers += 1
        self._local.ex = 0
        self._local.sh = 1
        self._owner = None
        self._mu.release()
        shared_reads.enter()
        try:
            yield True
        finally:
            shared_reads.leave()
            self._local.sh = 0
            with self._count:
                self._readers -= 1
                if not self._readers:
                    self._no_readers.notify_all()

    def _wait_for_readers(self) -> None:
        with self._count:
            while self._readers:
                self._no_readers.wait()

    def held_shared(self) -> bool:
        """This thread is inside a shared read of this lock."""
        return self._depths()[1] > 0
