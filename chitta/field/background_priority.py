"""Background threads give way to callers on a busy CPU.

The process's background work (documents embedded off the caller's thread, sparse codes,
learning steps, the daemon's maintenance) runs at a lower scheduling priority than the
threads that answer callers: on Linux a thread's nice value is its own, so each
background thread raises its own by ``NICE`` when it starts. It still gets every cycle
the callers leave idle; under load, a recall waiting for a core is served first. Raising
one's own nice value needs no privilege; elsewhere (no per-thread nice) nothing changes.

Threads that another thread wakes to hand them work (the daemon's writer and readers: the
I/O loop posts a call and goes on) take ``SCHED_BATCH`` instead (``yield_on_wakeup``): the
same priority and share of the CPU, but when woken they wait for the running thread's time
slice instead of preempting it. Preempting the loop that just woke them gained nothing (they
then wait for the GIL the loop holds) and cost two context switches (D-086).
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


def yield_on_wakeup() -> bool:
    """Make the calling thread SCHED_BATCH (see the module docstring); False where that is
    not possible (no per-thread scheduling policy: not Linux)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "SCHED_BATCH"):
        return False
    try:
        os.sched_setscheduler(threading.get_native_id(), os.SCHED_BATCH, os.sched_param(0))
    except OSError:
        return False
    return True
