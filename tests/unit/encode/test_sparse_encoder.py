"""Tests of chitta.encode.sparse: code shape, determinism, replay through ops,
associativity, staleness and bad input (the learning rule: test_sparse_learning.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _sparse_helpers import DIM, SMALL, clustered

from chitta import errors, ops
from chitta.encode import sparse
from chitta.encode.sparse import SparseEncoder, reencode_ops, stale

# ---------------------------------------------------------------- codes


def test_every_code_has_exactly_active_unique_sorted_features_in_range() -> None:
    enc = SparseEncoder(DIM, **SMALL, seed=3)
    x = np.random.default_rng(1).standard_normal((300, DIM)).astype(np.float32)
    codes = enc.encode(x)
    assert codes.features.dtype == np.uint32 and codes.features.shape == (300, 64)
    assert codes.activations.dtype == np.float32 and codes.activations.shape == (300, 64)
    assert codes.surprise.dtype == np.float32 and codes.surprise.shape == (300,)
    assert codes.version == 0
    for row in codes.features:
        assert len(np.unique(row)) == 64
        assert np.all(np.diff(row.astype(np.int64)) > 0)
    assert codes.features.max() < 512
    assert (codes.activations >= 0).all()
    assert ((codes.surprise >= 0) & (codes.surprise <= 1)).all()


def test_default_shape_is_64_of_16384() -> None:
    enc = SparseEncoder(16)
    codes = enc.encode(np.ones((2, 16), np.float32) + np.eye(2, 16, dtype=np.float32))
    assert enc.n_features == 16384 and enc.active == 64
    assert codes.features.shape == (2, 64) and codes.features.max() < 16384


def test_winners_are_the_top_projections_by_brute_force() -> None:
    enc = SparseEncoder(DIM, **SMALL, seed=5)
    x = np.random.default_rng(2).standard_normal((20, DIM)).astype(np.float32)
    codes = enc.encode(x)
    xu = x.astype(np.float64) / np.linalg.norm(x, axis=1, keepdims=True)
    proj = xu @ enc.atoms.astype(np.float64).T
    for i in range(len(x)):
        want = np.sort(np.argsort(-proj[i], kind="stable")[:64])
        assert codes.features[i].tolist() == want.tolist()
        np.testing.assert_allclose(
            codes.activations[i], np.maximum(proj[i, want], 0), rtol=1e-5, atol=1e-6
        )


def test_initial_atoms_are_unit_sign_rows() -> None:
    atoms = sparse.initial_atoms(9, 100, 70)
    assert atoms.shape == (100, 70) and atoms.dtype == np.float32
    assert set(np.unique(np.abs(atoms))) == {np.float32(1 / math.sqrt(70))}
    np.testing.assert_allclose(np.linalg.norm(atoms, axis=1), 1.0, rtol=1e-6)
    # roughly balanced signs, distinct rows, and a different seed differs
    assert 0.45 < (atoms > 0).mean() < 0.55
    assert len({r.tobytes() for r in atoms}) == 100
    assert not np.array_equal(atoms, sparse.initial_atoms(10, 100, 70))


def test_initial_atoms_known_bits() -> None:
    # splitmix64 computed independently in pure Python for seed 0, row 0, word 0.
    mask = (1 << 64) - 1

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    golden = 0x9E3779B97F4A7C15
    base = mix((0 + golden) & mask)
    word = mix(((1 + base) * golden) & mask)
    want = [1.0 if (word >> j) & 1 else -1.0 for j in range(64)]
    got = np.sign(sparse.initial_atoms(0, 1, 64)[0]).tolist()
    assert got == want


# ------------------------------------------------------------ determinism


def test_same_seed_gives_same_codes_and_other_seed_differs() -> None:
    x = clustered(200)
    a = SparseEncoder(DIM, **SMALL, seed=11).encode(x)
    b = SparseEncoder(DIM, **SMALL, seed=11).encode(x)
    c = SparseEncoder(DIM, **SMALL, seed=12).encode(x)
    assert np.array_equal(a.features, b.features)
    assert np.array_equal(a.activations, b.activations)
    assert np.array_equal(a.surprise, b.surprise)
    assert not np.array_equal(a.features, c.features)


def test_replaying_learn_ops_gives_bit_identical_atoms() -> None:
    x = clustered(400)
    learner = SparseEncoder(DIM, **SMALL, seed=4)
    init = learner.init_op()
    log = [ops.encode(init)]
    for lo in range(0, 400, 100):
        op = learner.learn(x[lo : lo + 100], at_ms=lo)
        assert op.version == learner.version + 1
        assert learner.apply(op) is True
        log.append(ops.encode(op))
    assert learner.version == 4
    # A fresh encoder built only from the decoded log.
    decoded = [ops.decode(ops.OpType.UpdateSparseEncoder, blob) for blob in log]
    for op in decoded:
        ops.validate(op)
    replica = SparseEncoder.from_op(decoded[0])  # type: ignore[arg-type]
    for op in decoded[1:]:
        assert replica.apply(op) is True  # type: ignore[arg-type]
    assert replica.version == learner.version
    assert replica.atoms.tobytes() == learner.atoms.tobytes()
    assert np.array_equal(replica.updates, learner.updates)
    assert np.array_equal(replica.encode(x).features, learner.encode(x).features)


def test_learn_does_not_change_state_and_is_deterministic() -> None:
    x = clustered(100)
    enc = SparseEncoder(DIM, **SMALL, seed=2)
    before = enc.atoms.copy()
    op1 = enc.learn(x)
    op2 = enc.learn(x)
    assert ops.encode(op1) == ops.encode(op2)
    assert enc.version == 0 and np.array_equal(enc.atoms, before)


def test_op_carries_only_changed_rows() -> None:
    x = clustered(10)
    enc = SparseEncoder(DIM, **SMALL, seed=2)
    before = enc.atoms.copy()
    winners = np.unique(enc.encode(x).features)
    op = enc.learn(x, max_rows=512)  # room for every winner
    assert list(op.rows) == winners.tolist()
    assert len(op.atoms) == 4 * len(op.rows) * DIM
    enc.apply(op)
    untouched = np.setdiff1d(np.arange(512), winners)
    assert np.array_equal(enc.atoms[untouched], before[untouched])
    np.testing.assert_allclose(np.linalg.norm(enc.atoms[winners], axis=1), 1.0, rtol=1e-5)


def test_max_rows_keeps_the_most_activated_atoms() -> None:
    x = clustered(200)
    enc = SparseEncoder(DIM, **SMALL, seed=2)
    before = enc.atoms.copy()
    codes = enc.encode(x)
    # oracle: summed activation per atom, by a plain loop
    total: dict[int, float] = {}
    for feats, acts in zip(codes.features, codes.activations):
        for f, a in zip(feats.tolist(), acts.tolist()):
            total[f] = total.get(f, 0.0) + a
    want = sorted(sorted(total, key=lambda f: (-total[f], f))[:16])
    op = enc.learn(x, max_rows=16)
    assert list(op.rows) == want
    assert len(op.atoms) == 16 * DIM * 4
    enc.apply(op)
    others = np.setdiff1d(np.arange(512), want)
    assert np.array_equal(enc.atoms[others], before[others])
    assert not np.array_equal(enc.atoms[want], before[want])
    np.testing.assert_array_equal(enc.updates[want], 1)
    assert int(enc.updates.sum()) == 16


def test_default_max_rows_bounds_every_op() -> None:
    x = clustered(300)
    enc = SparseEncoder(DIM, n_features=2048, active=64, seed=2, max_rows=100)
    assert len(np.unique(enc.encode(x).features)) > 100  # the bound binds
    op = enc.learn(x)
    assert len(op.rows) == 100 and len(op.atoms) == 100 * DIM * 4
    assert SparseEncoder(DIM).max_rows == 256


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "8"])
def test_bad_max_rows_raises_invalid_argument(bad: object) -> None:
    enc = SparseEncoder(DIM, **SMALL, seed=2)
    with pytest.raises(errors.InvalidArgument, match="max_rows"):
        enc.learn(clustered(10), max_rows=bad)  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidArgument, match="max_rows"):
        SparseEncoder(DIM, max_rows=bad)  # type: ignore[arg-type]
    assert enc.version == 0 and int(enc.updates.sum()) == 0


def test_apply_skips_old_versions_and_refuses_gaps_and_foreign_ops() -> None:
    x = clustered(50)
    a = SparseEncoder(DIM, **SMALL, seed=1)
    op1 = a.learn(x[:25])
    rival = a.learn(x[25:])  # also version 1, from the same base
    assert a.apply(op1) is True
    snapshot = a.atoms.copy()
    assert a.apply(rival) is False  # lost the replay order: skipped
    assert a.apply(op1) is False  # already applied
    assert np.array_equal(a.atoms, snapshot) and a.version == 1
    op2 = a.learn(x)
    gap = ops.UpdateSparseEncoder(
        version=3, dim=DIM, n_features=512, seed=1, rows=op2.rows, atoms=op2.atoms
    )
    with pytest.raises(errors.InvalidArgument, match="does not follow"):
        a.apply(gap)
    other = SparseEncoder(DIM, **SMALL, seed=2)
    with pytest.raises(errors.InvalidArgument, match="seed"):
        other.apply(op2)
    with pytest.raises(errors.InvalidArgument):
        a.apply(ops.DeleteMemory(id=1, at_ms=0))  # type: ignore[arg-type]
    assert np.array_equal(a.atoms, snapshot) and a.version == 1


def test_validate_refuses_malformed_encoder_ops() -> None:
    good = {
        "version": 1,
        "dim": 2,
        "n_features": 8,
        "seed": 0,
        "rows": (1, 3),
        "atoms": bytes(16),
        "active": 4,
    }
    ops.validate(ops.UpdateSparseEncoder(**good))  # type: ignore[arg-type]
    bad = [
        {"atoms": bytes(12)},  # wrong size
        {"rows": (3, 1)},  # not ascending
        {"rows": (1, 1)},  # repeated
        {"rows": (1, 8)},  # out of range
        {"version": 0},  # initial op with rows
        {"dim": 0, "rows": (), "atoms": b""},
        {"active": 9},
    ]
    for change in bad:
        with pytest.raises(errors.InvalidArgument):
            ops.validate(ops.UpdateSparseEncoder(**{**good, **change}))  # type: ignore[arg-type]


# ------------------------------------------------------------ associativity


def test_near_duplicates_share_far_more_features_than_unrelated_vectors() -> None:
    rng = np.random.default_rng(7)
    enc = SparseEncoder(DIM, **SMALL, seed=0)
    base = rng.standard_normal((100, DIM)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    near = base + 0.05 * rng.standard_normal((100, DIM)).astype(np.float32) / math.sqrt(DIM)
    other = rng.standard_normal((100, DIM)).astype(np.float32)
    fb, fn, fo = (enc.encode(v).features for v in (base, near, other))
    same = np.mean([len(np.intersect1d(fb[i], fn[i])) for i in range(100)])
    diff = np.mean([len(np.intersect1d(fb[i], fo[i])) for i in range(100)])
    assert same > 40
    assert diff < 15
    assert same > 4 * diff


# --------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros((2, DIM + 1), np.float32),  # wrong dim
        np.zeros((2, DIM), np.float64) + 1,  # not float32
        np.full((1, DIM), np.nan, np.float32),
        np.full((1, DIM), np.inf, np.float32),
        np.zeros((1, DIM), np.float32),  # zero vector
        np.zeros((2, 2, DIM), np.float32) + 1,
        "text",
        [[1, "a"]],
    ],
)
def test_bad_vectors_raise_invalid_argument(bad: object) -> None:
    enc = SparseEncoder(DIM, **SMALL)
    with pytest.raises(errors.InvalidArgument):
        enc.encode(bad)
    with pytest.raises(errors.InvalidArgument):
        enc.learn(bad)
    assert enc.version == 0


def test_empty_batches() -> None:
    enc = SparseEncoder(DIM, **SMALL)
    assert len(enc.encode(np.zeros((0, DIM), np.float32))) == 0
    with pytest.raises(errors.InvalidArgument, match="no vectors"):
        enc.learn(np.zeros((0, DIM), np.float32))


def test_lists_and_single_vectors_are_accepted() -> None:
    enc = SparseEncoder(4, n_features=16, active=3)
    one = enc.encode([1.0, 2.0, 3.0, 4.0])
    assert one.features.shape == (1, 3)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dim": 0},
        {"dim": 1.5},
        {"n_features": 0},
        {"active": 0},
        {"active": 600},
        {"seed": -1},
        {"lr": 0.0},
        {"lr": float("nan")},
        {"complexity": -1e-4},
        {"decorrelation": 1.5},
        {"max_step": 0.0},
        {"centring": 1.5},
        {"centring": -0.1},
        {"dim": True},
    ],
)
def test_bad_parameters_raise_invalid_argument(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"dim": DIM, **SMALL, **kwargs}
    dim = args.pop("dim")
    with pytest.raises(errors.InvalidArgument):
        SparseEncoder(dim, **args)  # type: ignore[arg-type]


def test_from_op_needs_version_zero() -> None:
    enc = SparseEncoder(DIM, **SMALL, seed=9)
    assert SparseEncoder.from_op(enc.init_op()).atoms.tobytes() == enc.atoms.tobytes()
    op = enc.learn(clustered(10))
    with pytest.raises(errors.InvalidArgument, match="version-0"):
        SparseEncoder.from_op(op)


# ------------------------------------------------------------ maintenance


def test_stale() -> None:
    assert stale(0, 1) is True
    assert stale(3, 3) is False
    assert stale(np.array([0, 2, 3], np.uint32), 3).tolist() == [True, True, False]
    with pytest.raises(errors.InvalidArgument):
        stale(np.array([0.5]), 1)


def test_reencode_ops_produce_valid_current_codes() -> None:
    x = clustered(30)
    enc = SparseEncoder(DIM, **SMALL, seed=1)
    enc.apply(enc.learn(x))
    got = reencode_ops([10, 11, 2**64 - 2] + list(range(27)), x, enc)
    codes = enc.encode(x)
    assert len(got) == 30
    for i, op in enumerate(got):
        assert isinstance(op, ops.UpdateSparseCode)
        ops.validate(op)
        assert op.encoder_version == 1
        assert list(op.features) == codes.features[i].tolist()
        assert np.array_equal(np.frombuffer(op.activations, "<f4"), codes.activations[i])
        assert ops.decode(ops.OpType.UpdateSparseCode, ops.encode(op)) == op
    assert [op.id for op in got[:3]] == [10, 11, 2**64 - 2]
    assert not stale(got[0].encoder_version, enc.version)
    with pytest.raises(errors.InvalidArgument):
        reencode_ops([1, 2], x, enc)
    with pytest.raises(errors.InvalidArgument):
        reencode_ops([-1] + list(range(29)), x, enc)
