"""A model-free embedder that records what it is asked to embed (tests of when words are embedded)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta.encode import HashingEmbedder


class Counting:
    """HashingEmbedder of ``dim`` (deterministic, model-free) that records every text it embeds."""

    def __init__(self, dim: int = 64) -> None:
        self._inner = HashingEmbedder(dim)
        self.seen: list[str] = []

    dim = property(lambda self: self._inner.dim)
    name = property(lambda self: self._inner.name)
    family = property(lambda self: self._inner.family)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.seen.extend(texts)
        return self._inner.embed(texts)

    def take(self) -> list[str]:
        """The texts embedded since the last take."""
        out, self.seen = self.seen, []
        return out
