"""The code-files organ: the files of each indexed project (UpsertCodeFile, ClearProject).

A file is keyed by its path relative to its project root. Per file: project,
mtime, content hash, language. Beside the live table the organ keeps, per path,
the history of content changes ``(mtime_ms, hash)`` and of deletions, which a
ClearProject does not erase: re-indexing after a clear is not a change, and a
staleness check can still tell "the file changed after the memory cited it".
"""

from __future__ import annotations

from typing import Any

from chitta import ops
from chitta.ops import Op, OpType
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext

__all__ = ["CodeFile", "CodeFilesOrgan"]

SIDECAR = "code_files.rec"
MAGIC = b"CHITTACF"
VERSION = 1

DELETED = ""  # the hash a deletion records in a path's history


class CodeFile:
    __slots__ = ("content_hash", "language", "mtime_ms", "path", "project")

    def __init__(
        self, path: str, project: str, mtime_ms: int, content_hash: str | None, language: str | None
    ) -> None:
        self.path, self.project, self.mtime_ms = path, project, mtime_ms
        self.content_hash, self.language = content_hash, language

    def row(self) -> list[Any]:
        return [self.path, self.project, self.mtime_ms, self.content_hash, self.language]


class CodeFilesOrgan(OrganBase):
    name = "code_files"
    handles = frozenset({OpType.UpsertCodeFile, OpType.ClearProject})

    def __init__(self) -> None:
        self.files: dict[str, CodeFile] = {}
        self.history: dict[str, list[tuple[int, str]]] = {}  # path -> (mtime_ms, hash or DELETED)
        self.ignored = 0  # empty paths, deletions of unknown files

    def apply(self, op: Op) -> None:
        if type(op) is ops.UpsertCodeFile:
            self._upsert(op)
        elif type(op) is ops.ClearProject:
            for path in [p for p, f in self.files.items() if f.project == op.project]:
                del self.files[path]

    def _upsert(self, op: ops.UpsertCodeFile) -> None:
        if not op.path:
            self.ignored += 1
            return
        hist = self.history.setdefault(op.path, [])
        if op.deleted:
            if self.files.pop(op.path, None) is None:
                self.ignored += 1
            else:
                hist.append((op.mtime_ms, DELETED))
            return
        self.files[op.path] = CodeFile(
            op.path, op.project, op.mtime_ms, op.content_hash, op.language
        )
        if op.content_hash is not None and (not hist or hist[-1][1] != op.content_hash):
            hist.append((op.mtime_ms, op.content_hash))

    # -- queries ---------------------------------------------------------------------
    def of_project(self, project: str) -> dict[str, CodeFile]:
        return {p: f for p, f in self.files.items() if f.project == project}

    def changed_after(self, path: str, ms: int) -> tuple[int, bool] | None:
        """The first change of ``path`` after ``ms``: (its mtime, whether it was a
        deletion), or None. The first hash a path ever had is its baseline."""
        hist = self.history.get(path, [])
        for i, (at, h) in enumerate(hist):
            if i and at > ms:
                return at, h == DELETED
        return None

    # -- checkpoints -----------------------------------------------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = [
            [path, f.row() if (f := self.files.get(path)) else None, [list(h) for h in hist]]
            for path, hist in sorted(self.history.items())
        ]
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"paths": len(rows), "files": len(self.files), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        empty = int(state["paths"]) == 0 and SIDECAR not in ctx.sidecars
        for path, live, hist in [] if empty else ctx.read_records(SIDECAR, MAGIC, VERSION):
            self.history[str(path)] = [(int(at), str(h)) for at, h in hist]
            if live is not None:
                p, proj, mt, h, lang = live
                self.files[str(p)] = CodeFile(
                    str(p), str(proj), int(mt), None if h is None else str(h),
                    None if lang is None else str(lang),
                )  # fmt: skip
        if len(self.history) != int(state["paths"]) or len(self.files) != int(state["files"]):
            raise ValueError("code_files: the sidecar and the state disagree")
        self.ignored = int(state["ignored"])

    def stats(self) -> dict[str, Any]:
        return {
            "files": len(self.files),
            "projects": len({f.project for f in self.files.values()}),
            "ignored": self.ignored,
        }
