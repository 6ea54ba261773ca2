"""remember_many's batch path (chitta/field/ingest.py) and deferred sparse codes
(chitta/field/deferred_codes.py), against the one-by-one path as the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import chitta
from chitta import _core, ops
from chitta.encode import field_encoding
from chitta.encode.sparse import SparseEncoder
from chitta.errors import InvalidArgument
from chitta.field import deferred_codes
from chitta.ops import UpdateSparseCodeU8
from chitta.ops.code_pack import code_ops_of, logged_columns

N = 600  # above CODE_INLINE_MAX (deferred codes), below the first learning step (1,024)
DIM = 384


class Clock:
    """A fixed clock: both paths stamp the same times."""

    def __call__(self) -> float:
        return 1_700_000_000.0


def _data(n: int = N, seed: int = 3) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    words = ["garden", "harbour", "deploy", "auth", "kettle", "violin", "ledger", "comet"]
    texts = [f"note {i} about the {words[i % 8]} and the {words[(i * 5) % 8]}" for i in range(n)]
    texts[7] = "we decided to ship the ledger on fridays"  # a kind is inferred from the text
    return texts, vecs


def _open(path, **kw):
    return chitta.open(path, embedder=None, instance_id=7, clock=Clock(), **kw)


def _state(f) -> dict:
    """Everything a memory holds, its code, and recall answers (the compared state)."""
    core = f.core
    out = {}
    for mid in sorted(core.memories.live_ids()):
        m = f.get(mid)
        out[mid] = (
            m.text,
            m.kind,
            m.created_ms,
            m.tags,
            None if m.embedding is None else bytes(np.asarray(m.embedding, "<f4").tobytes()),
            core.index.code_features(mid),
            core.index.code_version(mid),
        )
    return out


def _recalls(f, vecs: np.ndarray) -> list:
    answers = []
    for q in range(0, len(vecs), 97):
        hits = f.recall(vector=vecs[q], k=10, touch=False)
        answers.append([(h.id, round(h.score, 6)) for h in hits])
    for text in ("garden harbour", "ledger fridays", "comet violin"):
        answers.append([h.id for h in f.recall(text, k=10, touch=False)])
    return answers


def test_batched_equals_one_by_one(tmp_path):
    texts, vecs = _data()
    with _open(tmp_path / "one") as one:
        for t, v in zip(texts, vecs):
            one.remember(t, embedding=v)
        want, want_recall = _state(one), _recalls(one, vecs)
    with _open(tmp_path / "many") as many:
        items = [{"text": t, "embedding": v} for t, v in zip(texts, vecs)]
        ids = many.remember_many(items[:300]) + many.remember_many(items[300:])
        assert many.wait_embedded(timeout=120)
        got, got_recall = _state(many), _recalls(many, vecs)
    assert ids == sorted(want)
    assert got == want
    assert got_recall == want_recall
    assert all(row[5] for row in got.values())  # every memory got its code


def test_codes_logged_not_rederived_on_replay(tmp_path, monkeypatch):
    texts, vecs = _data()
    with _open(tmp_path / "f") as f:
        f.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, vecs)])
        assert f.wait_embedded(timeout=120)
        live = _state(f)

    def refuse(*a, **k):
        raise AssertionError("a code was derived again on replay")

    monkeypatch.setattr(deferred_codes, "code_columns", refuse)
    replays = []
    for _ in range(2):
        with _open(tmp_path / "f", load_checkpoint=False) as g:
            assert deferred_codes.pending(g.core) == 0
            replays.append(_state(g))
    assert replays[0] == replays[1] == live


def test_reopen_codes_what_was_left(tmp_path, monkeypatch):
    """A handle closed (or killed) before its coder ran: the next open codes the rest."""
    texts, vecs = _data()
    monkeypatch.setattr(deferred_codes, "queue", lambda core, ids: None)  # this handle never codes
    with _open(tmp_path / "f") as f:
        ids = f.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, vecs)])
        assert not any(f.core.index.code_features(i) for i in ids)
        assert len(f.recall(vector=vecs[3], k=5, touch=False))  # dense lane meanwhile
    monkeypatch.undo()
    with _open(tmp_path / "f") as g:
        assert g.wait_embedded(timeout=120)
        assert all(g.core.index.code_features(i) for i in ids)
    with _open(tmp_path / "one") as one:
        for t, v in zip(texts, vecs):
            one.remember(t, embedding=v)
        want = _state(one)
    with _open(tmp_path / "f") as h:
        assert _state(h) == want


@pytest.mark.parametrize(
    "bad",
    [
        lambda v: v[:100],  # wrong length
        lambda v: np.where(np.arange(DIM) == 5, np.nan, v).astype(np.float32),
        lambda v: np.where(np.arange(DIM) == 9, np.inf, v).astype(np.float32),
        lambda v: [*v.tolist()[:-1], float("nan")],  # mixed: a list among arrays, with a NaN
        lambda v: v.reshape(2, -1),  # 2-D
        lambda v: np.array(["x"] * DIM),  # not numeric
        lambda v: "0.1 0.2",  # a str
    ],
)
def test_bad_vector_refused_nothing_written(tmp_path, bad):
    texts, vecs = _data(400)
    with _open(tmp_path / "f") as f:
        f.remember_many([{"text": t, "embedding": v} for t, v in zip(texts[:300], vecs[:300])])
        before, records = len(f), f.stats().records_applied
        items = [{"text": t, "embedding": v} for t, v in zip(texts[300:], vecs[300:])]
        items[57]["embedding"] = bad(vecs[357])
        with pytest.raises(InvalidArgument):
            f.remember_many(items)
        assert len(f) == before
        assert f.stats().records_applied == records
        items[57] = {"text": "   ", "embedding": vecs[357]}  # a blank text
        with pytest.raises(InvalidArgument):
            f.remember_many(items)
        assert len(f) == before
    with _open(tmp_path / "f") as g:
        assert len(g) == before


def test_mixed_lists_and_arrays_equal_arrays(tmp_path):
    texts, vecs = _data(300)
    with _open(tmp_path / "a") as a:
        a.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, vecs)])
        assert a.wait_embedded(timeout=120)
        want = _state(a)
    mixed = [v.tolist() if i % 3 else v.astype(np.float64) for i, v in enumerate(vecs)]
    with _open(tmp_path / "b") as b:
        b.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, mixed)])
        assert b.wait_embedded(timeout=120)
        assert _state(b) == want


def test_first_batch_dimension_is_checked_per_field(tmp_path):
    texts, vecs = _data(300)
    with _open(tmp_path / "f") as f:
        f.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, vecs)])
        other = np.ones((300, 128), np.float32)
        with pytest.raises(InvalidArgument, match="dimension"):
            f.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, other)])
        assert len(f) == 300


def test_setup_op_is_the_default_encoders():
    """The setup op built without atoms names the shape SparseEncoder's defaults give."""
    enc = field_encoding.FieldEncoding(None, recorded=None, reembed=False)
    (_cfg, init) = enc.setup_ops(None, None, DIM, 5, from_embedder=False)
    assert init == SparseEncoder(DIM).init_op(at_ms=5)


