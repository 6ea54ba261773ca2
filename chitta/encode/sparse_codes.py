"""Data types and pure helpers of the sparse encoder (:mod:`chitta.encode.sparse`):
the seeded initial atoms, a batch of codes, staleness, re-encoding ops, argument checks.

Initial atoms (version 0)
-------------------------
``W0[i, j] = s(i, j) / sqrt(dim)`` with ``s = +1`` or ``-1`` taken from bit
``j mod 64`` of ``splitmix64(splitmix64(seed) + i * ceil(dim / 64) + j // 64 + 1)``
(the words of row ``i``; a 64-bit counter hash). Rows are random sign vectors
(a Rademacher random projection) of unit norm. They are a pure function of
``(seed, n_features, dim)``, with no floating-point arithmetic beyond one
constant, so they are the same on every platform and numpy version.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.errors import InvalidArgument

if TYPE_CHECKING:
    from chitta.encode.sparse import SparseEncoder

__all__ = ["SparseCodes", "initial_atoms", "reencode_ops", "stale"]

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
    # bit j (little-endian) of byte b is column 8 b + j: +scale when set, else -scale,
    # through a 256 x 8 table (one pass, instead of unpacking to bytes and then choosing)
    scale = np.float32(1.0 / math.sqrt(dim))
    set_bits = (np.arange(256, dtype=np.uint16)[:, None] >> np.arange(8, dtype=np.uint16)) & 1
    table = np.where(set_bits != 0, scale, -scale).astype(np.float32)
    signs = table[z.view(np.uint8).reshape(n_features, words * 8)].reshape(n_features, words * 64)
    return np.ascontiguousarray(signs[:, :dim])


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
