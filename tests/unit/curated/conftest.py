"""Fixtures of the curated layer's tests: a field with a small vocabulary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import chitta

VOCABULARY = {
    "build": "how the project builds: compilers, caches, continuous integration",
    "build/cache": "the build cache: ccache, sccache, cache directories and sizes",
    "build/ci": "continuous integration runners, jobs and their cores",
    "tests": "how the tests run",
    "tests/flaky": "flaky tests, timeouts and retries",
}


def log_bytes(root: Path) -> int:
    """Every byte the field's segments hold (unchanged = nothing was written)."""
    return sum(p.stat().st_size for p in (root / "segments").glob("*.seg"))


def declare(f: chitta.Field) -> None:
    for path, descriptor in VOCABULARY.items():
        f.call("vocabulary_declare", path=path, descriptor=descriptor)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "field"


@pytest.fixture
def field(root: Path) -> Iterator[chitta.Field]:
    with chitta.open(root, embedder=None) as f:
        declare(f)
        yield f
