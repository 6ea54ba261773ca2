"""A readers-writer lock for the daemon: many holders of ``shared`` at once, or one
of ``exclusive``. A waiting exclusive holder stops new shared ones (so maintenance
is not starved by a steady stream of calls). Both sides are reusable context
managers: ``with lock.shared:`` / ``with lock.exclusive:``."""

from __future__ import annotations

import threading
from types import TracebackType


class RWLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0
        self.shared = _Shared(self)
        self.exclusive = _Exclusive(self)


class _Shared:
    def __init__(self, lock: RWLock) -> None:
        self._l = lock

    def try_enter(self) -> bool:
        """Enter now if no exclusive holder holds or waits for the lock; False otherwise
        (then nothing is held). A True is left with ``__exit__``."""
        lk = self._l
        with lk._cond:
            if lk._writer or lk._waiting_writers:
                return False
            lk._readers += 1
            return True

    def __enter__(self) -> None:
        lk = self._l
        with lk._cond:
            while lk._writer or lk._waiting_writers:
                lk._cond.wait()
            lk._readers += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        lk = self._l
        with lk._cond:
            lk._readers -= 1
            if lk._readers == 0:
                lk._cond.notify_all()


class _Exclusive:
    def __init__(self, lock: RWLock) -> None:
        self._l = lock

    def __enter__(self) -> None:
        lk = self._l
        with lk._cond:
            lk._waiting_writers += 1
            try:
                while lk._writer or lk._readers:
                    lk._cond.wait()
            finally:
                lk._waiting_writers -= 1
            lk._writer = True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        lk = self._l
        with lk._cond:
            lk._writer = False
            lk._cond.notify_all()
