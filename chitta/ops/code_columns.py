"""A run of UpdateSparseCode ops as arrays: replay's path for the sparse codes
of a large field (one op per memory), so that a million codes never become a
million tuples of 64 Python ints.

``decode_code_run`` reads records ``[start, end)`` of a ``SegmentLog.read_new()``
result natively (``_core._decode_sparse_codes``; ``decode_packed_run`` the packed
codes of op 68, ``_core._decode_packed_codes``); records with another feature
count, or that the native reader does not take, are decoded by msgspec and
returned as ops (msgspec raises CorruptionError for damage, as for any op).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta import _core
from chitta.ops import Op, OpType, UpdateSparseCode, decode


@dataclass(frozen=True, slots=True, eq=False)
class CodeColumns:
    """Codes with exactly ``features.shape[1]`` features each, in log order."""

    ids: npt.NDArray[np.uint64]  # (n,)
    features: npt.NDArray[np.uint32]  # (n, active), as written (the op's order)
    activations: npt.NDArray[np.float32]  # (n, active)
    versions: npt.NDArray[np.uint32]  # (n,) encoder_version

    def __len__(self) -> int:
        return len(self.ids)

    def ops(self) -> list[UpdateSparseCode]:
        """The ops the rows stand for (equal to the decoded ones)."""
        acts = self.activations.astype("<f4")
        return [
            UpdateSparseCode(
                id=int(i), features=tuple(f), activations=a.tobytes(), encoder_version=int(v)
            )
            for i, f, a, v in zip(
                self.ids.tolist(), self.features.tolist(), acts, self.versions.tolist()
            )
        ]

    @classmethod
    def from_ops(
        cls, codes: Sequence[UpdateSparseCode], active: int
    ) -> tuple[CodeColumns, list[UpdateSparseCode]]:
        """The reference: (columns of the ops with ``active`` features, the other ops)."""
        take = [
            op for op in codes if len(op.features) == active and len(op.activations) == 4 * active
        ]
        rest = [
            op
            for op in codes
            if not (len(op.features) == active and len(op.activations) == 4 * active)
        ]
        n = len(take)
        feats = np.array([op.features for op in take], np.uint32).reshape(n, active)
        acts = (
            np.frombuffer(b"".join(op.activations for op in take), "<f4")
            .astype(np.float32)
            .reshape(n, active)
        )
        return cls(
            ids=np.fromiter((op.id for op in take), np.uint64, n),
            features=feats,
            activations=acts,
            versions=np.fromiter((op.encoder_version for op in take), np.uint32, n),
        ), rest


def decode_code_run(
    result: Any, start: int, end: int, active: int
) -> tuple[CodeColumns, list[tuple[int, UpdateSparseCode]]]:
    """Records ``[start, end)`` (all UpdateSparseCode): the codes with ``active``
    features as columns, and ``(record index, op)`` for the others, in order."""
    ids, feats, acts, versions, fallback = _core._decode_sparse_codes(result, start, end, active)
    others: list[tuple[int, UpdateSparseCode]] = [
        (i, decode(OpType.UpdateSparseCode, result.payload(i)))  # type: ignore[misc]
        for i in fallback
    ]
    return CodeColumns(ids, feats, acts, versions), others


def decode_packed_run(
    result: Any, start: int, end: int, active: int
) -> tuple[CodeColumns, list[tuple[int, Op]]]:
    """``decode_code_run`` for records ``[start, end)`` that are all UpdateSparseCodeU8
    (op 68), dequantised natively exactly as the op's ``activations`` is
    (``chitta.ops.code_pack.packed_columns`` is the reference). The records the
    native reader does not take (another width, damage, what ``validate`` refuses)
    come back as ``(record index, op)``, decoded by msgspec."""
    ids, feats, acts, versions, fallback = _core._decode_packed_codes(result, start, end, active)
    others: list[tuple[int, Op]] = [
        (i, decode(OpType.UpdateSparseCodeU8, result.payload(i))) for i in fallback
    ]
    return CodeColumns(ids, feats, acts, versions), others
