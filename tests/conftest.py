"""Shared test setup: the synthetic data generator lives in benchmarks/datagen.py."""

from __future__ import annotations

import sys
from pathlib import Path

_BENCH = str(Path(__file__).resolve().parent.parent / "benchmarks")
if _BENCH not in sys.path:
    sys.path.insert(0, _BENCH)
