"""Shared test setup.

Puts ``benchmarks/`` (the synthetic data generator) and ``tests/`` (the
``fieldtools`` and the other helpers, in ``tests/helpers/``) on sys.path.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for extra in (_HERE.parent / "benchmarks", _HERE / "helpers"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))


import os

import pytest


@pytest.fixture(autouse=True)
def _fast_default_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fields opened with ``embedder="auto"`` store no automatic vectors in
    tests, so log-level tests see exactly the ops they wrote; recall tests
    choose an embedder (hashing, or the real model) explicitly."""
    if "CHITTA_EMBEDDER" not in os.environ:
        monkeypatch.setenv("CHITTA_EMBEDDER", "none")
