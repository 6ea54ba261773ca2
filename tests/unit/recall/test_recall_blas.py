"""chitta.recall.blas: recall's BLAS products on one thread, the same numbers."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from chitta.recall import blas

needs_openblas = pytest.mark.skipif(
    not blas.available(), reason="numpy is not linked to an OpenBLAS found here"
)


def threads() -> list[int]:
    assert blas._SETTERS is not None
    return [get() for _set, get in blas._SETTERS]


@needs_openblas
def test_one_thread_inside_and_the_old_count_after() -> None:
    before = threads()
    with blas.one_thread():
        assert threads() == [1] * len(before)
        with blas.one_thread():  # nested
            assert threads() == [1] * len(before)
        assert threads() == [1] * len(before)
    assert threads() == before


@needs_openblas
def test_overlapping_blocks_on_two_threads_restore_the_count_once_both_end() -> None:
    before = threads()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with blas.one_thread():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    with blas.one_thread():
        t.start()
        assert inside.wait(10)
    assert threads() == [1] * len(before)  # the other block is still open
    release.set()
    t.join(10)
    assert threads() == before


@needs_openblas
def test_an_exception_inside_restores_the_count() -> None:
    before = threads()
    with pytest.raises(ZeroDivisionError), blas.one_thread():
        1 / 0  # noqa: B018
    assert threads() == before


def test_products_are_bit_for_bit_the_same_on_one_thread() -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((20_000, 384)).astype(np.float32)
    atoms = rng.standard_normal((16_384, 384)).astype(np.float32)
    q = rng.standard_normal(384).astype(np.float32)
    many = (vecs @ q, q[None, :] @ atoms.T)
    with blas.one_thread():
        one = (vecs @ q, q[None, :] @ atoms.T)
    for a, b in zip(many, one):
        assert np.array_equal(a, b)
