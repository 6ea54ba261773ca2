"""The ``Embedder`` protocol and the helpers every embedder shares.

An embedder turns a list of texts into an ``(n, dim)`` float32 array whose rows
have L2 norm 1 (the hashing embedder gives a zero row for a text with no words).

``name`` identifies the exact model, weights included (``"<model-id>@<sha256[:12]>"``
for neural models, ``"hashing-v1-d<dim>"`` for the hashing fallback): a field
records it. ``family`` names what the vectors mean: two embedders of one family
give interchangeable vectors (the int8 ONNX and the torch MiniLM agree at cosine
>= 0.999), so a field written with one may be queried with the other. Vectors of
different families must never be mixed; the hashing embedder is a family of its own.

Asymmetric models embed a query differently from a document (a prefix, say).
Such an embedder also has ``embed_query(texts)`` (:class:`QueryEmbedder`);
``embed`` is then its document side. Callers embed a query with
:func:`embed_query`, which falls back to ``embed`` for every other embedder, so
the ``Embedder`` protocol itself is unchanged.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from chitta.errors import EmbedderUnavailable, InvalidArgument, ModelChecksumError

#: Family of all-MiniLM-L6-v2 vectors, whichever runtime computed them.
MINILM_FAMILY = "all-minilm-l6-v2"


@runtime_checkable
class Embedder(Protocol):
    """What chitta needs from an embedding model."""

    @property
    def dim(self) -> int:
        """Length of each vector."""
        ...

    @property
    def name(self) -> str:
        """Exact model id, including a content hash of the weights."""
        ...

    @property
    def family(self) -> str:
        """Embedders of one family give interchangeable vectors."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``(len(texts), dim)`` float32, rows L2-normalised, in input order."""
        ...


@runtime_checkable
class QueryEmbedder(Embedder, Protocol):
    """An asymmetric embedder: ``embed`` gives document vectors, ``embed_query`` query vectors."""

    def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``(len(texts), dim)`` float32 query vectors, rows L2-normalised, in input order."""
        ...


def embed_query(embedder: Embedder, texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Query vectors: ``embedder.embed_query(texts)`` if it has one, else ``embedder.embed(texts)``."""
    fn = getattr(embedder, "embed_query", None)
    return np.asarray(fn(texts) if callable(fn) else embedder.embed(texts), np.float32)


def validate_texts(texts: object) -> list[str]:
    """Return ``texts`` as a list of str or raise InvalidArgument.

    Accepts a list or tuple whose items are all ``str``. A bare ``str`` is
    refused (it would be embedded character by character), as are ``None``,
    ``bytes`` and any other item type.
    """
    if not isinstance(texts, (list, tuple)):
        raise InvalidArgument(f"texts must be a list or tuple of str, got {type(texts).__name__}")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InvalidArgument(f"texts[{i}] must be str, got {type(t).__name__}")
    return list(texts)


def l2_normalize(x: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit L2 norm, as float32; an all-zero row stays zero."""
    x64 = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x64, axis=1, keepdims=True)
    out = np.divide(x64, norms, out=np.zeros_like(x64), where=norms > 0)
    result: npt.NDArray[np.float32] = out.astype(np.float32)
    return result


def length_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length (shortest first).

    The sort is stable, so equal lengths keep input order; padding per batch is
    then small. Results go back to input positions by the returned indices.
    """
    if batch_size < 1:
        raise InvalidArgument(f"batch_size must be >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def check_positive(name: str, value: int) -> int:
    """``value`` if it is an int >= 1, else InvalidArgument."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"{name} must be an int >= 1, got {value!r}")
    return value


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_sha256(path: Path, expected: str, what: str) -> None:
    """Raise ModelChecksumError unless ``path`` hashes to ``expected``."""
    actual = sha256_file(path)
    if actual != expected:
        raise ModelChecksumError(
            f"{what}: {path} has SHA-256 {actual}, expected {expected}; the file is damaged "
            "or is not the pinned model (reinstall the package)"
        )


def importable(*modules: str) -> bool:
    """True if every module can be imported (found; nothing is imported)."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


def package_dir(module: str, missing: str) -> Path:
    """The directory of the installed package ``module``; EmbedderUnavailable
    with the message ``missing`` if it is not installed."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(missing)
    return Path(next(iter(spec.submodule_search_locations)))
