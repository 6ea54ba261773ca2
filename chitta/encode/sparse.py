r"""The learned sparse encoder: exactly ``active`` (64) of ``n_features`` (16,384) features.

A memory's sparse code is the set of the ``active`` atoms that project most
strongly onto its embedding. The posting index (:mod:`chitta.index.posting`)
recalls by counting shared features, so two memories about the same thing
should share many winners and unrelated ones almost none. The atoms start as a
seeded random expansion and are then learned from the stored embeddings with
the free-energy style rule of the seed: Hebbian update of the winners, a
complexity penalty, and a little Gram-Schmidt decorrelation between atoms that
fire together. How badly a memory's winners reconstruct it is its *surprise*.

State and the log
-----------------
The state is ``atoms``: float32 ``[n_features, dim]``, every row of unit L2
norm, and ``version`` (0 at init, +1 per applied learning step). It changes
only through :meth:`SparseEncoder.apply` of an
:class:`~chitta.ops.UpdateSparseEncoder` op: version 0 (no rows) names the
shape and seed, version ``v`` overwrites the rows step ``v`` changed with their
new values. :meth:`SparseEncoder.learn` computes such an op without applying it,
so replaying the same ops in the same order gives bit-identical atoms
(DESIGN.md principle 5: learning is logged as its result, never re-derived).
An op whose version is not ``current + 1`` is skipped when it is old (a
concurrent learner's step from the same base; the first in replay order wins)
and refused when it would leave a gap.

Initial atoms (version 0)
-------------------------
``W0[i, j] = s(i, j) / sqrt(dim)`` with ``s = +1`` or ``-1`` taken from bit
``j mod 64`` of ``splitmix64(splitmix64(seed) + i * ceil(dim / 64) + j // 64 + 1)``
(the words of row ``i``; a 64-bit counter hash). Rows are random sign vectors
(a Rademacher random projection) of unit norm. They are a pure function of
``(seed, n_features, dim)``, with no floating-point arithmetic beyond one
constant, so they are the same on every platform and numpy version.

Encoding
--------
For an input ``y`` (float32, finite, non-zero) let ``x = y / ||y||``. Then

- projection ``p_i = w_i . x`` for every atom ``i`` (cosine, atoms are unit);
- winners ``S(x)`` = the ``active`` atoms with the largest ``p_i``
  (``features``: their ids, ascending, unique);
- activation ``a_i = max(p_i, 0)`` for ``i`` in ``S(x)`` (aligned with
  ``features``). With 64 of 16,384 atoms the winners' projections are positive
  in practice; the clamp only guarantees non-negative activations;
- reconstruction ``x_hat = sum_{i in S} a_i w_i`` and surprise
  ``s(x) = sqrt(1 - cos^2(x, x_hat)) = ||x - c x_hat|| / ||x||`` for the best
  scale ``c``, i.e. the normalised residual of ``x`` after its code's
  reconstruction. Since ``x . x_hat = sum a_i^2 >= 0``, ``s`` lies in
  ``[0, 1]``: 0 = perfectly predicted by its winners, 1 = not at all (also
  when every activation is 0). With the random initial atoms (dim 256) it is
  about 0.6; learning lowers it for data like what was learned, and it stays
  high for memories unlike anything seen, which is what later issues read to
  make surprising memories resist decay.

Learning step (one op)
----------------------
For a batch ``B`` of inputs, encode each ``x`` with the current atoms ``W``,
giving ``S(x)`` and ``a_i(x)``. With ``A_i = sum_x a_i(x)`` (0 for an atom that
won nothing), ``U`` = the ``max_rows`` atoms with the largest ``A_i > 0``
(ties: lower id first; every winner when fewer). Only rows of ``U`` change, and
exactly those rows go into the op, so an op holds at most
``max_rows * dim * 4`` bytes of atoms (256 x 384 x 4 = 384 KiB by default).
``u_i`` = how many applied ops already changed row ``i`` (:attr:`updates`, a
pure function of the log). For each ``i`` in ``U``:

1. **Hebbian** (winners move toward the inputs they won, by activation):
   ``m_i = sum_x a_i(x) x / A_i``,
   ``beta_i = min(lr * A_i, max_step) / (1 + u_i)``,
   ``v_i = w_i + beta_i (m_i - w_i)``. The cap keeps an atom that wins many
   inputs of one batch from jumping to their mean; the ``1 / (1 + u_i)`` decay
   (online-average style) lets atoms settle instead of drifting with every batch.
1b. **Centring**: ``v_i <- v_i - centring * (v_i . m_hat) m_hat`` with
   ``m_hat`` the unit mean of the batch's (unit) inputs. What every input shares
   (real sentence embeddings share a large common direction) then stops
   deciding the winners; ``centring = 1`` removes it fully.
2. **Complexity penalty** (L1 shrink, the proximal step of
   ``lambda * ||v_i||_1``): ``v_i <- sign(v_i) * max(|v_i| - lambda, 0)``
   elementwise, ``lambda = complexity = 1e-4``. Weights the updates do not
   support are pushed to exactly zero.
3. **Decorrelation** (1% Gram-Schmidt between co-active atoms of ``U``), with
   ``u_hat = v / ||v||`` and ``gamma = decorrelation = 0.01``::

       u_i = u_hat_i - gamma / n_i * sum_{x: i in S(x)} sum_{j in S(x) & U, j != i} (u_hat_i . u_hat_j) u_hat_j

   (``n_i = |{x in B : i in S(x)}|``) i.e. each atom removes 1% of its
   component along each updated atom it fired with, averaged over the inputs
   where it won. All atoms are updated simultaneously from the post-step-2
   values (order independent).
4. **Renormalise**: ``w_i' = u_i / ||u_i||`` (a row whose norm would be 0
   keeps its old value).

Defaults: ``lr = 0.01``, ``max_step = 0.05``, ``centring = 1``,
``max_rows = 256``, ``complexity = 1e-4``, ``decorrelation = 0.01``. Small
steps are deliberate: measured in ``benchmarks/bench_sparse.py`` (RESULTS.md,
``sparse``), large Hebbian steps turn the most activated atoms into hubs that
win for everything and cost posting recall. :meth:`SparseEncoder.fit` runs
passes of such steps over shuffled mini-batches (``batch_size = 256``),
applying each op.

Maintenance
-----------
Codes carry the encoder version that made them (``UpdateSparseCode.encoder_version``).
:func:`stale` says whether a code is older than the encoder;
:func:`reencode_ops` gives the ``UpdateSparseCode`` ops that bring codes up to date.

Cost: encoding is one ``[n, dim] x [dim, n_features]`` float32 matmul plus a
partial sort per row (``numpy.argpartition``), in blocks of 1,024 rows; one
query reads the whole 16,384 x 384 float32 atom matrix (24 MiB), so it is
memory-bound (numbers in RESULTS.md). A learning op carries at most
``max_rows * dim * 4`` bytes.

Every bad input raises :class:`chitta.errors.InvalidArgument` and changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.errors import InvalidArgument

__all__ = [
    "SparseCodes",
    "SparseEncoder",
    "initial_atoms",
    "reencode_ops",
    "stale",
]

_BLOCK: Final = 1024  # rows encoded per matmul block
_GATHER: Final = 128  # inputs per gather block in learning and surprise
_MASK64: Final = (1 << 64) - 1


# ---------------------------------------------------------------- helpers


def _splitmix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64 finaliser of ``z`` (uint64 array, wrapping arithmetic)."""
    z = z.copy()
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def initial_atoms(seed: int, n_features: int, dim: int) -> npt.NDArray[np.float32]:
    """The version-0 atoms: random sign rows scaled to unit norm (see the module docstring)."""
    words = -(-dim // 64)
    with np.errstate(over="ignore"):
        base = _splitmix64(np.array([(int(seed) + 0x9E3779B97F4A7C15) & _MASK64], dtype=np.uint64))[
            0
        ]
        counter = np.arange(1, n_features * words + 1, dtype=np.uint64)
        z = _splitmix64((counter + base) * np.uint64(0x9E3779B97F4A7C15))
    bits = np.unpackbits(z.view(np.uint8).reshape(n_features, words * 8), axis=1, bitorder="little")
    scale = np.float32(1.0 / math.sqrt(dim))
    signs = np.where(bits[:, :dim] != 0, scale, -scale).astype(np.float32)
    return np.ascontiguousarray(signs)


def _int_arg(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgument(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise InvalidArgument(f"{name} must lie in [{lo}, {hi}], got {value}")
    return int(value)


def _float_arg(name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidArgument(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo):
        side = "(" if lo_open else "["
        raise InvalidArgument(f"{name} must lie in {side}{lo}, {hi}], got {value}")
    return v


def _unit_rows(rows: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], npt.NDArray[Any]]:
    """Rows divided by their L2 norms, and a mask of the rows whose norm was positive."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    ok = norms > 0
    out = rows / np.where(ok, norms, 1.0)[:, None]
    return out.astype(np.float32), ok


def hebbian(
    w: npt.NDArray[np.float32],
    weighted_sum: npt.NDArray[np.float32],
    total: npt.NDArray[np.float32],
    lr: float,
    max_step: float,
    updates: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.float32]:
    """Step 1: ``v_i = w_i + beta_i (m_i - w_i)``, ``m_i = weighted_sum_i / total_i``,
    ``beta_i = min(lr * total_i, max_step) / (1 + updates_i)``; rows with
    ``total_i == 0`` are unchanged. ``updates`` (default all 0): how many
    learning steps already changed each row."""
    total64 = total.astype(np.float64)
    beta = np.minimum(lr * total64, max_step)
    if updates is not None:
        beta = beta / (1.0 + updates.astype(np.float64))
    safe = np.where(total64 > 0, total64, 1.0)
    mean = weighted_sum.astype(np.float64) / safe[:, None]
    v = w.astype(np.float64) + beta[:, None] * (mean - w.astype(np.float64))
    v[total64 <= 0] = w[total64 <= 0]
    return v.astype(np.float32)


def shrink(v: npt.NDArray[np.float32], lam: float) -> npt.NDArray[np.float32]:
    """Step 2: ``sign(v) * max(|v| - lam, 0)`` elementwise (L1 proximal step)."""
    out = np.sign(v) * np.maximum(np.abs(v) - np.float32(lam), np.float32(0))
    return out.astype(np.float32)


def decorrelate(
    unit: npt.NDArray[np.float32], groups: npt.NDArray[np.intp], gamma: float
) -> npt.NDArray[np.float32]:
    """Step 3: ``u_i = unit_i - gamma / n_i * sum_{g: i in g} sum_{j in g, j != i} (unit_i . unit_j) unit_j``.

    ``unit``: float32 ``[m, dim]`` unit rows; ``groups``: ``[n, k]`` row indices
    into ``unit`` (one row of co-active atoms per input, distinct within a row;
    ``-1`` marks an empty slot). ``n_i``: the groups holding ``i``. Rows in no
    group are returned unchanged. Not renormalised.
    """
    m, dim = unit.shape
    acc = np.zeros((m, dim), dtype=np.float64)
    valid = groups >= 0
    counts = np.bincount(groups[valid], minlength=m)
    k = groups.shape[1]
    idx = np.arange(k)
    for lo in range(0, len(groups), _GATHER):
        g = groups[lo : lo + _GATHER]
        ok = valid[lo : lo + _GATHER]
        atoms = unit[np.where(ok, g, 0)] * ok[:, :, None]  # [b, k, dim], empty slots zero
        # contiguous operands keep numpy's stacked matmul on BLAS
        gram = np.matmul(atoms, np.ascontiguousarray(atoms.transpose(0, 2, 1)))  # [b, k, k]
        gram[:, idx, idx] = 0.0
        push = (gram @ atoms).reshape(-1, dim)[ok.ravel()]  # sum_j c_ij unit_j
        flat = g[ok]
        order = np.argsort(flat, kind="stable")
        sorted_ids = flat[order]
        starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        sums = np.add.reduceat(push[order].astype(np.float64), starts, axis=0)
        acc[sorted_ids[starts]] += sums
    n = np.maximum(counts, 1).astype(np.float64)
    out = unit.astype(np.float64) - gamma * acc / n[:, None]
    return out.astype(np.float32)


# ---------------------------------------------------------------- codes


@dataclass(frozen=True)
class SparseCodes:
    """Codes of ``n`` inputs made by encoder ``version``.

    ``features``: uint32 ``[n, active]``, each row ascending and unique;
    ``activations``: float32 ``[n, active]`` (>= 0), aligned with ``features``;
    ``surprise``: float32 ``[n]`` in ``[0, 1]`` (normalised reconstruction
    residual, see the module docstring).
    """

    features: npt.NDArray[np.uint32]
    activations: npt.NDArray[np.float32]
    surprise: npt.NDArray[np.float32]
    version: int

    def __len__(self) -> int:
        return int(self.features.shape[0])

    def op(self, row: int, id: int) -> ops.UpdateSparseCode:
        """The ``UpdateSparseCode`` op storing code ``row`` for memory ``id``."""
        return ops.UpdateSparseCode(
            id=int(id),
            features=tuple(int(f) for f in self.features[row]),
            activations=np.ascontiguousarray(self.activations[row], dtype="<f4").tobytes(),
            encoder_version=int(self.version),
        )


def stale(codes_version: Any, current_version: int) -> Any:
    """Whether codes made by ``codes_version`` are older than ``current_version``.

    Works on an int (returns a bool) or an array of versions (a bool array).
    """
    if isinstance(codes_version, (int, np.integer)) and not isinstance(codes_version, bool):
        return int(codes_version) < int(current_version)
    arr = np.asarray(codes_version)
    if arr.dtype.kind not in "iu":
        raise InvalidArgument(f"codes_version must hold integers, got {arr.dtype}")
    return arr < int(current_version)


# ---------------------------------------------------------------- encoder


class SparseEncoder:
    """Top-``active`` of ``n_features`` learned projection of ``dim``-d embeddings.

    >>> enc = SparseEncoder(8, n_features=32, active=4, seed=1)
    >>> codes = enc.encode(np.eye(8, dtype=np.float32)[:2])
    >>> codes.features.shape, codes.version
    ((2, 4), 0)
    """

    def __init__(
        self,
        dim: int,
        *,
        n_features: int = 16384,
        active: int = 64,
        seed: int = 0,
        lr: float = 0.01,
        complexity: float = 1e-4,
        decorrelation: float = 0.01,
        max_step: float = 0.05,
        max_rows: int = 256,
        centring: float = 1.0,
    ) -> None:
        self._dim = _int_arg("dim", dim, 1, 2**32 - 1)
        self._n_features = _int_arg("n_features", n_features, 1, 2**32 - 1)
        self._active = _int_arg("active", active, 1, self._n_features)
        self._seed = _int_arg("seed", seed, 0, 2**64 - 1)
        self.lr = _float_arg("lr", lr, 0.0, math.inf, lo_open=True)
        self.complexity = _float_arg("complexity", complexity, 0.0, 1.0)
        self.decorrelation = _float_arg("decorrelation", decorrelation, 0.0, 1.0)
        self.max_step = _float_arg("max_step", max_step, 0.0, 1.0, lo_open=True)
        self.centring = _float_arg("centring", centring, 0.0, 1.0)
        self.max_rows = _int_arg("max_rows", max_rows, 1, 2**32 - 1)
        self._atoms = initial_atoms(self._seed, self._n_features, self._dim)
        self._updates = np.zeros(self._n_features, dtype=np.int64)  # applied ops per row
        self._version = 0

    @classmethod
    def from_op(cls, op: ops.UpdateSparseEncoder, **hyper: Any) -> SparseEncoder:
        """A fresh encoder from a version-0 op (``hyper``: lr, complexity, ...)."""
        if not isinstance(op, ops.UpdateSparseEncoder):
            raise InvalidArgument(f"not an UpdateSparseEncoder op: {type(op).__name__}")
        if op.version != 0:
            raise InvalidArgument(
                f"an encoder starts from its version-0 op, got version {op.version}"
            )
        ops.validate(op)
        return cls(op.dim, n_features=op.n_features, active=op.active, seed=op.seed, **hyper)

    def init_op(self, at_ms: int = 0) -> ops.UpdateSparseEncoder:
        """The version-0 op that defines this encoder's shape and seed."""
        return ops.UpdateSparseEncoder(
            version=0,
            dim=self._dim,
            n_features=self._n_features,
            seed=self._seed,
            active=self._active,
            at_ms=at_ms,
        )

    # ---- properties -------------------------------------------------------------

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def n_features(self) -> int:
        return self._n_features

    @property
    def active(self) -> int:
        return self._active

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def version(self) -> int:
        """0 at init, +1 per applied learning op."""
        return self._version

    @property
    def atoms(self) -> npt.NDArray[np.float32]:
        """A read-only view of the atoms, float32 ``[n_features, dim]``, unit rows."""
        view = self._atoms.view()
        view.flags.writeable = False
        return view

    @property
    def updates(self) -> npt.NDArray[np.int64]:
        """Read-only int64 ``[n_features]``: how many applied learning ops changed each row
        (a pure function of the log, like the atoms)."""
        view = self._updates.view()
        view.flags.writeable = False
        return view

    def __repr__(self) -> str:
        return (
            f"SparseEncoder(dim={self._dim}, n_features={self._n_features}, "
            f"active={self._active}, seed={self._seed}, version={self._version})"
        )

    # ---- input ------------------------------------------------------------------

    def _inputs(self, vectors: Any, *, allow_empty: bool) -> npt.NDArray[np.float32]:
        """Validated, unit-normalised float32 ``[n, dim]``."""
        if isinstance(vectors, np.ndarray):
            if vectors.dtype != np.float32:
                raise InvalidArgument(f"vectors must have dtype float32, got {vectors.dtype}")
            arr = vectors
        else:
            try:
                arr = np.asarray(vectors, dtype=np.float32)
            except (ValueError, TypeError, OverflowError) as e:
                raise InvalidArgument(f"vectors are not a float array: {e}") from None
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self._dim:
            raise InvalidArgument(
                f"vectors must have shape [n, {self._dim}] or [{self._dim}], got {np.shape(vectors)}"
            )
        if len(arr) == 0 and not allow_empty:
            raise InvalidArgument("no vectors given")
        if not np.isfinite(arr).all():
            raise InvalidArgument("vectors hold NaN or infinity")
        unit, ok = _unit_rows(np.ascontiguousarray(arr))
        if not ok.all():
            raise InvalidArgument(f"vector {int(np.flatnonzero(~ok)[0])} is all zeros")
        return unit

    # ---- encoding ---------------------------------------------------------------

    def _winners(
        self, x: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        """Winner ids (ascending) and activations for unit inputs ``x``."""
        n, k = len(x), self._active
        feats = np.empty((n, k), dtype=np.intp)
        acts = np.empty((n, k), dtype=np.float32)
        atoms_t = self._atoms.T
        for lo in range(0, n, _BLOCK):
            proj = x[lo : lo + _BLOCK] @ atoms_t
            if k < self._n_features:
                idx = np.argpartition(proj, self._n_features - k, axis=1)[:, -k:]
            else:
                idx = np.broadcast_to(np.arange(k), proj.shape).copy()
            idx.sort(axis=1)
            feats[lo : lo + _BLOCK] = idx
            acts[lo : lo + _BLOCK] = np.maximum(np.take_along_axis(proj, idx, axis=1), 0.0)
        return feats, acts

    def _surprise(
        self, feats: npt.NDArray[np.intp], acts: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        n = len(feats)
        out = np.empty(n, dtype=np.float32)
        for lo in range(0, n, _GATHER):
            a = acts[lo : lo + _GATHER].astype(np.float64)
            rec = np.einsum(
                "nk,nkd->nd", a, self._atoms[feats[lo : lo + _GATHER]], dtype=np.float64
            )
            rec_norm2 = np.einsum("nd,nd->n", rec, rec)
            dot = np.einsum("nk,nk->n", a, a)  # x . x_hat = sum a_i^2 (x unit, a_i = w_i . x)
            with np.errstate(invalid="ignore", divide="ignore"):
                cos2 = np.where(rec_norm2 > 0, dot * dot / rec_norm2, 0.0)
            out[lo : lo + _GATHER] = np.sqrt(np.clip(1.0 - cos2, 0.0, 1.0))
        return out

    def encode(self, vectors: Any) -> SparseCodes:
        """Codes of float32 ``[n, dim]`` (or one ``[dim]``) vectors; see the module docstring.

        Inputs need not be unit length (they are normalised) but must be finite
        and non-zero; a numpy array must already be float32.
        """
        x = self._inputs(vectors, allow_empty=True)
        feats, acts = self._winners(x)
        return SparseCodes(
            features=feats.astype(np.uint32),
            activations=acts,
            surprise=self._surprise(feats, acts),
            version=self._version,
        )

    def surprise(self, vectors: Any) -> npt.NDArray[np.float32]:
        """Per-vector surprise in ``[0, 1]`` (``encode(vectors).surprise``)."""
        return self.encode(vectors).surprise

    # ---- learning ---------------------------------------------------------------

    def learn(
        self, vectors: Any, *, at_ms: int = 0, max_rows: int | None = None
    ) -> ops.UpdateSparseEncoder:
        """Compute (not apply) one learning step on a batch; returns version ``version + 1``.

        Only the ``max_rows`` atoms with the largest summed activation over the
        batch change (default: the encoder's ``max_rows``, 256), so the op holds
        at most ``max_rows * dim * 4`` bytes of atoms.
        """
        x = self._inputs(vectors, allow_empty=False)
        limit = self.max_rows if max_rows is None else _int_arg("max_rows", max_rows, 1, 2**32 - 1)
        if self._version >= 2**32 - 1:
            raise InvalidArgument("encoder version would overflow u32")
        feats, acts = self._winners(x)
        # total_i = sum_x a_i(x) over every atom; U = the `limit` largest (ties: lower id).
        total_all = np.bincount(
            feats.ravel(), weights=acts.ravel().astype(np.float64), minlength=self._n_features
        )
        won = np.flatnonzero(total_all > 0)
        if len(won) > limit:
            won = np.sort(won[np.argsort(-total_all[won], kind="stable")[:limit]])
        rows = won
        m = len(rows)
        slot = np.full(self._n_features, -1, dtype=np.intp)
        slot[rows] = np.arange(m)
        local = slot[feats]  # [n, active], -1 = atom not updated this step
        sel = local >= 0
        # Step 1: Hebbian. weighted_i = sum_x a_i(x) x over the selected atoms.
        weighted = np.zeros((m, self._dim), dtype=np.float64)
        for lo in range(0, len(x), _BLOCK):
            b_local, b_sel = local[lo : lo + _BLOCK], sel[lo : lo + _BLOCK]
            r, c = np.nonzero(b_sel)
            dense = np.zeros((len(b_local), m), dtype=np.float64)
            dense[r, b_local[r, c]] = acts[lo : lo + _BLOCK][r, c]
            weighted += dense.T @ x[lo : lo + _BLOCK].astype(np.float64)
        w = self._atoms[rows]
        v = hebbian(
            w,
            weighted.astype(np.float32),
            total_all[rows].astype(np.float32),
            self.lr,
            self.max_step,
            self._updates[rows],
        )
        # Step 1b: centring. The updated atoms lose their component along the
        # batch's mean input, so what every input shares picks no winners.
        if self.centring > 0:
            mean = x.astype(np.float64).mean(axis=0)
            norm = float(np.sqrt(mean @ mean))
            if norm > 0:
                mhat = mean / norm
                v64 = v.astype(np.float64)
                v = (v64 - self.centring * np.outer(v64 @ mhat, mhat)).astype(np.float32)
        # Step 2: complexity penalty.
        v = shrink(v, self.complexity)
        # Step 3: decorrelation among co-active updated atoms.
        unit, ok = _unit_rows(v)
        u = decorrelate(unit, local, self.decorrelation) if self.decorrelation > 0 else unit
        # Step 4: renormalise (a row that would vanish keeps its old value).
        new, ok2 = _unit_rows(u)
        keep = ~(ok & ok2)
        new[keep] = w[keep]
        return ops.UpdateSparseEncoder(
            version=self._version + 1,
            dim=self._dim,
            n_features=self._n_features,
            seed=self._seed,
            rows=tuple(int(r) for r in rows),
            atoms=np.ascontiguousarray(new, dtype="<f4").tobytes(),
            active=self._active,
            at_ms=at_ms,
        )

    def restore_rows(
        self, rows: npt.NDArray[np.intp], atoms: npt.NDArray[np.float32], updates: npt.NDArray[np.int64], version: int
    ) -> None:
        """Set learned rows, their update counts and the version (a checkpoint's
        snapshot of this encoder; the log's ops are the other way to get here)."""
        self._atoms[rows] = atoms
        self._updates[rows] = updates
        self._version = version

    def apply(self, op: ops.UpdateSparseEncoder) -> bool:
        """Apply a learning op: the only way the atoms change.

        Returns True when applied (``op.version == version + 1``), False when
        skipped because ``op.version <= version`` (already applied, or a
        concurrent step from the same base that lost the replay order).
        Raises InvalidArgument for a version gap, a different shape or seed, or
        a malformed op; nothing changes then.
        """
        if not isinstance(op, ops.UpdateSparseEncoder):
            raise InvalidArgument(f"not an UpdateSparseEncoder op: {type(op).__name__}")
        shape = (op.dim, op.n_features, op.active, op.seed)
        mine = (self._dim, self._n_features, self._active, self._seed)
        if shape != mine:
            raise InvalidArgument(
                f"op is for an encoder (dim, n_features, active, seed) = {shape}, this one is {mine}"
            )
        ops.validate(op)
        if op.version <= self._version:
            return False
        if op.version != self._version + 1:
            raise InvalidArgument(
                f"op version {op.version} does not follow encoder version {self._version}"
            )
        rows = np.asarray(op.rows, dtype=np.intp)
        values = np.frombuffer(op.atoms, dtype="<f4").reshape(len(rows), self._dim)
        if not np.isfinite(values).all():
            raise InvalidArgument("op atoms hold NaN or infinity")
        self._atoms[rows] = values
        self._updates[rows] += 1
        self._version = op.version
        return True

    def fit(
        self,
        vectors: Any,
        *,
        passes: int = 1,
        batch_size: int = 256,
        shuffle_seed: int = 0,
        at_ms: int = 0,
    ) -> list[ops.UpdateSparseEncoder]:
        """Run ``passes`` over ``vectors`` in shuffled mini-batches; learn and
        apply one op per batch. Returns the ops, in order (to append to the log)."""
        x = self._inputs(vectors, allow_empty=False)
        passes = _int_arg("passes", passes, 0, 2**31)
        batch_size = _int_arg("batch_size", batch_size, 1, 2**31)
        out: list[ops.UpdateSparseEncoder] = []
        for p in range(passes):
            order = np.random.default_rng([int(shuffle_seed), p]).permutation(len(x))
            for lo in range(0, len(x), batch_size):
                op = self.learn(x[order[lo : lo + batch_size]], at_ms=at_ms)
                self.apply(op)
                out.append(op)
        return out


def reencode_ops(
    ids: Sequence[int] | npt.ArrayLike, vectors: Any, encoder: SparseEncoder
) -> list[ops.UpdateSparseCode]:
    """The maintenance pass: one ``UpdateSparseCode`` per memory, made by
    ``encoder`` at its current version. ``ids`` align with ``vectors`` rows."""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
            raise InvalidArgument("ids must be a 1-D array of integers")
        id_list = [int(i) for i in ids]
    else:
        try:
            id_list = list(ids)  # type: ignore[arg-type]
        except TypeError:
            raise InvalidArgument("ids must be a sequence of integers") from None
        for i in id_list:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise InvalidArgument(f"ids must be integers, got {type(i).__name__}")
        id_list = [int(i) for i in id_list]
    if any(not 0 <= i <= 2**64 - 2 for i in id_list):
        raise InvalidArgument("ids must lie in [0, 2**64 - 2]")
    codes = encoder.encode(vectors)
    if len(codes) != len(id_list):
        raise InvalidArgument(f"{len(id_list)} ids for {len(codes)} vectors")
    return [codes.op(i, id_list[i]) for i in range(len(codes))]
