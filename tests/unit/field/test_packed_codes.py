"""A field writes its sparse codes packed (op 68) and applies, live and on replay,
exactly the dequantised values it logged, not the encoder's float32 (the oracle:
the ops parsed back out of the segment files by the test's own reader). Old logs
of op 12 codes replay as before."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "format"))
from segment_oracle import parse_records_v2

import chitta
from chitta import ops
from chitta.encode.sparse_encode import unit_inputs, winners

DIM = 32


def _logged_codes(root: Path) -> dict[int, ops.Op]:
    out: dict[int, ops.Op] = {}
    for seg in sorted((root / "segments").glob("*.seg")):
        records, _ = parse_records_v2(seg.read_bytes())
        for r in records:
            if r.op_type > 200:  # a seal
                continue
            op = ops.decode(r.op_type, r.payload)
            inner = op.unpack() if isinstance(op, ops.Batch) else [op]
            for o in inner:
                if isinstance(o, (ops.UpdateSparseCode, ops.UpdateSparseCodeU8)):
                    out[o.id] = o
    return out


def _applied(f: chitta.Field, ids: list[int]) -> dict[int, tuple[list[int], bytes]]:
    index = f.core.index
    index._flush_codes()
    out = {}
    for mid in ids:
        feats, acts = index._posting.get(mid)
        out[mid] = (feats.tolist(), np.asarray(acts, "<f4").tobytes())
    return out


def _vectors(n: int) -> np.ndarray:
    return np.random.default_rng(5).normal(size=(n, DIM)).astype(np.float32)


def test_live_and_replay_apply_the_logged_dequantised_values(tmp_path: Path) -> None:
    root = tmp_path / "f"
    vecs = _vectors(12)
    with chitta.open(root, embedder=None) as f:
        ids = [f.remember(f"memory {i}", embedding=v) for i, v in enumerate(vecs[:4])]
        ids += f.remember_many(
            [{"text": f"more {i}", "embedding": v} for i, v in enumerate(vecs[4:])]
        )
        live = _applied(f, ids)
        encoder = f.core.encoder_organ.encoder
        raw_feats, raw_acts = winners(
            unit_inputs(vecs, encoder.dim, allow_empty=True),
            encoder.atoms,
            encoder.thresholds,
            encoder.active,
        )
    logged = _logged_codes(root)
    assert {type(logged[m]) for m in ids} == {ops.UpdateSparseCodeU8}
    want = {m: (sorted(logged[m].features), logged[m].activations) for m in ids}
    assert live == want
    with chitta.open(root, read_only=True, embedder=None, load_checkpoint=False) as f:
        assert _applied(f, ids) == want
    # the logged values are the quantised ones, not the encoder's float32
    assert {logged[m].encoder_version for m in ids} == {encoder.version}
    for row, mid in enumerate(ids):
        assert list(raw_feats[row]) == want[mid][0]
        got = np.frombuffer(want[mid][1], "<f4")
        assert got.tobytes() != raw_acts[row].astype("<f4").tobytes()
        assert np.abs(got - raw_acts[row]).max() <= raw_acts[row].max() / 510 * 1.001


def test_a_log_of_op_12_codes_replays_their_float32_values(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        mids = [f.remember(f"memory {i}") for i in range(300)]
    rng = np.random.default_rng(1)
    plain = [
        ops.UpdateSparseCode(
            id=m,
            features=tuple(sorted(rng.choice(16384, 64, replace=False).tolist())),
            activations=rng.random(64).astype("<f4").tobytes(),
            encoder_version=0,
        )
        for m in mids
    ]
    with chitta.open(root, embedder=None) as f:
        f.core.commit_group(plain[:200])  # one Batch: a column run on replay
        for op in plain[200:]:
            f.core.commit(op)  # single records: a run of op 12 records
    with chitta.open(root, read_only=True, embedder=None, load_checkpoint=False) as f:
        got = _applied(f, mids)
    assert got == {op.id: (list(op.features), op.activations) for op in plain}
