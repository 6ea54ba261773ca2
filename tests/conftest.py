"""Shared test setup.

Puts ``benchmarks/`` (the synthetic data generator) and ``tests/`` (the
``fieldtools`` helpers) on sys.path.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for extra in (_HERE.parent / "benchmarks", _HERE):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))
