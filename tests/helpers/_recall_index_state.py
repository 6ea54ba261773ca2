"""Everything a RecallIndexOrgan answers through its queries, as plain data:
two organs fed the same ops (by different paths) must give equal states."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chitta.organs.recall_index import RecallIndexOrgan

QUERIES = ("alpha beta gamma", "delta", "gamma delta x", "caf\u00e9 \u65e5\u672c")


def organ_state(
    o: RecallIndexOrgan, ids: list[int], labels: dict[str, set[Any]], speakers: tuple[str, ...] = ()
) -> dict[str, Any]:
    def arr(a: Any) -> Any:
        return None if a is None else a.tolist()

    everyone = o.allowed(since_ms=-(2**63))
    out: dict[str, Any] = {
        "len": len(o),
        "all": arr(everyone),
        "not_staged": arr(o.allowed(include_staged=False)),
        "time": [
            arr(o.allowed(since_ms=lo, until_ms=hi))
            for lo, hi in ((None, 1005), (1003, 1200), (50, None))
        ],
        "staged": sorted(o.staged_ids()),
        "staged_order": list(o.staged_oldest_first()),
        "is_staged": [o.is_staged(mid) for mid in ids],
        "kw_context": dict(o._kw_context),
        "stats": o.stats(),
        "vectors": {mid: (None if (v := o.vector(mid)) is None else v.tolist()) for mid in ids},
        "vector_count": o.vector_count,
        "recent": o.recent_vectors(25).tolist(),
        "speakers": {s: arr(o.speaker_ids(f"what did {s} say")) for s in speakers},
        "coded": sorted(o.coded_ids()),
        "code_versions": [o.code_version(mid) for mid in ids],
        "code_features": [o.code_features(mid) for mid in ids],
    }
    for field, values in labels.items():
        for v in sorted(values, key=str):
            if v is None:
                continue
            key = f"{field}={v}"
            if field == "kind":
                out[key] = arr(o.allowed(kinds=frozenset({v})))
                out[key + "+"] = arr(o.allowed(kinds=frozenset({v, "nope"}), include_staged=False))
            else:
                out[key] = arr(o.allowed(**{field: v}))
    out["mixed"] = arr(
        o.allowed(kinds=frozenset(labels.get("kind", set()) - {None}), realm="work", since_ms=1001)
    )
    for q in QUERIES:
        out["kw " + q] = o.keyword(q, 50, None).tolist()
        if everyone is not None and len(everyone):
            out["kw allowed " + q] = o.keyword(q, 50, everyone[::2].copy()).tolist()
    if o.dim is not None:
        rng = np.random.default_rng(0)
        for _ in range(3):
            v = rng.standard_normal(o.dim).astype(np.float32)
            v /= np.linalg.norm(v)
            ids_, cos = o.dense(v, 20, None)
            out.setdefault("dense", []).append((ids_.tolist(), cos.tolist()))
            out.setdefault("cos", []).append(
                [None if math.isnan(c) else c for c in o.cosine_array(v, ids).tolist()]
            )
    return out
