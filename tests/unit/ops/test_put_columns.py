"""PutColumns.from_puts keeps every put: rebuilding each row gives the same op."""

import numpy as np

from chitta.ops import PutPayload
from chitta.ops.put_columns import LABELS, PutColumns


def _vec(*xs: float) -> bytes:
    return np.array(xs, "<f4").tobytes()


PUTS = [
    PutPayload(id=(7 << 32) | 1, text="plain", created_ms=5, written_ms=6),
    PutPayload(
        id=(7 << 32) | 2, text="ünïcödé ✓", kind="decision", realm="r", session="s", created_ms=9
    ),
    PutPayload(
        id=(7 << 32) | 3,
        text="",
        source_tool="codex",
        harness="codex",
        confidence=0.25,
        strength=2.0,
        embedding=_vec(1, 2, 3),
    ),
    PutPayload(id=(7 << 32) | 4, text="tags", tags=("a", "b"), embedding=_vec(4, 5, 6)),
    PutPayload(id=(7 << 32) | 5, text="meta", meta={"speaker": "Ana"}, realm="r"),
    PutPayload(id=(7 << 32) | 6, text="odd vector", embedding=_vec(1, 2)),
    PutPayload(id=(7 << 32) | 7, text="artifact", artifacts=("/x/y",), embedding=_vec(0, 0, 1)),
]


def test_rows_rebuild_the_ops():
    cols = PutColumns.from_puts(PUTS)
    assert len(cols) == len(PUTS)
    assert cols.ops() == PUTS
    assert cols.texts() == [p.text for p in PUTS]
    for name in LABELS:
        assert [cols.labels[name][i] for i in range(len(PUTS))] == [getattr(p, name) for p in PUTS]
    # Vectors of the common width (3 floats) are a matrix; the 2-float one stays an extra.
    assert cols.vector_rows.tolist() == [2, 3, 6]
    assert cols.vectors.shape == (3, 3)
    assert sorted(cols.extras) == [3, 4, 5, 6]


def test_empty_run_and_equality():
    empty = PutColumns.from_puts([])
    assert len(empty) == 0 and empty.ops() == [] and empty.texts() == []
    a, b = PutColumns.from_puts(PUTS), PutColumns.from_puts(list(PUTS))
    assert a.same_as(b)
    changed = list(PUTS)
    changed[1] = PutPayload(
        id=(7 << 32) | 2, text="ünïcödé ✓", kind="decision", realm="r", session="t", created_ms=9
    )
    assert not a.same_as(PutColumns.from_puts(changed))
    assert not a.same_as(empty)
