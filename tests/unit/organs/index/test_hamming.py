"""HammingIndex against a numpy reference (bitwise_count + stable argsort)."""

from __future__ import annotations

import os
import subprocess
import sys

import datagen
import numpy as np
import pytest
from _hamming_ref import PAD, hamming_topk, tied_codes

from chitta import _core
from chitta.organs.index import HammingIndex, simd_level
from chitta.organs.index.hamming import PAD_ID, binarize

LEVELS = [lv for lv in ("generic", "avx2", "avx512") if _core._hamming_simd_supported(lv)]
BITS = [64, 128, 192, 256, 512]


@pytest.fixture
def restore_simd():
    before = simd_level()
    yield
    _core._hamming_force_simd({"avx512_vpopcntdq": "avx512"}.get(before, before))


def build(bits: int, n: int, seed: int, remove_frac: float = 0.2):
    """An index with many ties and some removals, and the (ids, codes) it should hold."""
    rng = np.random.default_rng(seed)
    words = bits // 64
    ids = rng.permutation(10 * n).astype(np.uint64)[:n]
    codes = tied_codes(n, words, rng)
    index = HammingIndex(bits)
    for lo in range(0, n, 700):  # several batches
        index.add(ids[lo : lo + 700], codes[lo : lo + 700])
    gone = rng.random(n) < remove_frac
    index.remove(ids[gone])
    return index, ids[~gone], codes[~gone], rng


