"""The sparse-code golden: two memories, one coded by op 12 (float32
activations, as every writer before op 68 wrote) and one by op 68 (packed, as
writers write now), plus a Batch holding one of each.

``write_codes_golden(root)`` produced ``golden/v2.0-sparse-codes``; run
``python tools/regen_golden.py --codes`` only together with a change of either op.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from chitta import _core, ops
from chitta.ops.code_pack import code_ops_of

INSTANCE = 2
T0 = 1_764_000_000_000
ACTIVE = 64


def _code(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    feats = np.sort(rng.choice(16384, ACTIVE, replace=False))[None, :]
    acts = rng.random((1, ACTIVE)).astype(np.float32)
    return feats, acts


def code_ids() -> list[int]:
    return [(INSTANCE << 32) | i for i in range(1, 5)]


def plain_code(mid: int, seed: int) -> ops.UpdateSparseCode:
    feats, acts = _code(seed)
    return ops.UpdateSparseCode(
        id=mid, features=tuple(feats[0].tolist()), activations=acts.tobytes(), encoder_version=0
    )


def packed_code(mid: int, seed: int) -> ops.UpdateSparseCodeU8:
    (op,) = code_ops_of([mid], *_code(seed), 0)
    assert isinstance(op, ops.UpdateSparseCodeU8)
    return op


def codes_golden_ops() -> list[ops.Op]:
    a, b, c, d = code_ids()
    return [
        *(
            ops.PutPayload(id=m, text=f"coded memory {i}", created_ms=T0 + i)
            for i, m in enumerate((a, b, c, d))
        ),
        plain_code(a, 1),
        packed_code(b, 2),
        ops.Batch.of(plain_code(c, 3), packed_code(d, 4)),
    ]


def write_codes_golden(root: Path) -> None:
    log = _core.SegmentLog(str(root), instance_id=INSTANCE, durability="flush")
    try:
        for op in codes_golden_ops():
            log.append(int(op.op_type), ops.encode(op))
    finally:
        log.close()
