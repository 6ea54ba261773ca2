"""Model-free embedders that defer like a model (``background = True``) and record each
call: the tests of chitta/field/deferred.py see when, how often and on which thread
texts are embedded."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chitta.encode import HashingEmbedder


class Gated:
    """HashingEmbedder(``dim``) that waits for ``gate`` before each batch and records it."""

    background = True

    def __init__(self, dim: int = 64, *, family: str | None = None) -> None:
        self._inner = HashingEmbedder(dim)
        self._family = family
        self.gate = threading.Event()
        self.gate.set()
        self.calls: list[list[str]] = []
        self.threads: set[str] = set()

    dim = property(lambda self: self._inner.dim)

    @property
    def name(self) -> str:
        return self._inner.name if self._family is None else self._family

    @property
    def family(self) -> str:
        return self._inner.family if self._family is None else self._family

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.gate.wait()
        self.calls.append(list(texts))
        self.threads.add(threading.current_thread().name)
        return self._inner.embed(texts)

    def texts(self) -> list[str]:
        """Every text embedded so far, in call order."""
        return [t for call in self.calls for t in call]
