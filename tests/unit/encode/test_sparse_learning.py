"""Tests of the sparse encoder's learning rule (chitta.encode.sparse, sparse_learn):
its three parts (Hebbian, complexity penalty, decorrelation) and centring on
hand-computed cases, surprise on hand cases, and that learning lowers surprise."""

from __future__ import annotations

import math

import datagen
import numpy as np
import pytest
from _sparse_helpers import DIM, SMALL, clustered, set_atoms

from chitta.encode import sparse
from chitta.encode.sparse import SparseEncoder

# ----------------------------------------------------------- the learning rule


def test_learning_reduces_mean_reconstruction_error_on_clustered_data() -> None:
    # Few winners for the dimension (as with 64 of 16,384 at dim 256-384), so
    # random atoms reconstruct poorly and learned ones can do better.
    x = datagen.clustered_vectors(1000, 64, n_clusters=20, spread=0.35, seed=3)
    enc = SparseEncoder(
        64, n_features=1024, active=16, seed=0, lr=0.5, max_step=0.5, max_rows=1024, centring=0.0
    )
    before = float(enc.surprise(x).mean())
    enc.fit(x, passes=3, batch_size=100)
    after = float(enc.surprise(x).mean())
    assert enc.version == 30
    assert after < 0.8 * before
    # held-out vectors from the same clusters are reconstructed better too
    held = datagen.queries_near(x, 200, noise=0.3, seed=5)
    assert float(enc.surprise(held).mean()) < before


def test_surprise_is_the_normalised_residual_of_a_hand_case() -> None:
    # 2-d, 4 atoms, 2 winners; computed by hand.
    enc = SparseEncoder(2, n_features=4, active=2, seed=0)
    set_atoms(enc, np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], np.float32))
    # x = (0.6, 0.8): winners 0 (0.6) and 1 (0.8); x_hat = (0.6, 0.8) = x -> surprise 0.
    codes = enc.encode(np.array([[0.6, 0.8]], np.float32))
    assert codes.features.tolist() == [[0, 1]]
    np.testing.assert_allclose(codes.activations, [[0.6, 0.8]], rtol=1e-6)
    assert codes.surprise[0] == pytest.approx(0.0, abs=1e-6)
    assert codes.version == 1
    # x = (1, 0): projections 1, 0, -1, 0 -> winners {0, one of 1/3 at 0};
    # x_hat = 1 * atom0 = x -> surprise 0. Now a case with residual: atoms at 0 and 45 deg.
    enc2 = SparseEncoder(2, n_features=2, active=1, seed=0)
    r = 1 / math.sqrt(2)
    set_atoms(enc2, np.array([[1, 0], [r, r]], np.float32))
    # x = (cos 30, sin 30): projections cos30 = .866 and cos15 = .966 -> winner 1;
    # x_hat is along atom 1 at 15 deg from x: surprise = sin 15 deg.
    x = np.array([[math.cos(math.pi / 6), math.sin(math.pi / 6)]], np.float32)
    codes2 = enc2.encode(x)
    assert codes2.features.tolist() == [[1]]
    assert codes2.surprise[0] == pytest.approx(math.sin(math.pi / 12), abs=1e-6)


def test_hebbian_step_hand_case() -> None:
    w = np.array([[1.0, 0.0]], np.float32)
    # two inputs (0,1) with activation 0.2 and (1,0) with 0.6: total 0.8,
    # mean (0.75, 0.25); lr 0.5 -> beta = min(0.4, 0.5) = 0.4
    v = sparse.hebbian(w, np.array([[0.6, 0.2]], np.float32), np.array([0.8], np.float32), 0.5, 0.5)
    np.testing.assert_allclose(v, [[1 + 0.4 * (0.75 - 1), 0.4 * 0.25]], rtol=1e-6)
    # the cap: lr 10 -> beta = 0.5
    v = sparse.hebbian(w, np.array([[0.6, 0.2]], np.float32), np.array([0.8], np.float32), 10, 0.5)
    np.testing.assert_allclose(v, [[0.875, 0.125]], rtol=1e-6)
    # no activation: unchanged
    v = sparse.hebbian(w, np.zeros((1, 2), np.float32), np.zeros(1, np.float32), 0.5, 0.5)
    assert np.array_equal(v, w)


def test_hebbian_step_shrinks_with_the_rows_update_count() -> None:
    # same case as above after 0, 1 and 3 earlier updates: beta = 0.4 / (1 + u)
    w = np.array([[1.0, 0.0]] * 3, np.float32)
    ws = np.array([[0.6, 0.2]] * 3, np.float32)
    v = sparse.hebbian(w, ws, np.full(3, 0.8, np.float32), 0.5, 0.5, np.array([0, 1, 3]))
    for row, beta in zip(v, (0.4, 0.2, 0.1)):
        np.testing.assert_allclose(row, [1 + beta * (0.75 - 1), beta * 0.25], rtol=1e-6)


def test_complexity_penalty_hand_case() -> None:
    v = np.array([[0.8, -0.6, 5e-5, -2e-4, 0.0]], np.float32)
    got = sparse.shrink(v, 1e-4)
    want = [[0.8 - 1e-4, -0.6 + 1e-4, 0.0, -1e-4, 0.0]]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert got[0, 2] == 0.0 and got[0, 4] == 0.0
    # the L1 norm drops by lambda per weight that was above lambda
    assert float(np.abs(got).sum()) == pytest.approx(float(np.abs(v).sum()) - 3e-4 - 5e-5, abs=1e-6)