def test_code_ops_match_encoder_encode():
    enc = SparseEncoder(DIM, seed=4)
    vecs = np.random.default_rng(9).standard_normal((50, DIM)).astype(np.float32)
    vecs[3] = 0  # a zero vector has no code
    ids = list(range(1, 51))
    got = field_encoding.code_ops(enc, ids, vecs)
    keep = [i for i in range(50) if i != 3]
    codes = enc.encode(vecs[keep])
    # the winners encode() finds, packed as the field logs them (op 68, D-074)
    assert got == code_ops_of([ids[i] for i in keep], codes.features, codes.activations, 0)
    for j, op in enumerate(got):
        assert op.features == codes.op(j, op.id).features
        exact = codes.activations[j]
        assert np.abs(np.frombuffer(op.activations, "<f4") - exact).max() <= exact.max() / 500


def test_code_columns_are_the_code_ops():
    """The background coder's arrays stand for exactly the ops it logs (the oracle: encode)."""
    enc = SparseEncoder(DIM, seed=4)
    vecs = np.random.default_rng(9).standard_normal((300, DIM)).astype(np.float32)
    vecs[[0, 150]] = 0  # no code for a zero vector
    ids = list(range(10, 310))
    cols = field_encoding.code_columns(enc, ids, vecs)
    keep = [i for i in range(300) if i not in (0, 150)]
    codes = enc.encode(vecs[keep])
    assert cols.ids.tolist() == [ids[i] for i in keep]
    assert cols.ops() == [codes.op(j, ids[i]) for j, i in enumerate(keep)]
    # what the coder logs (packed, op 68) and the values it hands on: each row is exactly
    # what its logged op applies (the op's own dequantising `activations`, the oracle)
    logged, applied = logged_columns(cols)
    assert logged == code_ops_of([ids[i] for i in keep], codes.features, codes.activations, 0)
    assert any(isinstance(op, UpdateSparseCodeU8) for op in logged)
    for row, op in enumerate(logged):
        assert applied.ids[row] == op.id and tuple(applied.features[row]) == op.features
        assert applied.activations[row].tobytes() == op.activations
    empty = field_encoding.code_columns(enc, [1, 2], np.zeros((2, DIM), np.float32))
    assert len(empty) == 0 and empty.features.shape == (0, enc.active)


