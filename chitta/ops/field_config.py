"""Field-wide settings carried by the log (chitta's own op, code 66)."""

from __future__ import annotations

from typing import Any, ClassVar

from chitta.ops.base import I64, OpBase, OpType

__all__ = ["CONFIG_KEYS", "ConfigureField"]

CONFIG_KEYS: frozenset[str] = frozenset(
    {
        "embedder",  # {"name", "family", "dim"}: the model every stored vector came from
        "binary_mean",  # f32 LE bytes: the mean subtracted before sign-binarising vectors
        "dense_index",  # "auto" | "exact" | "hamming" | "hnsw": the dense lane's index (Field.set_dense_index)
        "staged_prune_days",  # float >= 0: the write gate's prune age (0: never prune)
        "maintenance_every_s",  # {"<organ>.<pass>": seconds}: cadences replacing the organs' own
        "extract_triplets",  # bool: remember() logs the triplets a memory states (chitta/field/extract_write.py)
        "near_dedup_through_ms",  # int: memories written up to then were checked for near duplicates (chitta/field/near_dedup.py)
    }
)
"""Values of ``ConfigureField.key``."""


class ConfigureField(OpBase, frozen=True, kw_only=True, array_like=True):
    """Set one field-wide setting; a later op for the same key replaces it."""

    op_type: ClassVar[OpType] = OpType.ConfigureField
    enums: ClassVar[dict[str, frozenset[str]]] = {"key": CONFIG_KEYS}

    key: str
    value: Any
    at_ms: I64 = 0
