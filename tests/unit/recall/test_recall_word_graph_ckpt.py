"""The expansion lane's word graph saved with checkpoints (``vocab.hnsw``, state 5:
docs/FORMAT.md section 8): loaded at open instead of built, bit for bit the writer's
graph (same nodes, links, entry point, levels and level generator), extended with the
rows it does not cover, built with progress when there is none, and a damaged one
makes the checkpoint ignored with the store unchanged. The exact limit is lowered
through ``chitta.recall.expand.EXACT_WORDS`` so that a few hundred words of a small
hashing embedder make a graph; one test runs at the real limit."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _counting_embedder import Counting

import chitta
from chitta import _core
from chitta.errors import CheckpointIgnored, ChittaIOError, CorruptionError, InvalidArgument
from chitta.field import vocab as field_vocab
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import vocab as vocab_format
from chitta.recall import expand
from chitta.recall.engine import RecallSettings

SETTINGS = RecallSettings(fusion_alpha=0.5, expansion_weight=0.3, expansion_min_cosine=-1.0)
LIMIT = 60  # the exact limit in these tests: above it the words are searched through the graph
DIM = 24


def _texts(n: int, seed: int, words_per: int = 8) -> list[str]:
    """n texts of made-up alphabetic words (each a vocabulary word)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("bcdfghjklmnpqrstvwxz"))
    vowels = np.array(list("aeiou"))
    out = []
    for _ in range(n):
        words = [
            "".join(f"{c}{v}" for c, v in zip(rng.choice(letters, 3), rng.choice(vowels, 3)))
            for _ in range(words_per)
        ]
        out.append(" ".join(words))
    return out


TEXTS = _texts(80, 1)  # ~600 distinct words
LATER = _texts(12, 2)
QUERIES = [" ".join(t.split()[:2]) for t in TEXTS[::9]]


@pytest.fixture(autouse=True)
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expand, "EXACT_WORDS", LIMIT)
    monkeypatch.setattr(expand, "GRAPH_BUILD_STEP", 64)


def _open(path: Path, emb: Counting | None = None, **kw: Any) -> chitta.Field:
    return chitta.open(
        path, embedder=emb or Counting(DIM), recall_settings=SETTINGS, clock=lambda: 1.78e9, **kw
    )


def _recalls(f: chitta.Field) -> list[list[tuple[int, float, dict[str, int]]]]:
    return [
        [(h.id, h.score, dict(h.lanes)) for h in f.recall(q, k=5, touch=False)] for q in QUERIES
    ]


def _graph_bytes(f: chitta.Field, tmp: Path) -> bytes:
    """The field's word graph as its file (nodes, links, entry point, levels, generator state)."""
    vocab = f.core.engine.vocabulary
    vocab.refresh()
    out = tmp / f"g{id(vocab)}.hnsw"
    assert vocab.save_graph(str(out)) == len(vocab)
    return out.read_bytes()


def _nearest(f: chitta.Field) -> list[list[str]]:
    vocab = f.core.engine.vocabulary
    rng = np.random.default_rng(7)
    return [vocab.nearest(rng.standard_normal(DIM).astype(np.float32), 8, -1.0) for _ in range(40)]


def _written(path: Path, tmp: Path) -> tuple[Any, ...]:
    """A field whose table crosses the limit while it is written, checkpointed."""
    with _open(path) as f:
        for i in range(0, len(TEXTS), 16):
            f.remember_many(TEXTS[i : i + 16])
        f.checkpoint()
        assert f.core.engine.vocabulary._graph is not None
        return _recalls(f), _nearest(f), _graph_bytes(f, tmp), f.core.engine.vocabulary.table()[0]


def _live(path: Path) -> Path:
    return path / "checkpoint" / (path / "checkpoint" / "CURRENT").read_text().strip()


def _store(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and p.parent.name != "locks" and p.name not in ("LOCK", "MANIFEST")
    }


def _catch_ups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, list[tuple[int, int]]]]:
    """Records each Vocabulary.catch_up: (rows indexed, the progress calls it made)."""
    calls: list[tuple[int, list[tuple[int, int]]]] = []
    real = expand.Vocabulary.catch_up

    def spy(self: expand.Vocabulary, progress: Any = None) -> int:
        heard: list[tuple[int, int]] = []

        def hear(done: int, total: int) -> None:
            heard.append((done, total))
            if progress is not None:
                progress(done, total)

        n = real(self, hear)
        calls.append((n, heard))
        return n

    monkeypatch.setattr(expand.Vocabulary, "catch_up", spy)
    return calls


def _set_state(live: Path, edit: Any) -> None:
    _version, state = fmt.read_state(live / "state")
    edit(state)
    fmt.write_state(live / "state", state)


def test_the_graph_is_saved_and_reopen_gives_the_writers_graph_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    before, nearest, graph, words = _written(path, tmp_path)
    live = _live(path)
    _version, state = fmt.read_state(live / "state")
    assert state["vocabulary"]["graph_rows"] == len(words) > LIMIT
    assert (live / "vocab.hnsw").read_bytes() == graph  # the saved file is the writer's graph
    calls = _catch_ups(monkeypatch)
    emb = Counting(DIM)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(path, emb) as f:
            assert emb.take() == []  # nothing embedded, nothing built
            assert [n for n, _ in calls] in ([], [0])
            assert _graph_bytes(f, tmp_path) == graph
            assert _nearest(f) == nearest
            assert _recalls(f) == before