def test_deferred_codes_reach_the_code_store_as_arrays(tmp_path):
    """The coder's steps leave column chunks in the pending code store, no per-op tuples,
    and the codes equal the inline one-by-one ones (test_batched_equals_one_by_one)."""
    texts, vecs = _data()
    with _open(tmp_path / "f") as f:
        ids = f.remember_many([{"text": t, "embedding": v} for t, v in zip(texts, vecs)])
        assert f.wait_embedded(timeout=120)
        pending = f.core.index._code_pending
        assert not pending._one
        assert sum(len(c[0]) for c in pending._chunks) == N
        enc = SparseEncoder(DIM)
        want = enc.encode(vecs)
        for row in (0, 77, N - 1):
            got = f.core.index.code_features(ids[row])
            assert got == tuple(int(x) for x in want.features[row])


@pytest.mark.parametrize(("seed", "n", "dim"), [(0, 16384, 384), (5, 300, 70), (2**63, 64, 1)])
def test_initial_atoms_equal_the_unpacked_formula(seed, n, dim):
    """The table-driven version-0 atoms equal the documented bit-unpacking formula."""
    import math

    from chitta.encode.sparse_codes import _MASK64, _splitmix64, initial_atoms

    words = -(-dim // 64)
    with np.errstate(over="ignore"):
        base = _splitmix64(np.array([(seed + 0x9E3779B97F4A7C15) & _MASK64], np.uint64))[0]
        counter = np.arange(1, n * words + 1, dtype=np.uint64)
        z = _splitmix64((counter + base) * np.uint64(0x9E3779B97F4A7C15))
    bits = np.unpackbits(z.view(np.uint8).reshape(n, words * 8), axis=1, bitorder="little")
    scale = np.float32(1.0 / math.sqrt(dim))
    want = np.where(bits[:, :dim] != 0, scale, -scale).astype(np.float32)
    got = initial_atoms(seed, n, dim)
    assert got.flags.c_contiguous and got.dtype == np.float32
    assert np.array_equal(got, want)


def _logged_op_types(root) -> set[type]:
    """The types of every op in the log, Batches unpacked."""
    log = _core.SegmentLog(str(root), read_only=True)
    try:
        result = log.read_new()
    finally:
        log.close()
    found: set[type] = set()
    for i in range(len(result)):
        op = ops.decode(int(result.op_types[i]), result.payload(i))
        found.update(type(x) for x in (op.unpack() if isinstance(op, ops.Batch) else [op]))
    return found


def test_a_live_run_of_packed_codes_applies_what_replay_applies(tmp_path):
    """A Batch with a long run of op-68 codes is applied live as columns (packed_columns);
    replay decodes the same records natively: both leave the same features and weights."""
    rng = np.random.default_rng(11)
    vecs = rng.standard_normal((200, DIM)).astype(np.float32)
    with chitta.open(tmp_path / "f", embedder=None) as f:
        ids = f.remember_many([{"text": f"note {i}", "embedding": v} for i, v in enumerate(vecs)])
        f.core.index._flush_codes()  # the pending codes into the posting index
        live = {mid: f.core.index._posting.get(mid) for mid in ids[::17]}
    assert _logged_op_types(tmp_path / "f") >= {UpdateSparseCodeU8}
    with chitta.open(tmp_path / "f", embedder=None, read_only=True, load_checkpoint=False) as g:
        g.core.index._flush_codes()
        for mid, (feats, weights) in live.items():
            got_feats, got_weights = g.core.index._posting.get(mid)
            assert np.array_equal(feats, got_feats) and np.array_equal(weights, got_weights)
