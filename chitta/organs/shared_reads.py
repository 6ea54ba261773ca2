"""Which threads are inside a shared read of a field (chitta/field/field_lock.py).

A shared read runs beside other shared reads, so it must change nothing: an organ whose
read path would first do pending work (index texts, add codes, quantize rows) calls
:func:`refuse_work`, and the read is run again under the exclusive lock instead."""

from __future__ import annotations

import threading

_local = threading.local()


class SharedReadNeedsWrite(Exception):
    """A shared read reached work that changes the field; the caller reruns it exclusively."""


def active() -> bool:
    return getattr(_local, "depth", 0) > 0


def enter() -> None:
    _local.depth = getattr(_local, "depth", 0) + 1


def leave() -> None:
    _local.depth -= 1


def refuse_work(what: str) -> None:
    """Called before lazy work that changes an organ: refused inside a shared read."""
    if getattr(_local, "depth", 0) > 0:
        raise SharedReadNeedsWrite(what)
