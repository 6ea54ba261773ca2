"""The graph organ's operations (every door: ``Field.call``, the daemon, MCP,
``chitta call``): ``settle`` (pattern completion over directed couplings,
chitta.recall.settle) and ``attractor_settle`` (a sparse code settling toward
stored memories, chitta.recall.attractor). Both only read.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.errors import InvalidArgument, NotFound
from chitta.ops import checks
from chitta.organs.contract import Operation

if TYPE_CHECKING:
    from chitta.organs.graph import GraphOrgan

__all__ = ["OPERATIONS"]

MAX_SEEDS = 64
MAX_CODE = 4096


def _int(value: object, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidArgument(f"{what} must be an int in [{lo}, {hi}], got {value!r:.40}")
    return value


def _num(value: object, what: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument(f"{what} must be a number in [{lo}, {hi}], got {value!r:.40}")
    x = float(value)
    if not (math.isfinite(x) and lo <= x <= hi):
        raise InvalidArgument(f"{what} must be a number in [{lo}, {hi}], got {value!r:.40}")
    return x


def _couplings(organ: GraphOrgan, is_live: Any) -> Any:
    from chitta.organs.graph import SUPPRESSING_EDGES

    def out(mid: int) -> list[tuple[int, float]]:
        return [
            (other, w)
            for other, kind, outgoing, w in organ.neighbours(mid)
            if outgoing and kind not in SUPPRESSING_EDGES and is_live(other)
        ]

    return out


def _settle(
    organ: GraphOrgan,
    ctx: Any,
    *,
    seeds: list[Any],
    steps: int = 5,
    gain: float | None = None,
    threshold: float | None = None,
    min_activation: float | None = None,
) -> dict[str, Any]:
    from chitta.recall import settle as s

    if not isinstance(seeds, (list, tuple)) or not 1 <= len(seeds) <= MAX_SEEDS:
        raise InvalidArgument(f"seeds must be a list of 1-{MAX_SEEDS} memory ids")
    ids = [checks.memory_id(x) for x in seeds]
    core = ctx.core
    for mid in ids:
        if not core.memories.is_live(mid):
            raise NotFound(f"memory {mid} is not in the field (forgotten?); seed live memories")
    n = _int(steps, "steps", 1, s.MAX_STEPS)
    g = s.GAIN if gain is None else _num(gain, "gain", 0.0, 1e6)
    t = s.THRESHOLD if threshold is None else _num(threshold, "threshold", -1e6, 1e6)
    lo = (
        s.MIN_ACTIVATION if min_activation is None else _num(min_activation, "min_activation", 0, 1)
    )
    act, ran = s.settle(_couplings(organ, core.memories.is_live), ids, n, gain=g, threshold=t)
    return {
        "pattern": [{"id": mid, "activation": a} for mid, a in s.pattern(act, ids, lo)],
        "discovered": len(act) - len(set(ids)),
        "steps": ran,
    }


def _attractor(
    organ: GraphOrgan,
    ctx: Any,
    *,
    code: list[Any] | None = None,
    query: str | None = None,
    steps: int = 3,
    k: int = 10,
    blend: float | None = None,
) -> dict[str, Any]:
    from chitta.recall import attractor as a

    core = ctx.core
    if (code is None) == (query is None):
        raise InvalidArgument("give exactly one of code (sparse feature ids) or query (text)")
    encoder = core.encoder_organ.encoder
    if code is not None:
        if not isinstance(code, (list, tuple)) or not 1 <= len(code) <= MAX_CODE:
            raise InvalidArgument(f"code must be a list of 1-{MAX_CODE} feature ids")
        top = encoder.n_features if encoder is not None else 2**32
        feats = sorted({_int(f, "a feature id", 0, top - 1) for f in code})  # a set of features
    else:
        text = checks.text(query, "query")
        if encoder is None or not core.encoding.enabled:
            raise InvalidArgument(
                "this field has no embedder or sparse encoder; pass code= (feature ids) instead"
            )
        vec = core.encoding.embed_query([text])[0]
        feats = encoder.encode(np.asarray(vec, np.float32)[None, :]).features[0].tolist()
    n = _int(steps, "steps", a.MIN_STEPS, a.MAX_STEPS)
    want = _int(k, "k", 1, 1000)
    b = a.BLEND if blend is None else _num(blend, "blend", 0.0, 1.0)
    index = core.index
    ids, cue, ran = a.attractor_settle(
        feats,
        nearest=lambda c, m: index.posting(c, m, None),
        code_of=index.code_features,
        successors=_couplings(organ, core.memories.is_live),
        steps=n,
        k=want,
        blend=b,
    )
    return {"ids": [int(x) for x in ids.tolist()], "code": cue.tolist(), "steps": ran}


_ID_LIST = {
    "type": "array",
    "items": {"type": ["integer", "string"]},
    "minItems": 1,
    "maxItems": MAX_SEEDS,
    "description": "memory ids (ints or decimal strings)",
}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "settle",
        _settle,
        {
            "type": "object",
            "properties": {
                "seeds": _ID_LIST,
                "steps": {"type": "integer", "minimum": 1, "maximum": 100},
                "gain": {"type": "number", "description": "sigmoid slope (default 10)"},
                "threshold": {"type": "number", "description": "half-on input (default 0.1)"},
                "min_activation": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "required": ["seeds"],
            "additionalProperties": False,
        },
        "Complete a pattern: spread activation from the seed memories (clamped) over the "
        "directed co-recall couplings with sigmoid gating; returns the memories that switch "
        "on, strongest first.",
        reads=True,
    ),
    Operation(
        "attractor_settle",
        _attractor,
        {
            "type": "object",
            "properties": {
                "code": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "description": "the query's sparse code (feature ids)",
                },
                "query": {"type": "string", "description": "text to embed and code instead"},
                "steps": {"type": "integer", "minimum": 3, "maximum": 5},
                "k": {"type": "integer", "minimum": 1, "maximum": 1000},
                "blend": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "additionalProperties": False,
        },
        "Settle a short or noisy query's sparse code toward stored memories: blend it with "
        "the nearest memories' codes and follow their directed couplings for 3-5 steps; "
        "returns the memories it settles on.",
        reads=True,
    ),
)
