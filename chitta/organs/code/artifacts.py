"""The artifacts organ: file artifacts (UpsertArtifact) keyed by normalised path.

Per path: its repository root, the latest content hash and the history of hash
changes ``(at_ms, hash)`` (an upsert with the hash already held adds nothing),
so a staleness check can ask whether a file changed after a memory cited it.
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext

__all__ = ["Artifact", "ArtifactsOrgan"]

SIDECAR = "artifacts.rec"
MAGIC = b"CHITTAAR"
VERSION = 1


class Artifact:
    __slots__ = ("changes", "path", "repo_root")

    def __init__(self, path: str, repo_root: str | None) -> None:
        self.path, self.repo_root = path, repo_root
        self.changes: list[tuple[int, str]] = []  # (at_ms, content hash) when the hash changed

    @property
    def content_hash(self) -> str | None:
        return self.changes[-1][1] if self.changes else None

    def changed_after(self, ms: int) -> int | None:
        """When the content first changed after ``ms`` (a hash change at > ms), else None.
        The first hash ever recorded is the baseline, not a change."""
        for at, _h in self.changes[1:]:
            if at > ms:
                return at
        return None


class ArtifactsOrgan(OrganBase):
    name = "artifacts"
    handles = frozenset({OpType.UpsertArtifact})

    def __init__(self) -> None:
        self.items: dict[str, Artifact] = {}
        self.ignored = 0  # upserts with an empty path

    def apply(self, op: Op) -> None:
        if type(op) is not ops.UpsertArtifact:
            return
        if not op.path:
            self.ignored += 1
            return
        a = self.items.get(op.path)
        if a is None:
            a = self.items[op.path] = Artifact(op.path, op.repo_root)
        if op.repo_root is not None:
            a.repo_root = op.repo_root
        if op.content_hash is not None and op.content_hash != a.content_hash:
            a.changes.append((op.at_ms, op.content_hash))

    def get(self, path: str) -> Artifact | None:
        return self.items.get(path)

    def roots(self) -> set[str]:
        """Every repository root an artifact named."""
        return {a.repo_root for a in self.items.values() if a.repo_root}

    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [
            [a.path, a.repo_root, [list(c) for c in a.changes]]
            for a in sorted(self.items.values(), key=lambda a: a.path)
        ]
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"artifacts": len(rows), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        empty = int(state["artifacts"]) == 0 and SIDECAR not in ctx.sidecars
        for path, root, changes in [] if empty else ctx.read_records(SIDECAR, MAGIC, VERSION):
            a = self.items[str(path)] = Artifact(str(path), None if root is None else str(root))
            a.changes = [(int(at), str(h)) for at, h in changes]
        if len(self.items) != int(state["artifacts"]):
            raise ValueError("artifacts: the sidecar and the state disagree")
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        return {"artifacts": len(self.items), "ignored": self.ignored}
