"""The 50K x 256 clustered data set shared by the HNSW test files, built once per session.

Building a 50K graph at the shipped defaults (M=16, ef_construction=200) is
the most expensive step of the HNSW tests, so the graphs are built once per
pytest process and handed out as files: ``base_path()`` holds an HNSW of the
first 45K vectors, ``delta_path()`` an HNSW of the last 5K (the two halves of
a TieredHNSW with threshold 45K). Tests load their own copies.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import datagen
import numpy as np
from _hnsw_helpers import numpy_knn

from chitta.organs.index import HNSW

N = 50_000
BASE = 45_000
DIM = 256
NQ = 200
K = 10
THREADS = 2


@functools.cache
def data() -> np.ndarray:
    return datagen.clustered_vectors(N, DIM, seed=7)


@functools.cache
def ids() -> np.ndarray:
    # Sparse, large ids so a mix-up of labels and internal ids cannot pass.
    return (np.arange(N, dtype=np.uint64) * np.uint64(7919)) + np.uint64(2**40)


@functools.cache
def queries() -> np.ndarray:
    return datagen.queries_near(data(), NQ, seed=11)


@functools.cache
def truth() -> np.ndarray:
    return numpy_knn(data(), ids(), queries(), K)[0]


@functools.cache
def _dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="chitta_hnsw_test_"))
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def base_path() -> Path:
    h = HNSW(DIM)
    h.add(ids()[:BASE], data()[:BASE], num_threads=THREADS)
    path = _dir() / "tiers.hnsw"
    h.save(path)
    return path


@functools.cache
def delta_path() -> Path:
    h = HNSW(DIM, seed=101)
    h.add(ids()[BASE:], data()[BASE:], num_threads=THREADS)
    path = _dir() / "tiers.delta.hnsw"
    h.save(path)
    return path


@functools.cache
def full_path() -> Path:
    """An HNSW of all 50K: the base graph plus the last 5K added to it."""
    h = HNSW.load(base_path())
    h.add(ids()[BASE:], data()[BASE:], num_threads=THREADS)
    path = _dir() / "full.hnsw"
    h.save(path)
    return path
