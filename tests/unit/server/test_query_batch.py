"""Query embeddings batched across threads (chitta/server/query_batch.py): each caller
gets exactly the rows the embedder gives its texts (the oracle: the embedder called
directly), errors reach every caller of the batch, other attributes are the model's."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from chitta.encode import HashingEmbedder, embed_query
from chitta.errors import InvalidArgument
from chitta.server.query_batch import BatchedQueries


def test_concurrent_callers_get_their_own_rows() -> None:
    inner = HashingEmbedder()
    batched = BatchedQueries(inner)
    assert batched.name == inner.name and batched.dim == inner.dim
    asks = [[f"query {i} about the linker"] * (1 + i % 3) for i in range(40)]
    got: dict[int, Any] = {}
    start = threading.Barrier(8)

    def worker(w: int) -> None:
        start.wait()
        for i in range(w, len(asks), 8):
            got[i] = batched.embed_query(asks[i])

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, texts in enumerate(asks):
        assert np.array_equal(got[i], embed_query(inner, texts))
    assert batched.texts == sum(map(len, asks)) and batched.calls <= len(asks)


def test_primed_queries_are_one_model_call_and_each_is_taken_once() -> None:
    inner = HashingEmbedder()
    batched = BatchedQueries(inner)
    texts = [f"primed query {i}" for i in range(6)]
    batched.prime(texts + texts[:2])  # duplicates embedded once
    assert batched.calls == 1 and batched.texts == 6
    for text in texts:
        assert np.array_equal(batched.embed_query([text]), embed_query(inner, [text]))
    assert batched.calls == 1  # every row came from the primed batch
    batched.embed_query([texts[0]])  # taken already: the model again
    assert batched.calls == 2


class _Failing(HashingEmbedder):
    def embed(self, texts: Any) -> Any:
        raise InvalidArgument("the model is gone; reopen the field")


def test_an_embedder_error_reaches_the_caller() -> None:
    batched = BatchedQueries(_Failing())
    with pytest.raises(InvalidArgument, match="model is gone"):
        batched.embed_query(["x"])
    with pytest.raises(InvalidArgument):  # the lead was given back: the next call runs
        batched.embed_query(["y"])


def test_the_default_model_gives_a_query_the_same_vector_alone_or_in_a_batch() -> None:
    """The premise of batching queries: the batch changes no vector (chitta's ONNX MiniLM)."""
    pytest.importorskip("onnxruntime")
    from chitta.encode import default_embedder

    try:
        model = default_embedder()
        model.load()
    except Exception as exc:  # noqa: BLE001  no model package installed here
        pytest.skip(f"default model unavailable: {exc}")
    queries = ["why", "what does the flaky linker test do on two cores", "deploy rollback"]
    together = embed_query(model, queries)
    alone = np.stack([embed_query(model, [q])[0] for q in queries])
    assert np.array_equal(together, alone)
