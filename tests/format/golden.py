"""The golden segment: a fixed list of ops written by a named instance.

``write_golden(root)`` is what produced ``golden/v2.0`` (two segments: the
first rotated and sealed); the same ops, in one segment, are ``golden/v1.0``
(written by the 1.0 writer). Run ``python tools/regen_golden.py`` only together
with a format version bump.
"""

from __future__ import annotations

from pathlib import Path

from chitta import _core, ops

GOLDEN_INSTANCE = 1
T0 = 1_764_000_000_000  # fixed event time (ms)


def golden_ops() -> list[ops.Op]:
    a, b, c = (GOLDEN_INSTANCE << 32) | 1, (GOLDEN_INSTANCE << 32) | 2, (GOLDEN_INSTANCE << 32) | 3
    return [
        ops.PutPayload(
            id=a,
            text="the build uses ninja",
            kind="decision",
            created_ms=T0,
            realm="build",
            tags=("build",),
            source_tool="claude-code",
            harness="claude-code",
        ),
        ops.PutPayload(
            id=b,
            text="staging listens on port 8080",
            created_ms=T0 + 1,
            embedding=ops.f32_bytes([0.5, -0.5, 0.25, 1.0]),
            meta={"host": "staging", "port": 8080},
        ),
        ops.PutPayload(
            id=c, text="a passing thought", kind="thought", created_ms=T0 + 2, confidence=0.4
        ),
        ops.UpdateState(id=a, at_ms=T0 + 10, confidence=0.9, touch=True),
        ops.DeleteMemory(id=c, at_ms=T0 + 20),
        ops.Batch.of(
            ops.UpdateMemoryContent(id=b, at_ms=T0 + 30, text="staging listens on port 8081"),
            ops.UpdateState(id=b, at_ms=T0 + 30, strength=2.0),
        ),
        ops.AddAssocEdge(src=b, dst=a, edge="RelatedTo", at_ms=T0 + 40),
    ]


GOLDEN_SEGMENT_BYTES = 1024  # small: the tail ops rotate into a second segment


def golden_tail_ops() -> list[ops.Op]:
    """Written after ``golden_ops()`` in 2.0: enough bytes to rotate once."""
    base = GOLDEN_INSTANCE << 32
    return [
        ops.PutPayload(
            id=base | (4 + i),
            text=f"tail memory {i}: " + "padding words " * 12,
            created_ms=T0 + 50 + i,
        )
        for i in range(3)
    ]


def write_golden(root: Path) -> None:
    log = _core.SegmentLog(
        str(root),
        instance_id=GOLDEN_INSTANCE,
        durability="flush",
        segment_bytes=GOLDEN_SEGMENT_BYTES,
    )
    try:
        for op in golden_ops() + golden_tail_ops():
            log.append(int(op.op_type), ops.encode(op))
    finally:
        log.close()
