"""State version 3 -> 4 for the memories organ: its snapshot as columns.

Up to version 3 the organ's map held every put (``puts``: a MessagePack array
of PutPayloads, embeddings stripped) plus ``changed`` rows; version 4 holds
columns (docs/FORMAT.md section 8). The step rebuilds the organ from the old
map (puts applied as one run, then each change set on its row) and takes its
version-4 map; vectors stay where they were (the sidecar, ``odd_vectors``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from chitta import ops
from chitta.ops.put_columns import PutColumns
from chitta.organs.memories import MemoriesOrgan


def memories_v3_to_v4(old: dict[str, Any]) -> dict[str, Any]:
    puts = msgspec.msgpack.decode(old["puts"], type=list[ops.PutPayload])
    organ = MemoriesOrgan()
    organ.apply_columns(PutColumns.from_puts(puts))
    s = organ._s
    if s.n != len(puts):
        raise ValueError("snapshot repeats a memory id")
    c = s.c
    for pos, text, tags, meta, conf, strength, decay, tier, upd, last, count, deleted in old[
        "changed"
    ]:
        row = int(pos)
        if not 0 <= row < s.n:
            raise ValueError("a changed row is out of range")
        put = puts[row]
        if text != put.text:
            s.texts[row] = text
        if tags:
            s.tags[row] = tuple(tags)
        else:
            s.tags.pop(row, None)
        if meta != put.meta:
            s.put_meta[row] = put.meta
            if meta is None:
                s.meta.pop(row, None)
            else:
                s.meta[row] = meta
        c["confidence"][row], c["strength"][row], c["decay"][row], c["tier"][row] = (
            conf,
            strength,
            decay,
            tier,
        )
        c["updated"][row], c["last_access"][row], c["access"][row] = upd, last, count
        if deleted is not None:
            c["dead"][row], c["deleted"][row] = True, deleted
    new = s.state()
    new.update(
        odd_vectors=old["odd_vectors"],
        live=old["live"],
        max_local=old["max_local"],
        embedding_dim=old["embedding_dim"],
        touches=old["touches"],
        ignored=old["ignored"],
    )
    return new
