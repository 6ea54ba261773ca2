"""Background threads give way to callers on a busy CPU.

The process's background work (documents embedded off the caller's thread, sparse codes,
learning steps, the daemon's maintenance) runs at a lower scheduling priority than the
threads that answer callers: on Linux a thread's nice value is its own, so each
background thread raises its own by ``NICE`` when it starts. It still gets every cycle
the callers leave idle; under load, a recall waiting for a core is served first. Raising
one's own nice value needs no privilege; elsewhere (no per-thread nice) nothing changes.
"""

from __future__ import annotations

import os
import sys
import threading

NICE = 10  # added to the thread's nice value (19 at most)


def lower_this_thread() -> bool:
    """Lower the calling thread's priority by NICE; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        now = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, now + NICE))
    except OSError:
        return False
    return True
