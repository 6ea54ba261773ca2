"""Type stubs of the native module chitta._core (one section per area)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

def _raise_status_for_test(code: int, message: str, path: str, offset: int) -> None: ...

# ---- wal ---------------------------------------------------------------------


# ---- end wal -----------------------------------------------------------------

# ---- posting -----------------------------------------------------------------

POSTING_PAD_ID: int

class _PostingIndex:
    def __init__(self, n_features: int, active: int, compact_fraction: float = 0.25) -> None: ...
    def add(
        self,
        ids: npt.NDArray[np.uint64],
        features: npt.NDArray[np.uint32],
        activations: npt.NDArray[np.float32] | None,
    ) -> None: ...
    def remove(self, ids: npt.NDArray[np.uint64]) -> None: ...
    def search(
        self,
        features: npt.NDArray[np.uint32],
        k: int,
        allowed: npt.NDArray[np.uint64] | None,
        num_threads: int = 0,
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32]]: ...
    def compact(self) -> None: ...
    def __len__(self) -> int: ...
    def contains(self, id: int) -> bool: ...
    def memory_bytes(self) -> int: ...
    def num_tombstones(self) -> int: ...
    def unit_activations(self) -> bool: ...
    def live_ids(self) -> npt.NDArray[np.uint64]: ...
    def get(self, id: int) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]: ...
    @property
    def n_features(self) -> int: ...
    @property
    def active(self) -> int: ...
    def _set_allowed_strategy(self, strategy: int) -> None: ...
    def _set_count_mode(self, mode: int) -> None: ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> _PostingIndex: ...

# ---- end posting -------------------------------------------------------------

# ---- hamming -----------------------------------------------------------------


# ---- end hamming -------------------------------------------------------------

# ---- hnsw --------------------------------------------------------------------


# ---- end hnsw ----------------------------------------------------------------

# ---- bm25 --------------------------------------------------------------------


# ---- end bm25 ----------------------------------------------------------------

# ---- fusion ------------------------------------------------------------------


# ---- end fusion --------------------------------------------------------------
