"""How a field turns texts into vectors and sparse codes.

A policy above the organs: it reads the recorded embedder (settings organ) and
the sparse encoder (encoder organ), chooses and lazily loads the embedder, and
produces the ops that go with new memories:

- the first embedded write of a field also records the embedder
  (``ConfigureField("embedder", {name, family, dim})``) and creates the sparse
  encoder (``UpdateSparseEncoder`` version 0);
- every memory with a vector gets its sparse code (``UpdateSparseCodeU8``, packed,
  stamped with the encoder version) in the same atomic group as its put.

Embedder choice (``embedder=`` of ``chitta.open``): ``"auto"`` (default) uses
``$CHITTA_EMBEDDER`` if set (a recorded name, ``"hashing"``, ``"default"`` or
``"none"``), else the embedder the field recorded, else
``chitta.encode.default_embedder()``; ``None``/``False`` stores no vectors
for texts (callers may still pass their own); an ``Embedder`` instance is used
as given. A field whose recorded family differs from the chosen embedder's is
refused (``EmbedderMismatch``) unless opened with ``reembed=True``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import ops
from chitta.encode.sparse import SparseEncoder
from chitta.encode.sparse_encode import unit_inputs, winners
from chitta.errors import EmbedderMismatch, InvalidArgument
from chitta.ops.code_columns import CodeColumns
from chitta.ops.code_pack import SparseCodeOp, code_ops_of

AUTO = "auto"
# SparseEncoder's defaults (tests/unit/field/test_ingest_batch.py checks they agree)
_N_FEATURES, _ACTIVE, _SEED = 16384, 64, 0


def resolve_embedder(spec: Any, recorded: dict[str, Any] | None) -> Any:
    """An Embedder instance, or None for "no automatic vectors"."""
    from chitta import encode

    if spec is None or spec is False:
        return None
    if not isinstance(spec, str):
        for attr in ("dim", "name", "family", "embed"):
            if not hasattr(spec, attr):
                raise InvalidArgument(
                    f"embedder must be an Embedder, a name, 'auto' or None; {spec!r} has no {attr}"
                )
        return spec
    if spec == AUTO:
        env = os.environ.get("CHITTA_EMBEDDER", "").strip()
        if env:
            spec = env
        elif recorded is not None and not str(recorded.get("name", "")).startswith(
            "caller-supplied"
        ):
            return encode.embedder_from_name(recorded["name"], same_family=True)
        elif recorded is not None:
            return None  # the field holds the caller's own vectors: never mix a model in
        else:
            return encode.default_embedder()
    if spec == "none":
        return None
    if spec == "hashing":
        dim = 384
        if recorded is not None and str(recorded.get("name", "")).startswith("hashing"):
            dim = int(recorded["dim"])
        return encode.HashingEmbedder(dim)
    if spec == "default":
        return encode.default_embedder()
    return encode.embedder_from_name(spec, same_family=True)


class FieldEncoding:
    """The embedder and sparse-code side of a field's write and query paths."""

    def __init__(self, spec: Any, *, recorded: dict[str, Any] | None, reembed: bool) -> None:
        self.embedder = resolve_embedder(spec, recorded)
        self.reembed = reembed
        embedder = self.embedder
        if (
            embedder is not None
            and recorded is not None
            and not reembed
            and recorded.get("family") != embedder.family
        ):
            raise EmbedderMismatch(
                f"this field's vectors come from {recorded.get('name')!r} (family "
                f"{recorded.get('family')!r}); {embedder.name!r} (family "
                f"{embedder.family!r}) would mix incompatible vectors. Open it with that "
                "embedder, with embedder=None, or with reembed=True to re-embed every memory."
            )

    @property
    def enabled(self) -> bool:
        return self.embedder is not None

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.embedder is None:
            raise InvalidArgument("this field has no embedder (opened with embedder=None)")
        return np.asarray(self.embedder.embed(list(texts)), np.float32)

    def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Query vectors (an asymmetric embedder's query side; else as :meth:`embed`)."""
        if self.embedder is None:
            raise InvalidArgument("this field has no embedder (opened with embedder=None)")
        from chitta.encode.base import embed_query

        return embed_query(self.embedder, list(texts))

    def setup_ops(
        self,
        recorded: dict[str, Any] | None,
        encoder: SparseEncoder | None,
        dim: int,
        now_ms: int,
        *,
        from_embedder: bool,
    ) -> list[ops.Op]:
        """Ops a first embedded write must carry (embedder record, encoder creation)."""
        out: list[ops.Op] = []
        if recorded is None:
            if from_embedder and self.embedder is not None:
                value = {"name": self.embedder.name, "family": self.embedder.family, "dim": dim}
            else:  # vectors the caller brought from a model of their own
                value = {
                    "name": f"caller-supplied-d{dim}",
                    "family": f"caller-supplied-d{dim}",
                    "dim": dim,
                }
            out.append(ops.ConfigureField(key="embedder", value=value, at_ms=now_ms))
        if encoder is None:  # the default shape, without building its 24 MiB of atoms
            out.append(
                ops.UpdateSparseEncoder(
                    version=0,
                    dim=dim,
                    n_features=_N_FEATURES,
                    seed=_SEED,
                    active=_ACTIVE,
                    at_ms=now_ms,
                )
            )
        return out


def code_ops(
    encoder: SparseEncoder, ids: Sequence[int], vectors: npt.NDArray[np.float32]
) -> list[SparseCodeOp]:
    """One sparse code op per (id, vector), from the encoder's current version: packed
    (``UpdateSparseCodeU8``, u8 activations; what the field applies is the logged,
    dequantised value) where the code packs, else ``UpdateSparseCode``.
    A zero vector has no code (it matches nothing) and is skipped."""
    cols = code_columns(encoder, ids, vectors)
    return code_ops_of(cols.ids.tolist(), cols.features, cols.activations, encoder.version)


def code_columns(
    encoder: SparseEncoder, ids: Sequence[int], vectors: npt.NDArray[np.float32]
) -> CodeColumns:
    """The encoder's codes (its float32 winners) as arrays: what the background coder
    packs and logs (``chitta.ops.code_pack.logged_columns``: the ops of :func:`code_ops`
    and the values they apply) and hands to the code organs without a tuple of 64
    Python ints per memory."""
    vectors = np.ascontiguousarray(vectors, np.float32)
    keep = np.flatnonzero(vectors.any(axis=1)) if len(vectors) else np.zeros(0, np.intp)
    active = encoder.active
    if not len(keep):
        return CodeColumns(
            ids=np.zeros(0, np.uint64),
            features=np.zeros((0, active), np.uint32),
            activations=np.zeros((0, active), np.float32),
            versions=np.zeros(0, np.uint32),
        )
    # winners only: a code op carries no surprise (SparseEncoder.encode computes it too)
    x = unit_inputs(vectors[keep], encoder.dim, allow_empty=True)
    feats, acts = winners(x, encoder.atoms, encoder.thresholds, active)
    return CodeColumns(
        ids=np.asarray(ids, np.uint64)[keep],
        features=feats.astype(np.uint32),
        activations=np.ascontiguousarray(acts, np.float32),
        versions=np.full(len(keep), encoder.version, np.uint32),
    )
