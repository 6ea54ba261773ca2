"""A field opened from a checkpoint adopts the binary codes of codes.bin for its
Hamming pre-filter instead of rebuilding them: the adopted index equals one
built from scratch on the same organ (the oracle), vectors changed after the
checkpoint are coded afresh, and a codes.bin whose content does not fit
(under a valid checksum) is refused like any damaged checkpoint."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import chitta
from chitta.errors import CheckpointIgnored
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint import store
from chitta.organs import recall_index
from chitta.organs.index.hamming import HammingRescoreIndex, binarize

N, DIM = 300, 100  # 100-d: the last code word has padding bits


@pytest.fixture(autouse=True)
def _small_exact_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        recall_index, "EXACT_DENSE_LIMIT", 50
    )  # the Hamming path serves fields above 50


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


def _checkpointed(root: Path) -> list[int]:
    vecs = _vectors(N)
    with chitta.open(root, embedder=None) as f:
        ids = f.remember_many([{"text": f"memory {i}", "embedding": v} for i, v in enumerate(vecs)])
        f.checkpoint()
    return ids


def _open_checkpoint(root: Path) -> chitta.Field:
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointIgnored)
        f = chitta.open(root, read_only=True, embedder=None)
    assert f.checkpoint_loaded is not None
    return f


def _scratch(f: chitta.Field) -> HammingRescoreIndex:
    """The oracle: a Hamming index of the organ's unit rows coded now, in row order."""
    organ = f.core.index
    ref = HammingRescoreIndex(DIM, mean=organ.hamming_mean())
    rows = sorted(organ._row.items(), key=lambda kv: kv[1])
    unit = organ._vecs[[r for _, r in rows]]
    ref.add_coded(
        np.array([m for m, _ in rows], np.uint64), unit, binarize(unit, organ.hamming_mean())
    )
    return ref


def _same_search(
    f: chitta.Field, ref: HammingRescoreIndex, seed: int, *, same_order: bool = True
) -> None:
    """Same Hamming candidates and rescored results as an index that keeps its own copy
    of the rows (the dense lane's refers to its unit matrix). Ties in Hamming distance go
    by insertion order, so where rows were inserted in another order (changed
    after the checkpoint) compare the candidate sets and the exact rescoring."""
    index = f.core.index._ensure_hamming()
    assert len(index) == len(ref)
    n = len(ref)
    for q in _vectors(5, seed):
        q = q / np.linalg.norm(q)
        for c in (40, n) if same_order else (n,):
            got_c, want_c = index.candidate_ids(q, candidates=c), ref.candidate_ids(q, candidates=c)
            assert np.array_equal(got_c, want_c) if same_order else set(got_c) == set(want_c)
            got = index.search(q, 10, f.core.index._vecs, candidates=c)  # rows read in place
            want = ref.search(q, 10, candidates=c)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_open_adopts_codes_bin_equal_to_a_fresh_build(tmp_path: Path) -> None:
    root = tmp_path / "f"
    _checkpointed(root)
    with _open_checkpoint(root) as f:
        assert f.core.index._adopt is not None  # codes.bin read, not yet used
        ref = _scratch(f)
        _same_search(f, ref, seed=1)
        assert f.core.index._adopt is None
        hits = f.recall(vector=_vectors(1, 2)[0], k=5, lanes=("dense",), touch=False)
        assert len(hits) == 5


def test_vectors_changed_after_the_checkpoint_are_coded_afresh(tmp_path: Path) -> None:
    root = tmp_path / "f"
    ids = _checkpointed(root)
    target = _vectors(1, 9)[0]
    with chitta.open(root, embedder=None) as f:
        assert f.checkpoint_loaded is not None
        f.update(ids[7], embedding=target)
        f.forget(ids[8])
        new = f.remember("after the checkpoint", embedding=-target)
        assert len(f.core.index._adopt[2]) >= 1  # the changed rows are no longer adopted
        ref = _scratch(f)
        _same_search(f, ref, seed=3, same_order=False)
        top = f.recall(vector=target, k=1, lanes=("dense",), touch=False)
        assert top[0].id == ids[7]
        assert ids[8] not in f.core.index._hamming and new in f.core.index._hamming


def _saved_codes(root: Path) -> tuple[Path, np.ndarray, np.ndarray, np.ndarray]:
    """The live checkpoint and writable copies of its codes.bin: (live, ids, codes, mean)."""
    live = store.current(root.absolute())
    assert live is not None
    ids, codes, mean = fmt.read_bin(live / "codes.bin")
    return live, ids.copy(), codes.copy(), mean.copy()


def _rewrite_codes(root: Path, codes: np.ndarray, mean: np.ndarray) -> None:
    """Replace codes.bin with ``codes`` under a valid checksum, and record it in
    the state so that only its content can be wrong."""
    live, ids, _old, _mean = _saved_codes(root)
    (live / "codes.bin").unlink()
    info = fmt.write_bin(live / "codes.bin", ids, codes, mean)
    _version, state = fmt.read_state(live / "state")
    state["sidecars"]["codes.bin"] = {
        **info,
        "crc": int.from_bytes((live / "codes.bin").read_bytes()[-4:], "little"),
    }
    fmt.write_state(live / "state", state)


def _assert_rebuilt(root: Path, match: str) -> None:
    with pytest.warns(CheckpointIgnored, match=match):
        f = chitta.open(root, read_only=True, embedder=None)
    with f:
        assert f.checkpoint_loaded is None
        assert len(f.recall(vector=_vectors(1, 4)[0], k=3, lanes=("dense",), touch=False)) == 3


def _bit_past_dim(codes: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes[5, -1] |= np.uint64(1) << np.uint64(63)
    return codes, mean


def _another_width(codes: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([codes, codes[:, :1]], axis=1), mean


def _non_finite_mean(codes: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean[3] = np.nan
    return codes, mean


@pytest.mark.parametrize(
    ("damage", "match"),
    [(_bit_past_dim, "past dim"), (_another_width, "words"), (_non_finite_mean, "NaN")],
    ids=["bits-past-dim", "another-width", "non-finite-mean"],
)
def test_codes_bin_whose_content_does_not_fit_is_refused(
    tmp_path: Path,
    damage: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    match: str,
) -> None:
    root = tmp_path / "f"
    _checkpointed(root)
    _live, _ids, codes, mean = _saved_codes(root)
    _rewrite_codes(root, *damage(codes, mean))
    _assert_rebuilt(root, match)


def test_add_coded_refuses_bad_input_and_changes_nothing() -> None:
    index = HammingRescoreIndex(DIM)
    rows = _vectors(3)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    codes = np.zeros((3, 2), np.uint64)
    with pytest.raises(chitta.errors.InvalidArgument, match="mean"):
        index.add_coded([1, 2, 3], rows, codes)  # no mean fixed yet
    index.set_mean(np.zeros(DIM, np.float32))
    with pytest.raises(chitta.errors.InvalidArgument):
        index.add_coded([1, 2, 3], rows, codes[:2])
    with pytest.raises(chitta.errors.InvalidArgument):
        index.add_coded([1, 2, 3], rows, codes.astype(np.int64))
    assert len(index) == 0
    index.add_coded([1, 2, 3], rows, codes)
    assert len(index) == 3