def test_the_log_after_the_checkpoint_extends_the_loaded_graph(tmp_path: Path) -> None:
    path = tmp_path / "f"
    _written(path, tmp_path)
    with _open(path) as f:
        f.remember_many(LATER)
        before, nearest, graph = _recalls(f), _nearest(f), _graph_bytes(f, tmp_path)
    with _open(path) as f:
        assert f.stats().records_since_checkpoint > 0
        assert (
            _graph_bytes(f, tmp_path) == graph and _nearest(f) == nearest and _recalls(f) == before
        )


def test_a_graph_of_fewer_rows_than_the_table_is_extended(tmp_path: Path) -> None:
    """The graph of an earlier checkpoint (the first rows of this table) is loaded and
    extended with the rest: the writer's graph again."""
    path = tmp_path / "f"
    _written(path, tmp_path)
    old = tmp_path / "old.hnsw"
    shutil.copy(_live(path) / "vocab.hnsw", old)
    rows_old = fmt.read_state(_live(path) / "state")[1]["vocabulary"]["graph_rows"]
    with _open(path) as f:
        f.remember_many(LATER)
        f.checkpoint()
        before, graph = _recalls(f), _graph_bytes(f, tmp_path)
    live = _live(path)
    shutil.copy(old, live / "vocab.hnsw")

    def edit(state: dict[str, Any]) -> None:
        assert state["vocabulary"]["rows"] > rows_old
        state["vocabulary"]["graph_rows"] = rows_old
        state["sidecars"]["vocab.hnsw"] = {
            "bytes": old.stat().st_size,
            "crc": int.from_bytes(old.read_bytes()[-4:], "little"),
        }

    _set_state(live, edit)
    emb = Counting(DIM)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(path, emb) as f:
            assert f.checkpoint_loaded == live.name and emb.take() == []
            assert _graph_bytes(f, tmp_path) == graph and _recalls(f) == before


