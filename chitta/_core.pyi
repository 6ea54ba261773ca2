"""Type stubs of the native module chitta._core (one section per area)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

def _raise_status_for_test(code: int, message: str, path: str, offset: int) -> None: ...

# ---- wal ---------------------------------------------------------------------


# ---- end wal -----------------------------------------------------------------

# ---- posting -----------------------------------------------------------------


# ---- end posting -------------------------------------------------------------

# ---- hamming -----------------------------------------------------------------


# ---- end hamming -------------------------------------------------------------

# ---- hnsw --------------------------------------------------------------------


# ---- end hnsw ----------------------------------------------------------------

# ---- bm25 --------------------------------------------------------------------

def _bm25_tokenize(text: str | bytes, stem: bool, stopwords: bool) -> list[str]: ...

class _BM25:
    def __init__(self, k1: float, b: float, stem: bool, stopwords: bool) -> None: ...
    def set_params(self, k1: float, b: float) -> None: ...
    @property
    def k1(self) -> float: ...
    @property
    def b(self) -> float: ...
    @property
    def stem(self) -> bool: ...
    @property
    def stopwords(self) -> bool: ...
    def add(self, ids: npt.NDArray[np.uint64], texts: object) -> None: ...
    def remove(self, ids: npt.NDArray[np.uint64]) -> None: ...
    def search(
        self,
        query: str,
        k: int,
        allowed: npt.NDArray[np.uint64] | None = None,
        accumulator: str = "auto",
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]: ...
    def __len__(self) -> int: ...
    def contains(self, id: int) -> bool: ...
    def doc_freq(self, term: str) -> int: ...
    @property
    def vocabulary_size(self) -> int: ...
    @property
    def avg_doc_length(self) -> float: ...
    @property
    def ordinal_slots(self) -> int: ...
    def export_docs(self) -> list[tuple[int, list[tuple[str, int]]]]: ...
    def import_docs(self, docs: list[tuple[int, list[tuple[str, int]]]]) -> None: ...

# ---- end bm25 ----------------------------------------------------------------

# ---- fusion ------------------------------------------------------------------

def _rrf_fuse(
    lists: list[npt.NDArray[np.uint64]],
    weights: npt.NDArray[np.float64] | None,
    k: float,
    limit: int,
    return_ranks: bool,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64], npt.NDArray[np.int32] | None]: ...

# ---- end fusion --------------------------------------------------------------
