"""A disk cache of text vectors for the LoCoMo evaluation (benchmarks only).

``CachedEmbedder(inner, path)`` is an :class:`chitta.encode.Embedder` that
returns ``inner``'s vectors, computing each distinct text once ever: vectors
are kept in ``path`` (an ``.npz`` keyed by the SHA-1 of the text, one file per
embedder name). Same ``name``/``family``/``dim`` as ``inner``, so a field
records the real model. Iterating on recall settings then costs no model time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DEFAULT_DIR = Path(os.environ.get("CHITTA_LOCOMO_CACHE", "/tmp/chitta-locomo-cache"))


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    def __init__(self, inner: Any, directory: Path = DEFAULT_DIR) -> None:
        self.inner = inner
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{inner.name.replace('/', '_')}.npz"
        self._vecs: dict[str, npt.NDArray[np.float32]] = {}
        if self.path.exists():
            with np.load(self.path) as z:
                keys, mat = z["keys"], z["vecs"]
            self._vecs = {str(k): mat[i] for i, k in enumerate(keys)}
        self._dirty = False

    def __getattr__(self, attr: str) -> Any:
        """The inner embedder's ``recall_*`` preferences (chitta.recall.presets, import_conversation)."""
        if attr.startswith("recall_"):
            return getattr(self.inner, attr)
        raise AttributeError(attr)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def family(self) -> str:
        return str(self.inner.family)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(texts, "", self.inner.embed)

    def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The inner embedder's query vectors (keyed apart from documents) when it
        has ``embed_query``, else its ``embed``."""
        fn = getattr(self.inner, "embed_query", None)
        return self.embed(texts) if fn is None else self._embed(texts, "query\0", fn)

    def _embed(self, texts: Sequence[str], tag: str, fn: Any) -> npt.NDArray[np.float32]:
        keys = [_key(tag + t) for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts) if k not in self._vecs}.items())
        if missing:
            vecs = np.asarray(fn([t for _, t in missing]), np.float32)
            for (k, _), v in zip(missing, vecs):
                self._vecs[k] = v
            self._dirty = True
            self.save()
        if not keys:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._vecs[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        if not self._dirty:
            return
        keys = list(self._vecs)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vecs=np.stack([self._vecs[k] for k in keys]))
        os.replace(tmp, self.path)
        self._dirty = False
