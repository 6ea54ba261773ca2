"""The expansion lane's word table (chitta.recall.expand.Vocabulary) saved with checkpoints
(``vocab.emb``, state 5: docs/FORMAT.md section 8) and embedded when words enter the field
(chitta/field/vocab.py): at write time, at ``refresh()`` and at open, never at a recall
beyond the query itself. Real files, real reopens, a real child process."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt
import pytest
from _counting_embedder import Counting

import chitta
from chitta.encode import HashingEmbedder
from chitta.errors import CheckpointIgnored, CorruptionError, InvalidArgument
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import vocab as vocab_format
from chitta.recall.engine import RecallSettings
from chitta.recall.expand import Vocabulary, vocabulary_words

SETTINGS = RecallSettings(fusion_alpha=0.5, expansion_weight=0.3, expansion_min_cosine=0.0)
TEXTS = [
    "I went swimming with the kids at the lake on Sunday",
    "my pottery class made a bowl shaped like a turtle",
    "we camped near the mountains and hiked to the waterfall",
    "the invoice spreadsheet for the tax audit is overdue",
    "Melanie painted a sunset over the harbour last weekend",
    "Caroline joined a support group for transgender people",
    "the kids loved the dinosaur museum and the planetarium",
    "she ran a charity race for mental health awareness",
]
QUERIES = [
    "What activities does Melanie partake in?",
    "Where did they go camping?",
    "What did the kids enjoy?",
]


def _open(path: Path, emb: Counting | None = None, **kw: Any) -> chitta.Field:
    # a fixed clock: scores carry recency, so "bit for bit" needs the same now
    return chitta.open(
        path, embedder=emb or Counting(), recall_settings=SETTINGS, clock=lambda: 1.78e9, **kw
    )


def _recalls(f: chitta.Field) -> list[list[tuple[int, float, dict[str, int]]]]:
    return [
        [(h.id, h.score, dict(h.lanes)) for h in f.recall(q, k=5, touch=False)] for q in QUERIES
    ]


def _table(f: chitta.Field) -> tuple[list[str], bytes, list[str]]:
    words, vecs, pending = f.core.engine.vocabulary.table()
    return words, np.ascontiguousarray(vecs).tobytes(), pending


def _field_words(texts: Sequence[str]) -> set[str]:
    return set().union(*(vocabulary_words(t) for t in texts))


def _written(
    path: Path,
) -> tuple[list[int], list[list[tuple[int, float, dict[str, int]]]], tuple[Any, ...]]:
    with _open(path) as f:
        ids = f.remember_many(TEXTS[:6])
        ids.append(f.remember(TEXTS[6]))
        f.update(ids[0], text="I went swimming and snorkelling with the kids at the lake")
        f.checkpoint()
        return ids, _recalls(f), _table(f)


def _store(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and p.parent.name != "locks" and p.name not in ("LOCK", "MANIFEST")
    }


def _live(path: Path) -> Path:
    return path / "checkpoint" / (path / "checkpoint" / "CURRENT").read_text().strip()


def test_words_are_embedded_at_write_time_not_at_recall(tmp_path: Path) -> None:
    emb = Counting()
    with _open(tmp_path / "f", emb) as f:
        f.remember_many(TEXTS[:4])
        assert set(emb.take()) >= _field_words(TEXTS[:4]) and f.core.engine.vocabulary.pending == 0
        mid = f.remember(TEXTS[4])
        assert set(emb.take()) == {TEXTS[4]} | (_field_words(TEXTS[4:5]) - _field_words(TEXTS[:4]))
        f.update(mid, text="Melanie painted a lighthouse")
        assert "lighthouse" in emb.take()
        f.recall(QUERIES[0], k=3, touch=False)
        assert emb.take() == [QUERIES[0]]  # the query's own vector, no word


def test_reopen_recalls_bit_for_bit_as_before_and_embeds_no_word(tmp_path: Path) -> None:
    path = tmp_path / "f"
    _ids, before, table = _written(path)
    emb = Counting()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(path, emb) as f:
            assert f.checkpoint_loaded is not None and f.stats().records_since_checkpoint == 0
            assert emb.take() == []  # nothing embedded at open: the table came from vocab.emb
            assert _table(f) == table
            assert _recalls(f) == before  # ids, scores (floats compared exactly) and lanes
            assert emb.take() == QUERIES
            assert any("expansion" in lanes for hits in before for _id, _s, lanes in hits)


def test_the_log_after_the_checkpoint_is_embedded_at_open(tmp_path: Path) -> None:
    path = tmp_path / "f"
    _written(path)
    with _open(path) as f:
        f.remember(TEXTS[7])
        before, table = _recalls(f), _table(f)
    emb = Counting()
    with _open(path, emb) as f:
        assert f.stats().records_since_checkpoint > 0
        assert set(emb.take()) == _field_words(TEXTS[7:]) - _field_words(
            TEXTS[:7] + ["snorkelling"]
        )
        assert _table(f) == table and _recalls(f) == before
        assert emb.take() == QUERIES


def test_a_checkpoint_without_a_table_builds_it_once_at_open(tmp_path: Path) -> None:
    """A version-4 checkpoint (the same checkpoint with the table and its record removed,
    state written as version 4) is used, and the table is built at open."""
    path = tmp_path / "f"
    _written(path)
    live = _live(path)
    version, state = fmt.read_state(live / "state")
    del state["vocabulary"], state["sidecars"]["vocab.emb"]
    (live / "vocab.emb").unlink()
    payload = msgspec.msgpack.encode(state)
    fmt._write_atomic_file(
        live / "state", [struct.pack("<8sIIQ", b"CHITSTAT", 4, 0, len(payload)), payload]
    )
    assert fmt.read_state(live / "state")[0] == 4 and version == fmt.STATE_VERSION
    emb = Counting()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(path, emb) as f:
            assert f.checkpoint_loaded == live.name
            words = emb.take()
            assert set(words) == set(f.core.engine.vocabulary.table()[0]) and len(words) == len(
                set(words)
            )
            assert f.recall(QUERIES[0], k=5, touch=False) and emb.take() == [QUERIES[0]]
            f.checkpoint()  # now with a table
    with _open(path, emb) as f:
        assert emb.take() == []


def test_a_table_of_another_embedder_is_rebuilt_and_the_checkpoint_kept(tmp_path: Path) -> None:
    path = tmp_path / "f"
    _ids, before, table = _written(path)
    live = _live(path)
    _version, state = fmt.read_state(live / "state")
    state["vocabulary"]["embedder"] = "some-other-model@0123456789ab"
    fmt.write_state(live / "state", state)
    emb = Counting()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(path, emb) as f:
            assert f.checkpoint_loaded == live.name
            assert sorted(emb.take()) == sorted(table[0])  # every word embedded anew, once
            assert _recalls(f) == before


@pytest.mark.parametrize(
    "damage", ["flip_vector", "flip_word", "truncate", "missing", "state_record"]
)
def test_a_damaged_word_table_ignores_the_checkpoint_and_changes_nothing(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "f"
    _ids, _before, table = _written(path)
    side = _live(path) / "vocab.emb"
    data = bytearray(side.read_bytes())
    if damage == "flip_vector":
        data[44] ^= 0x01
    elif damage == "flip_word":
        data[-6] ^= 0x20
    if damage == "truncate":
        side.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "missing":
        side.unlink()
    elif damage == "state_record":
        _version, state = fmt.read_state(side.parent / "state")
        state["vocabulary"]["rows"] += 1
        fmt.write_state(side.parent / "state", state)
    else:
        side.write_bytes(bytes(data))
    store = _store(path)
    with _open(path, read_only=True, load_checkpoint=False) as f:  # what the log alone gives
        replayed, replayed_table = _recalls(f), _table(f)
    emb = Counting()
    with pytest.warns(CheckpointIgnored, match="vocab.emb|word table"):
        f = _open(path, emb, read_only=True)
    with f:
        assert f.checkpoint_loaded is None  # rebuilt from the log: the log is the truth
        assert set(emb.take()) == set(replayed_table[0]) and _table(f) == replayed_table
        assert _recalls(f) == replayed
    assert _store(path) == store
    assert set(replayed_table[0]) | {"sunday"} == set(
        table[0]
    )  # the replaced text's word: only the writer saw it


def test_a_checkpoint_written_without_the_embedder_carries_the_table_on(tmp_path: Path) -> None:
    """``chitta checkpoint`` (no embedder) keeps the saved rows and lists the later words as pending."""
    path = tmp_path / "f"
    _written(path)
    with _open(path) as f:
        f.remember(TEXTS[7])
        before, table = _recalls(f), _table(f)
    from chitta.field.checkpoint.run import write_checkpoint

    write_checkpoint(path)
    saved = vocab_format.read_vocab(_live(path) / "vocab.emb")
    assert set(saved.pending) == set(table[0]) - set(saved.words) and saved.pending
    emb = Counting()
    with _open(path, emb) as f:
        assert f.stats().records_since_checkpoint == 0
        assert sorted(emb.take()) == saved.pending  # the pending words, at open
        assert sorted(_table(f)[0]) == sorted(table[0]) and [
            [h[0] for h in r] for r in _recalls(f)
        ] == [[h[0] for h in r] for r in before]


_CHILD = """
import json, sys
import chitta
from chitta.encode import HashingEmbedder
from chitta.recall.engine import RecallSettings
s = RecallSettings(fusion_alpha=0.5, expansion_weight=0.3, expansion_min_cosine=0.0)
with chitta.open(sys.argv[1], embedder=HashingEmbedder(64), recall_settings=s) as f:
    print(json.dumps(f.remember_many(json.loads(sys.argv[2]))))
