"""Near-duplicate merging as a maintenance pass: incremental, so it can run hourly at any
field size (``dedup_pass()`` compares all pairs: O(n^2 d)).

Each pass takes the memories written since the last one (the logged setting
``near_dedup_through_ms``), oldest first, at most ``BATCH`` of them; when that leaves room,
also those written in the ``SLACK_MS`` before it (a writer with a skewed clock, a memory
that arrived late from a bucket). For each it asks
the dense index for its ``NEIGHBOURS`` nearest memories and keeps the pairs that
``chitta.policies.dedup`` would merge: same realm and kind, F_merge < 0 (cosine above
1 - LAMBDA = 0.95) and equal significant tokens. Pairs merge greedily, lowest F_merge
first, by the same rule (keeper, ``merged_from``, union of tags) and in the same atomic
groups as ``dedup_pass()``. Then the pass logs how far it got. A field never passed
before is worked through ``BATCH`` memories per pass.

Everything is logged (the merges and the watermark), so replay never re-derives a merge.
The dense index may be approximate at large sizes: a pair it misses is found by
``dedup_pass()``.
"""

from __future__ import annotations

import numpy as np

from chitta import ops
from chitta.field.core import FieldCore
from chitta.policies import dedup

SETTING = "near_dedup_through_ms"
SLACK_MS = 86_400_000  # one day of memories is looked at again
BATCH = 2000  # memories examined per pass
NEIGHBOURS = 8  # nearest memories asked for each
EVERY_S = 3600.0


def near_dedup_pass(core: FieldCore, *, batch: int = BATCH) -> int:
    """One pass (see the module docstring); the number of memories merged away."""
    core.check_writable()
    value = core.settings.get(SETTING)
    through = value if isinstance(value, int) and not isinstance(value, bool) else None
    now = core.now_ms()
    clusters = dedup.Clusters()
    with core.lock:
        fresh = core.memories.written_after(through, batch)
        examine = list(fresh)
        if through is not None and len(fresh) < batch:  # caught up: look back SLACK_MS too
            late = core.memories.written_after(through - SLACK_MS, batch)
            examine += [w for w in late if w[0] <= through][: batch - len(fresh)]
        pairs: dict[tuple[int, int], float] = {}  # a pair may be found from both ends
        for _written, mid in examine:
            memory = core.memories.get(mid)
            vec = core.index.vector(mid)
            if memory is None or vec is None:
                continue
            norm = float(np.linalg.norm(vec))
            if norm == 0.0:
                continue
            ids, cos = core.index.dense((vec / norm).astype(np.float32), NEIGHBOURS + 1, None)
            for other_id, c in zip(ids.tolist(), cos.tolist()):
                if other_id == mid or c <= 1.0 - dedup.LAMBDA:
                    continue
                other = core.memories.get(other_id)
                if other is None or other.realm != memory.realm or other.kind != memory.kind:
                    continue
                f = dedup.f_merge(c, memory.text, other.text)
                key = (min(mid, other_id), max(mid, other_id))
                if f < 0 and f < pairs.get(key, 0.0):
                    pairs[key] = f
        merged = 0
        for _f, a, b in sorted((f, a, b) for (a, b), f in pairs.items()):
            x, y = core.memories.get(a), core.memories.get(b)
            if x is not None and y is not None:
                merged += clusters.join(x, y)
    for keeper, dropped in clusters.groups():
        core.commit_group(dedup.merge_ops(keeper, dropped, now))
    if fresh:
        last = fresh[-1][0]
        if last != through:
            core.commit_group([ops.ConfigureField(key=SETTING, value=int(last), at_ms=now)])
    return merged


__all__ = ["BATCH", "EVERY_S", "NEIGHBOURS", "SETTING", "SLACK_MS", "near_dedup_pass"]