@pytest.mark.parametrize("bits", BITS)
def test_search_equals_numpy_reference(bits):
    index, ids, codes, rng = build(bits, 3000, seed=bits)
    queries = np.concatenate([codes[:5], tied_codes(5, bits // 64, rng)])
    for k in (1, 10, 400):
        got_ids, got_d = index.search(queries, k)
        want_ids, want_d = hamming_topk(ids, codes, queries, k)
        np.testing.assert_array_equal(got_d, want_d)
        np.testing.assert_array_equal(got_ids, want_ids)


@pytest.mark.parametrize("bits", BITS)
def test_all_kernels_bit_identical(bits, restore_simd):
    index, ids, codes, rng = build(bits, 2500, seed=7 + bits)
    queries = np.concatenate([codes[:4], rng.integers(0, 2**64, (4, bits // 64), dtype=np.uint64)])
    results = {}
    for level in LEVELS:
        _core._hamming_force_simd(level)
        results[level] = index.search(queries, 50)
    want = hamming_topk(ids, codes, queries, 50)
    for level, (got_ids, got_d) in results.items():
        np.testing.assert_array_equal(got_ids, want[0], err_msg=level)
        np.testing.assert_array_equal(got_d, want[1], err_msg=level)


def test_force_level_changes_simd_level(restore_simd):
    names = {"generic": "generic", "avx2": "avx2", "avx512": "avx512_vpopcntdq"}
    for level in LEVELS:
        _core._hamming_force_simd(level)
        assert simd_level() == names[level]


@pytest.mark.parametrize("env, want", [("generic", "generic"), ("avx2", "avx2"), ("bogus", None)])
def test_env_override_lowers_level(env, want, tmp_path):
    # cwd: not the repo root, where `python -c` would import the source tree
    code = "from chitta.organs.index import simd_level; print(simd_level())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "CHITTA_SIMD": env},
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    if want is None:  # unknown value: ignored
        want = subprocess.run(
            [sys.executable, "-c", code],
            env={k: v for k, v in os.environ.items() if k != "CHITTA_SIMD"},
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
        ).stdout.strip()
    if want == "avx2" and "avx2" not in LEVELS:
        want = "generic"
    assert out == want


def test_single_query_gives_1d_results():
    index, _ids, codes, _ = build(256, 500, seed=3)
    one_ids, one_d = index.search(codes[3], 5)
    many_ids, many_d = index.search(codes[3:4], 5)
    assert one_ids.shape == (5,) and one_d.dtype == np.uint32
    np.testing.assert_array_equal(one_ids, many_ids[0])
    np.testing.assert_array_equal(one_d, many_d[0])


def test_short_result_is_padded():
    index = HammingIndex(128)
    index.add(np.array([5, 6], dtype=np.uint64), np.zeros((2, 2), dtype=np.uint64))
    ids, dist = index.search(np.zeros(2, dtype=np.uint64), 4)
    assert ids.tolist() == [5, 6, PAD_ID, PAD_ID]
    assert dist.tolist() == [0, 0, 129, 129]
    assert PAD == PAD_ID


def test_empty_index_search_is_all_padding():
    ids, dist = HammingIndex(64).search(np.zeros((2, 1), dtype=np.uint64), 3)
    assert (ids == PAD).all() and (dist == 65).all()


def test_random_ops_match_python_model():
    rng = np.random.default_rng(42)
    index = HammingIndex(192)
    model_ids: list[int] = []
    model_codes: list[np.ndarray] = []
    next_id = 0
    for _ in range(400):
        op = rng.integers(0, 3)
        if op == 0 or not model_ids:
            n = int(rng.integers(1, 30))
            new_ids = np.arange(next_id, next_id + n, dtype=np.uint64)
            next_id += n
            new_codes = rng.integers(0, 8, size=(n, 3), dtype=np.uint64)
            index.add(new_ids, new_codes)
            model_ids += new_ids.tolist()
            model_codes += list(new_codes)
        elif op == 1:
            pick = sorted(set(rng.integers(0, len(model_ids), size=3).tolist()), reverse=True)
            index.remove(np.array([model_ids[p] for p in pick], dtype=np.uint64))
            for p in pick:
                del model_ids[p], model_codes[p]
        else:
            q = rng.integers(0, 8, size=(2, 3), dtype=np.uint64)
            k = int(rng.integers(1, 40))
            want = hamming_topk(np.array(model_ids, dtype=np.uint64), np.array(model_codes), q, k)
            got = index.search(q, k)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
        assert len(index) == len(model_ids)
    assert index.ids().tolist() == model_ids


def test_readded_id_goes_last_in_tie_order():
    index = HammingIndex(64)
    index.add(np.array([1, 2, 3], dtype=np.uint64), np.zeros((3, 1), dtype=np.uint64))
    index.remove([1])
    index.add([1], np.zeros((1, 1), dtype=np.uint64))
    assert index.search(np.zeros(1, dtype=np.uint64), 3)[0].tolist() == [2, 3, 1]


def test_contains_and_len():
    index = HammingIndex(64)
    index.add(np.array([7, 2**64 - 2], dtype=np.uint64), np.ones((2, 1), dtype=np.uint64))
    assert len(index) == 2
    assert 7 in index and np.uint64(7) in index and 2**64 - 2 in index
    assert 8 not in index and -1 not in index and "7" not in index and 2**70 not in index
    index.remove(np.array([7], dtype=np.uint64))
    assert 7 not in index and len(index) == 1


def test_memory_bytes_grows_with_codes():
    index = HammingIndex(256)
    empty = index.memory_bytes()
    index.add(np.arange(10000, dtype=np.uint64), np.zeros((10000, 4), dtype=np.uint64))
    assert index.memory_bytes() - empty >= 10000 * (32 + 8)


@pytest.mark.parametrize("dim", [256, 70, 64, 1])
def test_binarize_equals_datagen_sign_codes(dim):
    x = datagen.clustered_vectors(300, dim, n_clusters=10)
    mean = x.mean(axis=0)
    np.testing.assert_array_equal(binarize(x, mean), datagen.sign_codes(x, mean))
    np.testing.assert_array_equal(binarize(x), datagen.sign_codes(x))


def test_distances_equal_faiss_binary_flat():
    """A second, independent implementation: faiss IndexBinaryFlat (when installed)."""
    faiss = pytest.importorskip("faiss")
    index, ids, codes, rng = build(256, 4000, seed=99, remove_frac=0.0)
    ref = faiss.IndexBinaryFlat(256)
    ref.add(codes.view(np.uint8))
    queries = rng.integers(0, 2**64, (6, 4), dtype=np.uint64)
    want_d, _ = ref.search(queries.view(np.uint8), 100)
    got_ids, got_d = index.search(queries, 100)
    np.testing.assert_array_equal(got_d, want_d)
    # Each returned id really is at the distance reported.
    pos = {int(i): p for p, i in enumerate(ids)}
    for r in range(len(queries)):
        rows = [pos[int(i)] for i in got_ids[r]]
        np.testing.assert_array_equal(
            np.bitwise_count(codes[rows] ^ queries[r]).sum(axis=1), got_d[r]
        )


def test_searches_in_threads_while_adding():
    """Search releases the GIL; concurrent add/search stay consistent (lock in the core)."""
    from concurrent.futures import ThreadPoolExecutor

    index, ids, codes, _ = build(256, 2000, seed=5, remove_frac=0.0)
    q = codes[:4]
    want = index.search(q, 20)

    def searcher() -> None:
        for _ in range(50):
            got = index.search(q, 20)
            # Adds only append far codes (all ones), so the top-20 never changes.
            np.testing.assert_array_equal(got[0], want[0])

    far = np.full((1, 4), 2**64 - 1, dtype=np.uint64)
    with ThreadPoolExecutor(max_workers=2) as pool:
        searches = [pool.submit(searcher) for _ in range(2)]
        for i in range(200):
            index.add(np.array([10**9 + i], dtype=np.uint64), far)
    for search in searches:
        search.result()  # a searcher's failure is raised here
    assert len(index) == len(ids) + 200
