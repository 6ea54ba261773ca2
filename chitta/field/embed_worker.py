"""The process's background embedder: one thread for every handle of the process.

Handles that defer their vectors (:mod:`chitta.field.deferred`) register here;
``wake()`` (called by each deferred write) lets the thread take every handle's
backlog in batches, one model call per batch, round robin over the handles. The
daemon's handles are handles of its process, so they share it too. The thread
also loads each registered handle's model as soon as it registers, so the first
``remember()`` after ``chitta.open`` does not wait for it. It holds handles weakly:
a handle dropped without ``close()`` leaves its backlog to the next open.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from chitta.errors import ChittaError
from chitta.field.background_priority import lower_this_thread
from chitta.field.core import FieldCore

_lock = threading.Lock()
_cores: list[weakref.ref[FieldCore]] = []
_to_load: list[Any] = []  # embedders to load before the first batch
_wake = threading.Event()
_thread: threading.Thread | None = None


def register(core: FieldCore) -> None:
    """Serve ``core``'s backlog from now on (and load its model in the background)."""
    global _thread
    with _lock:
        _cores.append(weakref.ref(core))
        load = getattr(core.encoding.embedder, "load", None)
        if callable(load) and not getattr(core.encoding.embedder, "loaded", False):
            _to_load.append(core.encoding.embedder)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="chitta-embedder", daemon=True)
            _thread.start()
    _wake.set()


def unregister(core: FieldCore) -> None:
    with _lock:
        _cores[:] = [r for r in _cores if r() is not None and r() is not core]


def wake() -> None:
    """Something was queued: the thread takes it (cheap when it is already awake)."""
    if not _wake.is_set():
        _wake.set()


def running() -> bool:
    """Whether the thread is alive (a forked child has none until a handle registers)."""
    return _thread is not None and _thread.is_alive()


def served() -> int:
    """Handles the thread serves now (tests: one thread, every handle of the process)."""
    with _lock:
        return sum(1 for r in _cores if r() is not None)


def _run() -> None:
    from chitta.field import deferred

    lower_this_thread()  # documents wait for their vectors; recall's queries should not

    while True:
        _wake.wait()
        _wake.clear()
        with _lock:
            loads, _to_load[:] = list(_to_load), []
        for embedder in loads:
            try:
                embedder.load()
            except ChittaError:
                pass  # the first batch raises it again, and wait_embedded reports it
        busy = True
        while busy:
            busy = False
            with _lock:
                cores = [c for r in _cores if (c := r()) is not None]
            for core in cores:
                backlog = core.backlog
                if core.closed or backlog is None or backlog.error is not None and not backlog.ids:
                    continue
                try:
                    taken = deferred.step(core)
                except Exception as exc:  # noqa: BLE001  a bug must not kill the thread
                    backlog.error = ChittaError(f"background embedding failed: {exc!r}")
                    taken = 0
                if taken and backlog.error is None:
                    busy = True
            del cores