"""


def test_another_process_writes_enter_the_table_at_refresh(tmp_path: Path) -> None:
    path = tmp_path / "f"
    emb = Counting()
    with _open(path, emb) as f:
        f.remember_many(TEXTS[:3])
        emb.take()
        env = {k: v for k, v in os.environ.items() if k != "CHITTA_EMBEDDER"}
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), json.dumps(TEXTS[3:])],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        child_ids = json.loads(out.stdout)
        assert f.refresh() > 0 and all(i in f for i in child_ids)
        new = _field_words(TEXTS[3:]) - _field_words(TEXTS[:3])
        assert set(emb.take()) == new and f.core.engine.vocabulary.pending == 0
        assert new <= set(_table(f)[0])
        f.recall(QUERIES[0], k=5, touch=False)
        assert emb.take() == [QUERIES[0]]


def test_no_table_is_written_when_the_field_does_not_expand(tmp_path: Path) -> None:
    with chitta.open(
        tmp_path / "f", embedder=HashingEmbedder(64), recall_settings=RecallSettings()
    ) as f:
        f.remember_many(TEXTS)
        assert f.core.engine.vocabulary is None
        f.checkpoint()
    assert not (_live(tmp_path / "f") / "vocab.emb").exists()
    _version, state = fmt.read_state(_live(tmp_path / "f") / "state")
    assert "vocabulary" not in state


def test_restore_refuses_a_malformed_table() -> None:
    vocab = Vocabulary(lambda ws: np.zeros((len(ws), 2), np.float32), "x", 2)
    for words, vecs in (
        (["a", "b"], np.zeros((1, 2))),
        (["a", "a"], np.zeros((2, 2))),
        (["a"], np.zeros(2)),
    ):
        with pytest.raises(InvalidArgument):
            vocab.restore(words, np.asarray(vecs, np.float32))
    vocab.restore(["a"], np.ones((1, 2), np.float32))
    with pytest.raises(InvalidArgument, match="empty"):
        vocab.restore(["b"], np.ones((1, 2), np.float32))


def test_read_vocab_refuses_what_the_spec_forbids(tmp_path: Path) -> None:
    good = tmp_path / "good"
    vocab_format.write_vocab(
        good, vocab_format.VocabTable("e", ["ab", "cd"], np.eye(2, dtype=np.float32), ["ef"])
    )
    table = vocab_format.read_vocab(good)
    assert (table.words, table.pending, table.vecs.tolist()) == (
        ["ab", "cd"],
        ["ef"],
        [[1, 0], [0, 1]],
    )
    body = good.read_bytes()[:-4]

    def framed(data: bytes) -> Path:
        path = tmp_path / f"bad-{len(list(tmp_path.iterdir()))}"
        path.write_bytes(data + fmt.crc32c(data).to_bytes(4, "little"))
        return path

    head = struct.Struct("<8sIIQQQ")
    magic, version, dim, rows, pending, nbytes = head.unpack_from(body)
    rest = body[head.size :]
    nan = struct.pack("<f", float("nan"))
    for data, err in (
        (b"CHITVOCX" + body[8:], "magic"),
        (head.pack(magic, version, dim, rows + 1, pending, nbytes) + rest, "need"),
        (head.pack(magic, version, dim, rows, pending, nbytes + 1) + rest + b"x", "add up"),
        (body[: head.size] + nan + rest[4:], "NaN"),
        (body[:-2] + b"ab", "twice"),
        (body[:-1] + b"\xff", "UTF-8"),
    ):
        with pytest.raises(CorruptionError, match=err):
            vocab_format.read_vocab(framed(data))
    with pytest.raises(chitta.errors.UnsupportedFormat):
        vocab_format.read_vocab(framed(head.pack(magic, 2, dim, rows, pending, nbytes) + rest))
    with pytest.raises(CorruptionError, match="checksum"):
        vocab_format.read_vocab(_flip(good))


def _flip(path: Path) -> Path:
    out = path.with_name(path.name + "-flipped")
    data = bytearray(path.read_bytes())
    data[30] ^= 1
    out.write_bytes(bytes(data))
    return out


def test_a_large_build_at_open_reports_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above PROGRESS_WORDS pending words an open embeds them with a progress bar, batch by batch."""
    from chitta.field import vocab as field_vocab
    from chitta.recall import expand

    path = tmp_path / "f"
    with chitta.open(path, embedder=HashingEmbedder(64)) as f:  # expansion off: no table written
        f.remember_many(TEXTS)
        f.checkpoint()
    heard: list[tuple[int, int]] = []
    real = expand.Vocabulary.refresh
    monkeypatch.setattr(field_vocab, "PROGRESS_WORDS", 10)
    monkeypatch.setattr(expand, "EMBED_BATCH", 16)
    monkeypatch.setattr(
        expand.Vocabulary,
        "refresh",
        lambda self, progress=None: real(
            self, progress and (lambda d, t: (heard.append((d, t)), progress(d, t)))
        ),
    )
    with _open(path) as f:
        total = len(_field_words(TEXTS))
        assert len(f.core.engine.vocabulary) == total and f.core.engine.vocabulary.pending == 0
    assert heard == [(min(i + 16, total), total) for i in range(0, total, 16)]


