"""``remember_many``'s plain rows built as one batch: texts, or ``{"text", "embedding"}``.

The general path (:func:`chitta.field.puts.put_op`) checks and builds one memory at
a time. For the shape an ingest sends (every item a str, or a dict of ``text`` and
``embedding`` only) this builds the same ``PutPayload`` ops with the vectors checked
and converted as one matrix: one ``astype``, one finiteness test and one ``tobytes``
for the group instead of one each per memory. Every check is the general path's,
with its message (a bad vector is re-checked alone by ``checks.embedding`` to name
the fault); anything else (other keys, vectors that are not one numeric matrix) goes
the general way. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.field.core import FieldCore
from chitta.field.puts import DEFAULT_KIND, NO_TAGS, vector_dim
from chitta.ops import checks as v
from chitta.policies.kinds import infer_kind

_PLAIN_KEYS = (frozenset({"text"}), frozenset({"text", "embedding"}))
_PutPayload = ops.PutPayload


def plain_puts(core: FieldCore, items: Sequence[object]) -> list[ops.PutPayload] | None:
    """The puts (id 0) of ``items`` when every one is plain, else None (the general path)."""
    texts: list[object] = []
    vecs: list[object] = []
    for item in items:
        if type(item) is str:
            texts.append(item)
            vecs.append(None)
        elif isinstance(item, Mapping) and frozenset(item) in _PLAIN_KEYS:
            texts.append(item["text"])
            vecs.append(item.get("embedding"))
        else:
            return None
    checked = [v.text(t) for t in texts]
    blobs = _vectors(vecs, vector_dim(core))
    now = core.now_ms()
    out: list[ops.PutPayload] = []
    for text, blob in zip(checked, blobs):
        kind = infer_kind(text, None, NO_TAGS)
        out.append(
            _PutPayload(
                id=0,
                text=text,
                kind=DEFAULT_KIND if kind == DEFAULT_KIND else kind,
                created_ms=now,
                written_ms=now,
                tags=NO_TAGS,
                confidence=1.0,
                embedding=blob,
            )
        )
    return out


def _vectors(vecs: list[object], dim: int | None) -> list[bytes | None]:
    """Each vector as ``checks.embedding`` gives it (little-endian float32 bytes, or None)."""
    given = [i for i, x in enumerate(vecs) if x is not None]
    if not given:
        return [None] * len(vecs)
    first = vecs[given[0]]
    shape = getattr(first, "shape", None)
    dtype = getattr(first, "dtype", None)
    same = (
        isinstance(first, np.ndarray)
        and dtype is not None
        and dtype.kind in "fiu"
        and shape is not None
        and len(shape) == 1
        and all(
            isinstance(x, np.ndarray) and x.shape == shape and x.dtype == dtype
            for x in (vecs[i] for i in given)
        )
    )
    if not same:  # lists, mixed types or shapes: one at a time, as the general path does
        return [v.embedding(x, dim) for x in vecs]
    v.embedding(first, dim)  # shape and dimension rules, with their messages
    arrays: list[np.ndarray] = [vecs[i] for i in given]  # type: ignore[misc]
    mat = np.stack(arrays).astype("<f4")
    finite = np.isfinite(mat).all(axis=1)
    if not finite.all():
        v.embedding(vecs[given[int(np.argmin(finite))]], dim)  # raises, naming the fault
        raise InvalidArgument("embedding contains NaN or infinity")  # pragma: no cover
    width = mat.shape[1] * 4
    blob = mat.tobytes()
    out: list[bytes | None] = [None] * len(vecs)
    for j, i in enumerate(given):
        out[i] = blob[j * width : (j + 1) * width]
    return out


def as_list(items: Any) -> list[object]:
    """``items`` as a list (an iterable is read once)."""
    return items if isinstance(items, list) else list(items)
