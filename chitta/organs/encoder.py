"""Encoder organ: the learned sparse encoder's state.

Owns the SparseEncoder, rebuilt only by applying UpdateSparseEncoder ops in
log order (the version-0 op creates it; each later op overwrites the rows it
carries). A concurrent learning step from the same base version that loses the
replay order is skipped (the encoder reports it). Never imports another organ.
"""

from __future__ import annotations

from chitta import ops
from chitta.encode.sparse import SparseEncoder
from chitta.ops import Op, OpType


class EncoderOrgan:
    name = "encoder"
    handles = frozenset({OpType.UpdateSparseEncoder})

    def __init__(self) -> None:
        self.encoder: SparseEncoder | None = None
        self.skipped = 0  # learning steps that lost a race with another instance's step

    def apply(self, op: Op) -> None:
        if type(op) is not ops.UpdateSparseEncoder:
            return
        e: ops.UpdateSparseEncoder = op  # type: ignore[assignment]
        if e.version == 0:
            # A new shape (a re-embedded field with another dimension) starts over.
            if self.encoder is None or self.encoder.dim != e.dim:
                self.encoder = SparseEncoder.from_op(e)
            return
        if self.encoder is None or not self.encoder.apply(e):
            self.skipped += 1

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        for op in run:
            self.apply(op)

    @property
    def version(self) -> int | None:
        return None if self.encoder is None else self.encoder.version
