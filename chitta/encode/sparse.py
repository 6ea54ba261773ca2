r"""The learned sparse encoder: exactly ``active`` (64) of ``n_features`` (16,384) features.

A memory's sparse code is the set of the ``active`` atoms that project most
strongly onto its embedding. The posting index (:mod:`chitta.organs.index.posting`)
recalls by counting shared features, so two memories about the same thing
should share many winners and unrelated ones almost none. The atoms start as a
seeded random expansion and are then learned from the stored embeddings with
the free-energy style rule of the seed: Hebbian update of the winners, a
complexity penalty, and a little Gram-Schmidt decorrelation between atoms that
fire together. How badly a memory's winners reconstruct it is its *surprise*.

State and the log
-----------------
The state is ``atoms``: float32 ``[n_features, dim]``, every row of unit L2
norm, ``thresholds``: float32 ``[n_features]`` and ``version`` (0 at init, +1
per applied learning step). It changes only through
:meth:`SparseEncoder.apply` of an :class:`~chitta.ops.UpdateSparseEncoder` op:
version 0 (no rows) names the shape and seed, version ``v`` overwrites the rows
step ``v`` changed with their new values, and the thresholds when it carries
them (ops written before thresholds existed carry none: replaying them leaves
every threshold 0). :meth:`SparseEncoder.learn` computes such an op without
applying it, so replaying the same ops in the same order gives bit-identical atoms
(DESIGN.md principle 5: learning is logged as its result, never re-derived).
An op whose version is not ``current + 1`` is skipped when it is old (a
concurrent learner's step from the same base; the first in replay order wins)
and refused when it would leave a gap.

Initial atoms (version 0): a seeded Rademacher random projection, see
:func:`chitta.encode.sparse_codes.initial_atoms`.

Encoding
--------
The winners, activations and surprise of an input: :mod:`chitta.encode.sparse_encode`
(formulas there).

Thresholds and learning
-----------------------
Each atom also has a threshold ``theta_i`` (0 at init); the winners are the
``active`` atoms with the largest ``p_i - theta_i``, the activations stay the
projections ``p_i``. A learning step (:mod:`chitta.encode.sparse_learn`, where
the formulas are) moves at most ``max_rows`` winning atoms (Hebbian toward the
inputs they won, centring, complexity penalty ``lambda = 1e-4``, 1%
Gram-Schmidt decorrelation between co-active atoms, renormalise) and updates
every atom's threshold by homeostasis (atoms that win more than their fair
share ``active / n_features`` get harder to win). The op carries the changed
rows and all ``n_features`` thresholds (64 KiB), so an op holds at most
``max_rows * dim * 4 + n_features * 4`` bytes (448 KiB by default at dim 384).
``u_i`` = how many applied ops already changed row ``i`` (:attr:`updates`, a
pure function of the log). :meth:`SparseEncoder.fit` runs passes of steps over
shuffled mini-batches, applying each op.

Maintenance
-----------
Codes carry the encoder version that made them (``UpdateSparseCode.encoder_version``).
:func:`stale` says whether a code is older than the encoder;
:func:`reencode_ops` gives the ``UpdateSparseCode`` ops that bring codes up to date.

Cost: encoding is one ``[n, dim] x [dim, n_features]`` float32 matmul plus a
partial sort per row (``numpy.argpartition``), in blocks of 128 rows; one
query reads the whole 16,384 x 384 float32 atom matrix (24 MiB), so it is
memory-bound (numbers in RESULTS.md).

Every bad input raises :class:`chitta.errors.InvalidArgument` and changes nothing.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.encode.sparse_codes import (
    SparseCodes,
    _float_arg,
    _int_arg,
    initial_atoms,
    reencode_ops,
    stale,
)
from chitta.encode.sparse_encode import surprise_of, unit_inputs, winners
from chitta.encode.sparse_learn import Hyper, decorrelate, hebbian, learning_step, shrink
from chitta.errors import InvalidArgument

__all__ = [
    "Hyper",
    "SparseCodes",
    "SparseEncoder",
    "decorrelate",
    "hebbian",
    "initial_atoms",
    "reencode_ops",
    "shrink",
    "stale",
]

_ArrayT = TypeVar("_ArrayT", bound=np.ndarray)


def _read_only(a: _ArrayT) -> _ArrayT:
    """A read-only view of ``a`` (the encoder's state is changed only by ``apply``)."""
    view = a.view()
    view.flags.writeable = False
    return view


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
        lr: float = 0.5,
        complexity: float = 1e-4,
        decorrelation: float = 0.01,
        max_step: float = 0.1,
        max_rows: int = 256,
        centring: float = 0.5,
        homeostasis: float = 5.0,
        settle: bool = False,
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
        self.homeostasis = _float_arg("homeostasis", homeostasis, 0.0, 1e6)
        if not isinstance(settle, bool):
            raise InvalidArgument(f"settle must be a bool, got {type(settle).__name__}")
        self.settle = settle
        self.max_rows = _int_arg("max_rows", max_rows, 1, 2**32 - 1)
        self._atoms = initial_atoms(self._seed, self._n_features, self._dim)
        self._thresholds = np.zeros(self._n_features, dtype=np.float32)
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
        return _read_only(self._atoms)

    @property
    def thresholds(self) -> npt.NDArray[np.float32]:
        """A read-only view of the per-atom thresholds, float32 ``[n_features]`` (0 at init)."""
        return _read_only(self._thresholds)

    @property
    def hyper(self) -> Hyper:
        """The learning step's hyperparameters."""
        return Hyper(
            lr=self.lr,
            max_step=self.max_step,
            complexity=self.complexity,
            decorrelation=self.decorrelation,
            centring=self.centring,
            homeostasis=self.homeostasis,
            settle=self.settle,
        )

    @property
    def updates(self) -> npt.NDArray[np.int64]:
        """Read-only int64 ``[n_features]``: how many applied learning ops changed each row
        (a pure function of the log, like the atoms)."""
        return _read_only(self._updates)

    def __repr__(self) -> str:
        return (
            f"SparseEncoder(dim={self._dim}, n_features={self._n_features}, "
            f"active={self._active}, seed={self._seed}, version={self._version})"
        )

    # ---- encoding ---------------------------------------------------------------

    def _winners(
        self, x: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        return winners(x, self._atoms, self._thresholds, self._active)

    def encode(self, vectors: Any) -> SparseCodes:
        """Codes of float32 ``[n, dim]`` (or one ``[dim]``) vectors; see the module docstring.

        Inputs need not be unit length (they are normalised) but must be finite
        and non-zero; a numpy array must already be float32.
        """
        x = unit_inputs(vectors, self._dim, allow_empty=True)
        feats, acts = self._winners(x)
        return SparseCodes(
            features=feats.astype(np.uint32),
            activations=acts,
            surprise=surprise_of(feats, acts, self._atoms),
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
        x = unit_inputs(vectors, self._dim, allow_empty=False)
        limit = self.max_rows if max_rows is None else _int_arg("max_rows", max_rows, 1, 2**32 - 1)
        if self._version >= 2**32 - 1:
            raise InvalidArgument("encoder version would overflow u32")
        feats, acts = self._winners(x)
        step = learning_step(
            self._atoms, self._thresholds, self._updates, x, feats, acts, self.hyper, limit
        )
        return ops.UpdateSparseEncoder(
            version=self._version + 1,
            dim=self._dim,
            n_features=self._n_features,
            seed=self._seed,
            rows=tuple(int(r) for r in step.rows),
            atoms=np.ascontiguousarray(step.atoms, dtype="<f4").tobytes(),
            active=self._active,
            at_ms=at_ms,
            thresholds=np.ascontiguousarray(step.thresholds, dtype="<f4").tobytes()
            if self.homeostasis > 0
            else b"",
        )

    def restore_rows(
        self,
        rows: npt.NDArray[np.intp],
        atoms: npt.NDArray[np.float32],
        updates: npt.NDArray[np.int64],
        version: int,
        thresholds: npt.NDArray[np.float32] | None = None,
    ) -> None:
        """Set learned rows, their update counts, the per-atom thresholds and the
        version (a checkpoint's snapshot of this encoder; the log's ops are the
        other way to get here)."""
        self._atoms[rows] = atoms
        self._updates[rows] = updates
        if thresholds is not None:
            self._thresholds[:] = thresholds
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
        theta = np.frombuffer(op.thresholds, dtype="<f4") if op.thresholds else None
        if theta is not None and not np.isfinite(theta).all():
            raise InvalidArgument("op thresholds hold NaN or infinity")
        self._atoms[rows] = values
        if theta is not None:
            self._thresholds[:] = theta
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
        max_rows: int | None = None,
    ) -> list[ops.UpdateSparseEncoder]:
        """Run ``passes`` over ``vectors`` in shuffled mini-batches; learn and
        apply one op per batch. Returns the ops, in order (to append to the log).
        ``max_rows``: as for :meth:`learn` (``n_features`` lets every winner learn)."""
        x = unit_inputs(vectors, self._dim, allow_empty=False)
        passes = _int_arg("passes", passes, 0, 2**31)
        batch_size = _int_arg("batch_size", batch_size, 1, 2**31)
        if max_rows is not None:
            max_rows = _int_arg("max_rows", max_rows, 1, 2**32 - 1)
        out: list[ops.UpdateSparseEncoder] = []
        for p in range(passes):
            order = np.random.default_rng([int(shuffle_seed), p]).permutation(len(x))
            for lo in range(0, len(x), batch_size):
                op = self.learn(x[order[lo : lo + batch_size]], at_ms=at_ms, max_rows=max_rows)
                self.apply(op)
                out.append(op)
        return out
