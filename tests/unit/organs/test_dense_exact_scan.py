"""The dense lane's exact scan (``DenseLane._exact_all``: an int8 first pass, then f32 dots for
the rows it cannot rule out; csrc/recall/dense_scan.h) against a numpy oracle over the live
vectors the test itself keeps: the same ids in the same order (cosine descending, then id
ascending) and the same cosines to float rounding, before and after the int8 form exists and
after deletes (free rows), re-puts into free rows, vector updates and a put of a duplicate
vector (a tie broken by the smaller id)."""

from __future__ import annotations

import numpy as np

from chitta import ops
from chitta.ops.put_columns import PutColumns
from chitta.organs import recall_index_dense
from chitta.organs.recall_index import RecallIndexOrgan

DIM = 64


def _put(mid: int, vec: np.ndarray) -> ops.PutPayload:
    return ops.PutPayload(
        id=mid, text=f"m{mid}", created_ms=mid, embedding=vec.astype("<f4").tobytes()
    )


def _oracle(live: dict[int, np.ndarray], q: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    ids = np.array(sorted(live), np.uint64)
    mat = np.stack([live[int(i)] for i in ids]).astype(np.float64)
    unit = mat / np.linalg.norm(mat, axis=1, keepdims=True)
    cos = unit @ q.astype(np.float64)
    order = np.lexsort((ids, -cos))[:k]
    return ids[order].tolist(), cos[order]


def _check(organ: RecallIndexOrgan, live: dict[int, np.ndarray], rng: np.random.Generator) -> None:
    for _ in range(12):
        q = rng.standard_normal(DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        for k in (1, 10, 37):
            got_ids, got_cos = organ.dense(q, k, None)
            want_ids, want_cos = _oracle(live, q, k)
            assert got_ids.tolist() == want_ids
            assert np.allclose(got_cos, want_cos, atol=2e-6)


def test_exact_scan_equals_the_oracle_through_deletes_reputs_and_updates() -> None:
    rng = np.random.default_rng(5)
    organ = RecallIndexOrgan()
    live: dict[int, np.ndarray] = {}
    n = 3 * recall_index_dense.QUANT_FROM
    run = []
    for mid in range(1, n + 1):
        live[mid] = rng.standard_normal(DIM).astype(np.float32)
        run.append(_put(mid, live[mid]))
    organ.apply_columns(PutColumns.from_puts(run))
    assert organ._quant is None  # made by the first scan
    _check(organ, live, rng)
    assert organ._quant is not None and organ._quant.size == n

    for mid in rng.choice(np.arange(1, n + 1), 200, replace=False).tolist():  # free rows
        organ.apply(ops.DeleteMemory(id=mid, at_ms=5))
        del live[mid]
    assert len(organ._free_rows) == 200
    _check(organ, live, rng)

    for mid in range(n + 1, n + 151):  # one by one: 150 of the free rows taken again
        live[mid] = rng.standard_normal(DIM).astype(np.float32)
        organ.apply(_put(mid, live[mid]))
    run = []
    for mid in range(n + 151, n + 300):  # as a run: the other 50, then new rows
        live[mid] = rng.standard_normal(DIM).astype(np.float32)
        run.append(_put(mid, live[mid]))
    organ.apply_columns(PutColumns.from_puts(run))
    for mid in list(live)[:40]:  # a new vector for a live memory, in its own row
        live[mid] = rng.standard_normal(DIM).astype(np.float32)
        organ.apply(
            ops.UpdateMemoryContent(id=mid, at_ms=8, embedding=live[mid].astype("<f4").tobytes())
        )
    _check(organ, live, rng)

    # a copy of a live vector under a larger id: the two tie, the smaller id first
    first = min(live)
    twin = max(live) + 1
    live[twin] = live[first].copy()
    organ.apply(_put(twin, live[twin]))
    q = live[first] / np.linalg.norm(live[first])
    ids, cos = organ.dense(q.astype(np.float32), 2, None)
    assert ids.tolist() == [first, twin]
    assert cos[0] == cos[1]
    _check(organ, live, rng)


def test_small_tables_scan_without_the_int8_form() -> None:
    rng = np.random.default_rng(9)
    organ = RecallIndexOrgan()
    live = {mid: rng.standard_normal(DIM).astype(np.float32) for mid in range(1, 100)}
    organ.apply_columns(PutColumns.from_puts([_put(m, v) for m, v in live.items()]))
    _check(organ, live, rng)
    assert organ._quant is None
