"""The field: one chitta memory store as one process sees it.

:mod:`~chitta.field.facade` holds :class:`Field` (the public methods) and
:func:`open`; the other modules of this package are its parts, one job each
(commit, replay, writes and puts, reads, recall, checkpoint, vocabulary,
maintenance, lifecycle, links, operation calls).
"""

from chitta.field.facade import DURABILITIES, Field, default_path, infer_harness, open

__all__ = ["DURABILITIES", "Field", "default_path", "infer_harness", "open"]

# The public names keep the module they always had (reprs, pickles, docs tools).
for _public in (Field, open, default_path, infer_harness):
    _public.__module__ = __name__
del _public
