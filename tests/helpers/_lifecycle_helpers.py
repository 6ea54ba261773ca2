"""Shared helpers of the lifecycle tests: a field with a hand-turned clock,
and the replay check (reopen read-only; every memory must be as it was)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from fieldtools import memory_dict, snapshot

import chitta

DAY = 86_400.0
T0 = 1_700_000_000.0


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, days: float) -> None:
        self.t += days * DAY


def open_field(root: Path, clock: Clock, **kw: Any) -> chitta.Field:
    return chitta.open(root, clock=clock, **kw)


def live_state(field: chitta.Field) -> list[dict[str, Any]]:
    return sorted((memory_dict(m) for m in field.memories()), key=lambda d: d["id"])


def assert_replays_same(field: chitta.Field) -> None:
    """Close ``field`` and check a fresh replay of its log gives the same memories."""
    before = live_state(field)
    root = field.path
    field.close()
    assert snapshot(root)["memories"] == before


def unit(v: list[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return (a / np.linalg.norm(a)).astype(np.float32)


def with_cosine(base: np.ndarray, cos: float, seed: int = 0) -> np.ndarray:
    """A unit vector at exactly ``cos`` from unit ``base``."""
    rng = np.random.default_rng(seed)
    r = rng.standard_normal(base.shape[0])
    r -= (r @ base) * base
    r /= np.linalg.norm(r)
    return unit(cos * base + np.sqrt(1.0 - cos * cos) * r)
