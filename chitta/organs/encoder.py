"""Encoder organ: the learned sparse encoder's state.

Owns the SparseEncoder, rebuilt only by applying UpdateSparseEncoder ops in
log order (the version-0 op creates it; each later op overwrites the rows it
carries). A concurrent learning step from the same base version that loses the
replay order is skipped (the encoder reports it). Never imports another organ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chitta import ops
from chitta.encode.sparse import SparseEncoder
from chitta.errors import InvalidArgument
from chitta.ops import Op, OpType
from chitta.organs.contract import Maintenance, Operation, RestoreContext, SnapshotContext


class EncoderOrgan:
    name = "encoder"
    handles = frozenset({OpType.UpdateSparseEncoder})
    maintenance: tuple[Maintenance, ...] = ()
    operations: tuple[Operation, ...] = ()

    def __init__(self) -> None:
        self.encoder: SparseEncoder | None = None
        # learning steps not applied: lost a race with another instance's step, or made
        # for another encoder (shape, seed) or past a version gap (never raised: the contract)
        self.skipped = 0

    def apply(self, op: Op) -> None:
        if type(op) is not ops.UpdateSparseEncoder:
            return
        e: ops.UpdateSparseEncoder = op
        if e.version == 0:
            # A new shape (a re-embedded field with another dimension) starts over.
            if self.encoder is None or self.encoder.dim != e.dim:
                self.encoder = SparseEncoder.from_op(e)
            return
        try:
            applied = self.encoder is not None and self.encoder.apply(e)
        except InvalidArgument:
            applied = False
        if not applied:
            self.skipped += 1

    def apply_run(self, op_type: OpType, run: list[Op]) -> None:
        for op in run:
            self.apply(op)

    @property
    def version(self) -> int | None:
        return None if self.encoder is None else self.encoder.version

    # ---- checkpoints (chitta/field/checkpoint) ------------------------------------------------
    def snapshot(self, ctx: SnapshotContext | None = None) -> dict[str, Any]:
        """The version-0 op, the version reached, and the rows learning changed."""
        enc = self.encoder
        if enc is None:
            return {"encoder": None, "skipped": self.skipped}
        updates = enc.updates
        rows = np.flatnonzero(updates).astype(np.uint32)
        return {
            "encoder": {
                "init": ops.encode(enc.init_op()),
                "version": enc.version,
                "rows": rows.astype("<u4").tobytes(),
                "atoms": np.ascontiguousarray(enc.atoms[rows], "<f4").tobytes(),
                "updates": np.ascontiguousarray(updates[rows], "<i8").tobytes(),
                "thresholds": np.ascontiguousarray(enc.thresholds, "<f4").tobytes(),
            },
            "skipped": self.skipped,
        }

    def restore(self, state: dict[str, Any], ctx: RestoreContext | None = None) -> None:
        self.skipped = int(state["skipped"])
        snap = state["encoder"]
        if snap is None:
            return
        init = ops.decode(int(ops.OpType.UpdateSparseEncoder), snap["init"])
        enc = SparseEncoder.from_op(init)  # type: ignore[arg-type]
        rows = np.frombuffer(snap["rows"], "<u4").astype(np.intp)
        atoms = np.frombuffer(snap["atoms"], "<f4").reshape(len(rows), enc.dim)
        updates = np.frombuffer(snap["updates"], "<i8")
        if len(updates) != len(rows) or (len(rows) and int(rows.max()) >= enc.n_features):
            raise ValueError("encoder snapshot rows do not match its shape")
        thresholds = (
            None if snap["thresholds"] is None else np.frombuffer(snap["thresholds"], "<f4")
        )
        if thresholds is not None and len(thresholds) != enc.n_features:
            raise ValueError("encoder snapshot thresholds do not match its shape")
        enc.restore_rows(rows, atoms, updates, int(snap["version"]), thresholds)
        self.encoder = enc

    def stats(self) -> dict[str, Any]:
        return {"version": self.version, "skipped": self.skipped}
