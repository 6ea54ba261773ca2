"""The field: one chitta memory store as one process sees it.

:mod:`~chitta.field.facade` holds :class:`Field` (the public methods) and
:func:`open`; the other modules of this package are its parts, one job each
(commit, replay, writes and puts, reads, recall, checkpoint, vocabulary,
maintenance, lifecycle, links, operation calls). The facade is imported on first
use, so an organ can import a part (say ``chitta.field.checkpoint.format``)
without pulling in the whole field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chitta.field.facade import DURABILITIES, Field, default_path, infer_harness, open

__all__ = ["DURABILITIES", "Field", "default_path", "infer_harness", "open"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'chitta.field' has no attribute {name!r}")
    from chitta.field import facade

    value = getattr(facade, name)
    globals()[name] = value
    return value
