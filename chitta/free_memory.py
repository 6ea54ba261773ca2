"""Give freed memory back to the system after a bulk pass (D-089).

A replay, the background sparse coder, the keyword and posting flushes and a checkpoint
allocate large temporaries and free them again; glibc keeps most of those pages in its
heaps (its mmap threshold grows with the blocks freed, so later large blocks come from
the heap, not from fresh maps), and the process's RSS stays near the pass's peak:
207 MB of a 484 MB process after opening a 100K log, measured. ``give_back`` asks the
allocator to return its free pages (``malloc_trim``; 0.1-10 ms, by what it returns).
It changes no allocator setting of the host process; elsewhere than glibc it does nothing.
"""

from __future__ import annotations

from chitta import _core

BULK = 4096  # records or rows from which a pass gives its freed memory back


def give_back() -> bool:
    """Return the allocator's free pages to the system; True if some were."""
    return bool(_core._trim_heap())