def test_the_real_model_reopens_bit_for_bit(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    from chitta.encode import OnnxMiniLM

    try:
        model = OnnxMiniLM()
        model.load()
    except Exception as exc:  # noqa: BLE001  (the model package is an extra)
        pytest.skip(f"MiniLM not available: {exc}")
    settings = RecallSettings(fusion_alpha=0.55, expansion_weight=0.2)
    with chitta.open(
        tmp_path / "f", embedder=model, recall_settings=settings, clock=lambda: 1.78e9
    ) as f:
        f.remember_many(TEXTS)
        before = [
            [(h.id, h.score, dict(h.lanes)) for h in f.recall(q, k=5, touch=False)] for q in QUERIES
        ]
        f.checkpoint()
    with chitta.open(
        tmp_path / "f", embedder=model, recall_settings=settings, clock=lambda: 1.78e9
    ) as f:
        assert f.stats().records_since_checkpoint == 0 and f.core.engine.vocabulary.pending == 0
        after = [
            [(h.id, h.score, dict(h.lanes)) for h in f.recall(q, k=5, touch=False)] for q in QUERIES
        ]
    assert after == before and any(
        "expansion" in lanes for hits in before for _i, _s, lanes in hits
    )


def test_an_embedder_that_fails_at_open_leaves_the_words_pending(tmp_path: Path) -> None:
    path = tmp_path / "f"
    with chitta.open(path, embedder=HashingEmbedder(64)) as f:
        f.remember_many(TEXTS[:2])

    class Failing(Counting):
        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            raise chitta.errors.EmbedderUnavailable("no model here")

    with pytest.warns(RuntimeWarning, match="could not be embedded"):
        f = _open(path, Failing())
    with f:
        assert f.core.engine.vocabulary.pending == len(_field_words(TEXTS[:2])) and len(f) == 2
