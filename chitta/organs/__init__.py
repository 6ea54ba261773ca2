"""Organs: each owns one kind of state, applies the ops it handles, and
answers its own queries. Organs never import each other; the field routes
replayed and new ops to them by op type through the registry
(:mod:`chitta.organs.registry`). The contract is :mod:`chitta.organs.contract`.
"""

from __future__ import annotations

from chitta.organs.contract import (
    Maintenance,
    Operation,
    Organ,
    OrganBase,
    RestoreContext,
    SnapshotContext,
)

__all__ = ["Maintenance", "Operation", "Organ", "OrganBase", "RestoreContext", "SnapshotContext"]
