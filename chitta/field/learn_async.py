"""The sparse encoder's learning step off the writer's thread, for long-lived servers.

A step (``SparseEncoder.learn`` over the last 1,024 vectors) costs about a second on a
shared 2-core machine; inline it stalls the write that made it due and, in ``chitta
serve``, every client queued behind the daemon's writer. With ``core.learn_async`` set
(the daemon sets it) the step is computed on one background thread per handle from a
copy of the vectors taken under the core's lock, then committed under that lock only if
the encoder did not move meanwhile (another step, or one replayed from another writer);
a step that lost that race is dropped, and the next due step learns from newer atoms.
The step is an op in the log like any other, so replay never re-learns. The library
default stays inline: a given sequence of writes then yields the same log every run.

Background steps take at most ``CPU_SHARE`` of one core: after a step that used ``c``
seconds of CPU the next starts no sooner than ``c * (1 / CPU_SHARE - 1)`` seconds after
it ended. A step due before then waits (the writes that made it due keep counting, so it
starts with the first write after the pause): under a steady load of writes the daemon
learns every few thousand writes instead of every 1,024, and spends its cores on calls.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np

from chitta.errors import ChittaError
from chitta.field.background_priority import lower_this_thread
from chitta.field.core import FieldCore
from chitta.recall.blas import one_thread

CPU_SHARE = 0.1  # of one core, at most, for background learning steps
_clock = time.monotonic


def start(core: FieldCore, max_vectors: int = 1024) -> bool:
    """Begin a background step unless one is running or the CPU share says wait;
    False when none was begun."""
    with core.lock:
        running = core.learner
        if running is not None and running.is_alive():
            return False
        if _clock() < core.learn_resume_at:
            return False
        thread = threading.Thread(
            target=_step, args=(core, max_vectors), name="chitta-learn", daemon=True
        )
        core.learner = thread
        thread.start()
        return True


def wait(core: FieldCore) -> None:
    """Until the running step (if any) has committed or been dropped."""
    thread = core.learner
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def _step(core: FieldCore, max_vectors: int) -> None:
    lower_this_thread()
    try:
        with core.lock:
            encoder = core.encoder_organ.encoder
            if core.closed or encoder is None:
                return
            version = encoder.version
            vectors = np.array(core.index.recent_vectors(max_vectors), dtype=np.float32)
            now = core.now_ms()
        if len(vectors) == 0:
            return
        cpu0 = time.thread_time()
        with one_thread():
            step = encoder.learn(vectors, at_ms=now)
        used = time.thread_time() - cpu0
        with core.lock:
            core.learn_resume_at = _clock() + used * (1.0 / CPU_SHARE - 1.0)
            current = core.encoder_organ.encoder
            if core.closed or current is not encoder or current.version != version:
                return  # the encoder moved while this step was computed: dropped
            core.commit(step)
    except ChittaError as exc:  # reported; the next due step tries again
        print(f"chitta: background encoder learning failed: {exc}", file=sys.stderr)


__all__ = ["start", "wait"]
