"""Shared pieces of the sparse encoder tests: sizes, clustered data, setting atoms."""

from __future__ import annotations

import datagen
import numpy as np

from chitta import ops
from chitta.encode.sparse import SparseEncoder

DIM = 32
SMALL = {"n_features": 512, "active": 64}


def clustered(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    return datagen.clustered_vectors(n, dim, n_clusters=8, spread=0.5, seed=seed)


def set_atoms(enc: SparseEncoder, atoms: np.ndarray) -> None:
    """Give ``enc`` these atoms through an op (the only way state changes)."""
    op = ops.UpdateSparseEncoder(
        version=enc.version + 1,
        dim=enc.dim,
        n_features=enc.n_features,
        seed=enc.seed,
        rows=tuple(range(enc.n_features)),
        atoms=np.ascontiguousarray(atoms, "<f4").tobytes(),
        active=enc.active,
    )
    assert enc.apply(op)
