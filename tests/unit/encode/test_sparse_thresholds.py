"""Per-atom thresholds of the sparse encoder: homeostasis in a learning step,
winners under thresholds, persistence through UpdateSparseEncoder ops
(including records written before the op had thresholds), and bad input."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from chitta import errors, ops
from chitta.encode import sparse_learn
from chitta.encode.sparse import SparseEncoder

DIM = 32
SMALL = {"n_features": 512, "active": 64}


def _manifold(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors on a 4-d linear manifold with a large shared offset (hub-prone)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)) @ rng.standard_normal((4, DIM)) / 4 + 2 * rng.standard_normal(
        DIM
    )
    x += 0.05 * rng.standard_normal((n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_homeostasis_hand_case() -> None:
    # 4 atoms, 1 winner per input, 2 inputs: atom 0 won both, atom 1 none.
    theta = np.array([0.0, 0.1, -0.2, 0.0], np.float32)
    wins = np.array([2, 0, 0, 0], np.int64)
    got = sparse_learn.homeostasis(theta, wins, 2, 1, 0.5)
    fair = 1 / 4
    want = [0.5 * (1 - fair), 0.1 - 0.5 * fair, -0.2 - 0.5 * fair, -0.5 * fair]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_step_raises_the_threshold_of_an_atom_that_wins_everything() -> None:
    # 2-d, atoms (1, 0) and (0, 1), one winner: every input near (1, 0) picks atom 0.
    enc = SparseEncoder(2, n_features=2, active=1, homeostasis=2.0)
    ops_atoms = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    enc.apply(
        ops.UpdateSparseEncoder(
            version=1, dim=2, n_features=2, seed=0, rows=(0, 1), atoms=ops_atoms.tobytes(), active=1
        )
    )
    x = np.array([[1.0, 0.1], [1.0, -0.1], [1.0, 0.0]], np.float32)
    op = enc.learn(x)
    theta = np.frombuffer(op.thresholds, "<f4")
    np.testing.assert_allclose(theta, [2.0 * (1 - 0.5), 2.0 * (0 - 0.5)], rtol=1e-6)
    assert enc.apply(op)
    np.testing.assert_array_equal(enc.thresholds, theta)


def test_winners_are_the_top_of_projection_minus_threshold_by_brute_force() -> None:
    x = _manifold(300)
    enc = SparseEncoder(DIM, **SMALL, seed=5)
    enc.fit(x, passes=2, batch_size=50)
    assert enc.thresholds.any()
    q = _manifold(20, seed=9)
    codes = enc.encode(q)
    qu = q.astype(np.float64) / np.linalg.norm(q, axis=1, keepdims=True)
    proj = qu @ enc.atoms.astype(np.float64).T
    score = proj - enc.thresholds.astype(np.float64)
    for i in range(len(q)):
        want = np.sort(np.argsort(-score[i], kind="stable")[:64])
        assert codes.features[i].tolist() == want.tolist()
        # activations stay the projections, not the biased scores
        np.testing.assert_allclose(
            codes.activations[i], np.maximum(proj[i, want], 0), rtol=1e-4, atol=1e-6
        )


def test_winners_across_blocks_equal_brute_force_and_row_by_row() -> None:
    """More inputs than one projection block (sparse_encode._BLOCK, reused buffers):
    every block's winners are the brute-force top, and each row's code is the one it
    gets alone (no state leaks from one block's buffers into the next; BLAS may round
    a row's projections differently with the block's shape, hence the tolerance)."""
    from chitta.encode import sparse_encode

    x = _manifold(300)
    enc = SparseEncoder(DIM, **SMALL, seed=5)
    enc.fit(x, passes=1, batch_size=50)
    assert enc.thresholds.any()
    n = 2 * sparse_encode._BLOCK + 37
    q = _manifold(n, seed=11)
    codes = enc.encode(q)
    qu = q.astype(np.float64) / np.linalg.norm(q, axis=1, keepdims=True)
    score = qu @ enc.atoms.astype(np.float64).T - enc.thresholds.astype(np.float64)
    for i in range(n):
        want = np.sort(np.argsort(-score[i], kind="stable")[:64])
        assert codes.features[i].tolist() == want.tolist(), i
    for i in (0, sparse_encode._BLOCK - 1, sparse_encode._BLOCK, n - 1):
        alone = enc.encode(q[i])
        np.testing.assert_array_equal(alone.features[0], codes.features[i])
        np.testing.assert_allclose(alone.activations[0], codes.activations[i], rtol=1e-5, atol=1e-6)


def test_thresholds_replay_bit_identically_from_the_log() -> None:
    x = _manifold(400)
    learner = SparseEncoder(DIM, **SMALL, seed=4)
    log = [ops.encode(learner.init_op())]
    for lo in range(0, 400, 100):
        op = learner.learn(x[lo : lo + 100])
        assert len(op.thresholds) == 4 * 512
        assert learner.apply(op)
        log.append(ops.encode(op))
    decoded = [ops.decode(ops.OpType.UpdateSparseEncoder, blob) for blob in log]
    replica = SparseEncoder.from_op(decoded[0])  # type: ignore[arg-type]
    for op in decoded[1:]:
        assert replica.apply(op)  # type: ignore[arg-type]
    assert replica.thresholds.tobytes() == learner.thresholds.tobytes()
    assert replica.atoms.tobytes() == learner.atoms.tobytes()
    assert np.array_equal(replica.encode(x).features, learner.encode(x).features)


def test_an_op_written_before_thresholds_existed_decodes_and_leaves_them_zero() -> None:
    # The previous schema's array: version, dim, n_features, seed, rows, atoms, active, at_ms.
    atoms = np.eye(2, 4, dtype="<f4").tobytes()
    old = msgspec.msgpack.encode([1, 4, 8, 7, [2, 5], atoms, 3, 123])
    op = ops.decode(ops.OpType.UpdateSparseEncoder, old)
    assert isinstance(op, ops.UpdateSparseEncoder)
    assert op.thresholds == b"" and op.rows == (2, 5) and op.at_ms == 123
    ops.validate(op)
    enc = SparseEncoder(4, n_features=8, active=3, seed=7)
    assert enc.apply(op)
    assert not enc.thresholds.any()
    np.testing.assert_array_equal(enc.atoms[[2, 5]], np.eye(2, 4, dtype=np.float32))


def test_homeostasis_zero_writes_no_thresholds() -> None:
    enc = SparseEncoder(DIM, **SMALL, homeostasis=0.0)
    op = enc.learn(_manifold(50))
    assert op.thresholds == b""


@pytest.mark.parametrize("size", [4, 4 * 511, 4 * 513])
def test_validate_refuses_thresholds_of_the_wrong_length(size: int) -> None:
    op = ops.UpdateSparseEncoder(version=1, dim=2, n_features=512, seed=0, thresholds=bytes(size))
    with pytest.raises(errors.InvalidArgument, match="thresholds"):
        ops.validate(op)


def test_validate_refuses_thresholds_on_the_initial_op() -> None:
    op = ops.UpdateSparseEncoder(
        version=0, dim=2, n_features=4, seed=0, active=2, thresholds=bytes(16)
    )
    with pytest.raises(errors.InvalidArgument, match="thresholds"):
        ops.validate(op)


def test_apply_refuses_non_finite_thresholds_and_changes_nothing() -> None:
    enc = SparseEncoder(DIM, **SMALL, seed=1)
    op = enc.learn(_manifold(50))
    theta = np.frombuffer(op.thresholds, "<f4").copy()
    theta[3] = np.nan
    bad = msgspec.structs.replace(op, thresholds=theta.tobytes())
    before = enc.atoms.copy()
    with pytest.raises(errors.InvalidArgument, match="thresholds"):
        enc.apply(bad)
    assert enc.version == 0 and not enc.thresholds.any()
    assert np.array_equal(enc.atoms, before)


@pytest.mark.parametrize(
    "kwargs", [{"homeostasis": -1.0}, {"homeostasis": float("nan")}, {"settle": 1}]
)
def test_bad_homeostasis_parameters_raise_invalid_argument(kwargs: dict[str, object]) -> None:
    with pytest.raises(errors.InvalidArgument):
        SparseEncoder(DIM, **SMALL, **kwargs)  # type: ignore[arg-type]