def test_complexity_penalty_acts_on_updated_atoms_in_a_step() -> None:
    # Hand case, 3-d, 2 atoms, 1 winner, no decorrelation. Atom 0 is
    # (1, 0.04, 0) / norm; the input is (1, 0, 0), so atom 0 wins with
    # a = 1/norm and beta = min(0.5 a, 0.5) / (1 + 1): _set_atoms is one
    # applied step that changed the row. Hebbian: v = w + beta (x - w).
    norm = math.sqrt(1 + 0.04**2)
    w0 = [1 / norm, 0.04 / norm, 0.0]
    a = w0[0]
    beta = min(0.5 * a, 0.5) / 2
    v = [w0[0] + beta * (1 - w0[0]), w0[1] * (1 - beta), 0.0]  # v[1] ~ 0.02
    atoms = np.array([w0, [-1.0, 0.0, 0.0]], np.float32)
    x = np.array([[1.0, 0.0, 0.0]], np.float32)
    results = {}
    for lam in (0.0, 0.05):
        enc = SparseEncoder(
            3,
            n_features=2,
            active=1,
            complexity=lam,
            decorrelation=0.0,
            lr=0.5,
            max_step=0.5,
            centring=0.0,
            settle=True,
        )
        set_atoms(enc, atoms)
        op = enc.learn(x)
        assert op.rows == (0,)  # only the winner is updated (and penalised)
        results[lam] = np.frombuffer(op.atoms, "<f4")
    # lambda = 0: just the renormalised Hebbian step
    vn = math.sqrt(v[0] ** 2 + v[1] ** 2)
    np.testing.assert_allclose(results[0.0], [v[0] / vn, v[1] / vn, 0.0], rtol=2e-6)
    # lambda = 0.05: shrink (v0 - .05, max(v1 - .05, 0) = 0, 0), then unit norm
    assert v[1] < 0.05 and v[1] > 0.025
    np.testing.assert_allclose(results[0.05], [1.0, 0.0, 0.0], rtol=1e-6)
    assert results[0.05][1] == 0.0 and results[0.0][1] > 0.025


def test_centring_hand_case() -> None:
    # 2-d, atoms (0.6, 0.8) and (-1, 0), 1 winner, input x = (1, 0): atom 0 wins
    # with a = 0.6; one earlier update (_set_atoms) -> beta = min(0.5 * 0.6, 0.5) / 2
    # = 0.15; v = w + 0.15 (x - w) = (0.66, 0.68). The batch mean is x, so
    # centring c removes c * 0.66 from v[0]; then unit norm.
    for c, v0 in ((1.0, 0.0), (0.5, 0.33), (0.0, 0.66)):
        enc = SparseEncoder(
            2,
            n_features=2,
            active=1,
            lr=0.5,
            max_step=0.5,
            centring=c,
            decorrelation=0.0,
            complexity=0.0,
            settle=True,
        )
        set_atoms(enc, np.array([[0.6, 0.8], [-1.0, 0.0]], np.float32))
        op = enc.learn(np.array([[1.0, 0.0]], np.float32))
        assert op.rows == (0,)
        norm = math.hypot(v0, 0.68)
        np.testing.assert_allclose(
            np.frombuffer(op.atoms, "<f4"), [v0 / norm, 0.68 / norm], rtol=1e-6, atol=1e-7
        )


def test_decorrelation_hand_case() -> None:
    # two unit atoms at 60 degrees, co-active once: u_0 = a0 - 0.01 * cos60 * a1.
    a0 = np.array([1.0, 0.0])
    a1 = np.array([0.5, math.sqrt(3) / 2])
    unit = np.array([a0, a1], np.float32)
    got = sparse.decorrelate(unit, np.array([[0, 1]]), 0.01)
    np.testing.assert_allclose(got[0], a0 - 0.01 * 0.5 * a1, rtol=1e-6)
    np.testing.assert_allclose(got[1], a1 - 0.01 * 0.5 * a0, rtol=1e-6)

    def cos(u: np.ndarray, v: np.ndarray) -> float:
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    assert abs(cos(got[0], got[1])) < 0.5
    # hand value: (a0 - .005 a1).(a1 - .005 a0) = .5 - .005 - .005 + .000025*.5
    num = 0.5 - 0.01 + 0.0000125
    den = 1 - 2 * 0.005 * 0.5 + 0.005**2
    assert cos(got[0], got[1]) == pytest.approx(num / den, rel=1e-5)
    # an atom co-active with two others in two inputs is averaged over them
    unit3 = np.array([a0, a1, [0.0, 1.0]], np.float32)
    got3 = sparse.decorrelate(unit3, np.array([[0, 1], [0, 2]]), 0.01)
    np.testing.assert_allclose(got3[0], a0 - 0.01 / 2 * (0.5 * a1 + 0.0 * unit3[2]), rtol=1e-6)
    # a row in no group is unchanged
    got4 = sparse.decorrelate(unit3, np.array([[0, 1]]), 0.01)
    assert np.array_equal(got4[2], unit3[2])


def test_decorrelation_reduces_coactive_cosines_in_a_step() -> None:
    # Same data and Hebbian step, with and without decorrelation: the mean
    # |cosine| among the atoms that fired together is lower with it.
    x = clustered(200, seed=8)
    with_d = SparseEncoder(DIM, **SMALL, seed=6, decorrelation=0.05)
    without = SparseEncoder(DIM, **SMALL, seed=6, decorrelation=0.0)
    for _ in range(3):
        with_d.apply(with_d.learn(x))
        without.apply(without.learn(x))
    feats = without.encode(x).features

    def mean_abs_cos(enc: SparseEncoder) -> float:
        vals = []
        for row in feats[:50]:
            a = enc.atoms[row.astype(np.intp)].astype(np.float64)
            g = np.abs(a @ a.T)
            vals.append((g.sum() - np.trace(g)) / (len(row) * (len(row) - 1)))
        return float(np.mean(vals))

    assert mean_abs_cos(with_d) < mean_abs_cos(without)