def test_a_checkpoint_without_the_graph_builds_it_at_open_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier state-5 checkpoint (table, no graph): the graph is built at open, in steps
    with progress, equal to the writer's; the next checkpoint saves it."""
    path = tmp_path / "f"
    before, nearest, graph, words = _written(path, tmp_path)
    live = _live(path)

    def edit(state: dict[str, Any]) -> None:
        del state["vocabulary"]["graph_rows"], state["sidecars"]["vocab.hnsw"]

    _set_state(live, edit)
    (live / "vocab.hnsw").unlink()
    monkeypatch.setattr(field_vocab, "PROGRESS_GRAPH_ROWS", 100)
    calls = _catch_ups(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        with _open(path) as f:
            assert f.checkpoint_loaded == live.name
            ((built, heard),) = calls
            assert built == len(words) and heard[-1] == (len(words), len(words)) and len(heard) > 3
            assert [d for d, _ in heard] == sorted({d for d, _ in heard})
            assert (
                _graph_bytes(f, tmp_path) == graph
                and _nearest(f) == nearest
                and _recalls(f) == before
            )
            f.checkpoint()
    assert (_live(path) / "vocab.hnsw").read_bytes() == graph


def test_a_checkpoint_written_without_the_embedder_carries_the_graph_on(tmp_path: Path) -> None:
    from chitta.field.checkpoint.run import write_checkpoint

    path = tmp_path / "f"
    _written(path, tmp_path)
    saved_graph = (_live(path) / "vocab.hnsw").read_bytes()
    with _open(path) as f:
        f.remember_many(LATER)  # one batch: the open embeds the pending words in the same order
        before, graph = _recalls(f), _graph_bytes(f, tmp_path)
    write_checkpoint(path)  # a view without an embedder: the saved rows and graph, the rest pending
    assert (_live(path) / "vocab.hnsw").read_bytes() == saved_graph
    emb = Counting(DIM)
    with _open(path, emb) as f:
        assert f.stats().records_since_checkpoint == 0 and emb.take()
        assert _graph_bytes(f, tmp_path) == graph and _recalls(f) == before


@pytest.mark.parametrize(
    "damage",
    [
        "flip_link",
        "flip_vector_and_crc",
        "truncate",
        "missing",
        "rows_record",
        "sidecar_record",
        "another_table",
    ],
)
def test_a_damaged_graph_ignores_the_checkpoint_and_changes_nothing(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "f"
    _written(path, tmp_path)
    live = _live(path)
    side = live / "vocab.hnsw"
    data = bytearray(side.read_bytes())
    if damage == "flip_link":
        data[-40] ^= 0x01  # a link near the end: CRC mismatch
        side.write_bytes(bytes(data))
    elif damage == "flip_vector_and_crc":  # a vector unlike its row, the file's own CRC made right
        from chitta.field.checkpoint.format import crc32c

        n = fmt.read_state(live / "state")[1]["vocabulary"]["graph_rows"]
        at = 64 + 10 * n + 5  # inside node 0's vector
        data[at] ^= 0x01
        data[-4:] = crc32c(memoryview(bytes(data))[8:-4]).to_bytes(4, "little")
        side.write_bytes(bytes(data))
        _set_state(
            live,
            lambda s: s["sidecars"]["vocab.hnsw"].update(crc=int.from_bytes(data[-4:], "little")),
        )
    elif damage == "truncate":
        side.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "missing":
        side.unlink()
    elif damage == "rows_record":
        _set_state(
            live, lambda s: s["vocabulary"].update(graph_rows=s["vocabulary"]["graph_rows"] - 1)
        )
    elif damage == "sidecar_record":
        _set_state(live, lambda s: s["sidecars"]["vocab.hnsw"].update(bytes=len(data) + 1))
    elif damage == "another_table":  # a valid graph of another field's words, recorded as this one
        with _open(tmp_path / "g") as g:
            g.remember_many(_texts(80, 9))
            other = tmp_path / "other.hnsw"
            g.core.engine.vocabulary.save_graph(str(other))
        raw = other.read_bytes()
        side.write_bytes(raw)
        _set_state(
            live,
            lambda s: s["sidecars"]["vocab.hnsw"].update(
                bytes=len(raw), crc=int.from_bytes(raw[-4:], "little")
            ),
        )
    store = _store(path)
    with _open(path, read_only=True, load_checkpoint=False) as f:  # what the log alone gives
        replayed = _recalls(f)
    with pytest.warns(CheckpointIgnored, match="vocab.hnsw|word table|graph"):
        f = _open(path, read_only=True)
    with f:
        assert f.checkpoint_loaded is None and _recalls(f) == replayed
    assert _store(path) == store


def test_bad_input_to_the_graph_calls_is_refused(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((200, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    index = _core._WordIndex(8, 50, 64)
    with pytest.raises(InvalidArgument, match="no graph"):
        index.save_graph(str(tmp_path / "none.hnsw"))
    index.add(rows)
    good = tmp_path / "g.hnsw"
    assert index.save_graph(str(good)) == 200
    with pytest.raises(ChittaIOError):
        index.save_graph(str(tmp_path / "no" / "such" / "dir.hnsw"))
    load = _core._WordIndex.load_graph
    with pytest.raises(ChittaIOError):
        load(8, 50, 64, rows, str(tmp_path / "missing.hnsw"))
    with pytest.raises(InvalidArgument):
        load(8, 50, 64, rows.astype(np.float64), str(good))
    with pytest.raises(InvalidArgument):
        load(8, 50, 64, rows[:, :4].copy(), str(good))
    with pytest.raises(InvalidArgument):
        load(8, 50, 64, rows.reshape(-1), str(good))
    with pytest.raises(CorruptionError, match="200 nodes"):
        load(8, 50, 64, rows[:150].copy(), str(good))  # a graph of more rows than the table
    other = rows.copy()
    other[17, 2] = np.nextafter(other[17, 2], np.float32(2))
    with pytest.raises(CorruptionError, match="not that row"):
        load(8, 50, 64, other, str(good))
    with pytest.raises(CorruptionError, match="dim"):
        load(4, 50, 64, rows[:, :4].copy(), str(good))
    (tmp_path / "junk.hnsw").write_bytes(b"not a graph at all")
    with pytest.raises(CorruptionError):
        load(8, 50, 64, rows, str(tmp_path / "junk.hnsw"))
    loaded = load(8, 50, 64, rows, str(good))
    assert len(loaded) == 200 and loaded.has_graph
    table = vocab_format.VocabTable("e", [f"w{i}" for i in range(200)], rows)
    for bad in (0, -1, 201, True, "200", None):
        with pytest.raises(CorruptionError):
            vocab_format.read_graph(good, table, bad)
    # a vocabulary handed an index of another width ignores it and builds its own
    vocab = expand.Vocabulary(lambda w: np.zeros((len(w), 8), np.float32), "e", 8)
    vocab.restore(table.words, rows, (), _core._WordIndex(4, 50, 64))
    assert vocab.unindexed == 200 and vocab.catch_up() == 200 and vocab._graph is not None


def test_at_the_real_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """8,192 + 300 words of a 24-d embedder: saved, loaded without a build, bit for bit."""
    monkeypatch.setattr(expand, "EXACT_WORDS", 8192)
    texts = _texts(1100, 5)
    path = tmp_path / "f"
    with _open(path) as f:
        f.remember_many(texts[:1000])
        f.remember_many(texts[1000:])
        assert len(f.core.engine.vocabulary) > 8192 and f.core.engine.vocabulary._graph is not None
        f.checkpoint()
        nearest, graph = _nearest(f), _graph_bytes(f, tmp_path)
    calls = _catch_ups(monkeypatch)
    with _open(path) as f:
        assert [n for n, _ in calls] in ([], [0])
        assert _graph_bytes(f, tmp_path) == graph and _nearest(f) == nearest
