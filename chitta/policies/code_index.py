"""The code indexer: a source tree to code ops (files, symbols, call edges).

``index_code(core, root, project)`` lists the tree's source files (``git
ls-files`` inside a git work tree, else a walk skipping hidden and build
directories), and for each file whose content hash differs from the one the
field holds, parses it (chitta/policies/code_parse.py) and logs, as one atomic
batch per file: UpsertCodeFile, UpsertArtifact (repository root, hash), an
UpsertSymbol for each new or changed symbol (``at_ms`` = the file's mtime) and a
RemoveSymbol for each that disappeared. Files gone from the tree get their
symbols removed and an ``UpsertCodeFile(deleted=True)``. Call edges of the
changed files are then resolved against every symbol of the project (a call via
self/this to the enclosing class, else a unique name in the file, else a unique
name in the project; others are dropped) and diffed against the graph.
The organs only store what these ops carry: replay never parses.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from chitta import ops
from chitta.errors import InvalidArgument
from chitta.ops import Op
from chitta.policies.code_parse import ParsedSymbol, language_of, parse
from chitta.policies.code_trust import CodeState

if TYPE_CHECKING:
    from chitta.field.core import FieldCore

__all__ = ["IndexReport", "index_code", "list_sources"]

SKIP_DIRS = {"node_modules", "build", "dist", "target", "__pycache__", "venv", "site-packages"}
MAX_FILE_BYTES = 4 << 20  # larger sources are skipped (generated code)
EDGE_BATCH = 2000


@dataclass
class IndexReport:
    project: str
    root: str
    files_seen: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    files_skipped: dict[str, str] = field(default_factory=dict)  # path -> why
    symbols_upserted: int = 0
    symbols_removed: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    symbols_total: int = 0
    edges_total: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def list_sources(root: Path) -> list[str]:
    """Source files under ``root`` (POSIX paths relative to it), sorted."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, check=True, timeout=60,
        ).stdout  # fmt: skip
        names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
        return sorted(n for n in names if language_of(n) and (root / n).is_file())
    except (OSError, subprocess.SubprocessError):
        pass
    found: list[str] = []
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for f in files:
            if language_of(f):
                found.append(Path(base, f).relative_to(root).as_posix())
    return sorted(found)


def _inside(root: Path, path: str | os.PathLike[str]) -> str:
    p = Path(path)
    full = (p if p.is_absolute() else root / p).resolve()
    try:
        rel = full.relative_to(root)
    except ValueError:
        raise InvalidArgument(
            f"{path} is outside the project {root}; give a path inside it"
        ) from None
    if not full.is_file():
        raise InvalidArgument(f"{path} is not a file under {root}")
    name = rel.as_posix()
    if language_of(name) is None:
        raise InvalidArgument(
            f"{path}: unknown language (extension {full.suffix or 'none'}); chitta indexes "
            ".py .js .ts .tsx .go .rs .c .h .cc .cpp .hpp and their variants"
        )
    if _is_binary(full.read_bytes()[:8192]):
        raise InvalidArgument(f"{path} is a binary file; index source files only")
    return name


def _changed(old: Any, p: ParsedSymbol) -> bool:
    return (
        old is None
        or old.kind != p.kind
        or (old.line_start, old.line_end) != (p.line_start, p.line_end)
        or old.signature != p.signature
        or old.description != p.doc
        or old.body_hash != p.body_hash
    )


def index_code(
    core: FieldCore,
    root: str | os.PathLike[str],
    project: str | None = None,
    *,
    paths: Iterable[str | os.PathLike[str]] | None = None,
    clear: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> IndexReport:
    """Index ``root`` as ``project`` (default: the directory's name); see the module
    docstring. ``paths``: re-index only these files (each an existing source file inside
    ``root``; files not named are left as they are). ``clear``: log ClearProject first.
    ``progress(path, i, n)`` is called per file."""
    started = time.perf_counter()
    top = Path(root).resolve()
    if not top.is_dir():
        raise InvalidArgument(f"{root} is not a directory; give the project's root directory")
    name = project if project is not None else top.name
    if not isinstance(name, str) or not name.strip() or len(name) > 256:
        raise InvalidArgument(f"project must be a name of 1-256 characters, got {name!r}")
    core.check_writable()
    state = CodeState(core)
    if state.symbols is None or state.files is None or state.calls is None:
        raise InvalidArgument("this field lacks the code organs (symbols, code_files, call_graph)")
    report = IndexReport(project=name, root=str(top))
    # check every explicit path before anything is written (bad input changes nothing)
    only = None if paths is None else [_inside(top, p) for p in paths]
    if clear:
        core.commit(ops.ClearProject(project=name, at_ms=core.now_ms()))
    held = state.files.of_project(name)
    listing = only if only is not None else list_sources(top)
    changed: dict[str, list[ParsedSymbol]] = {}
    for i, rel in enumerate(listing):
        if progress is not None:
            progress(rel, i, len(listing))
        report.files_seen += 1
        full = top / rel
        try:
            data, mtime = full.read_bytes(), int(full.stat().st_mtime * 1000)
        except OSError as exc:
            report.files_skipped[rel] = f"unreadable: {exc.strerror}"
            continue
        if len(data) > MAX_FILE_BYTES or _is_binary(data):
            report.files_skipped[rel] = "binary" if _is_binary(data) else "too large"
            continue
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if rel in held and held[rel].content_hash == digest:
            report.files_unchanged += 1
            continue
        lang = language_of(rel)
        assert lang is not None
        parsed = parse(data, lang)
        changed[rel] = parsed
        _commit_file(core, state, report, name, top, rel, lang, digest, mtime, parsed)
    gone = [] if only is not None else sorted(set(held) - set(listing))
    for rel in gone:
        group: list[Op] = [
            ops.RemoveSymbol(name=s.name, at_ms=core.now_ms()) for s in state.symbols.in_file(rel)
        ]
        report.symbols_removed += len(group)
        group.append(
            ops.UpsertCodeFile(path=rel, project=name, mtime_ms=core.now_ms(), deleted=True)
        )
        core.commit_group(group)
        report.files_removed += 1
    _commit_edges(core, state, report, name, changed)
    report.symbols_total = sum(1 for s in state.symbols.symbols.values() if s.project == name)
    report.edges_total = sum(
        len(state.calls.callees_of(s)) for s, p in state.calls.project.items() if p == name
    )
    report.seconds = time.perf_counter() - started
    if progress is not None:
        progress("", len(listing), len(listing))
    return report


def _commit_file(
    core: FieldCore, state: CodeState, report: IndexReport, project: str, top: Path,
    rel: str, lang: str, digest: str, mtime: int, parsed: list[ParsedSymbol],
) -> None:  # fmt: skip
    assert state.symbols is not None
    old = {s.name: s for s in state.symbols.in_file(rel)}
    group: list[Op] = [
        ops.UpsertCodeFile(
            path=rel, project=project, mtime_ms=mtime, content_hash=digest, language=lang
        ),
        ops.UpsertArtifact(path=rel, repo_root=str(top), content_hash=digest, at_ms=mtime),
    ]
    new: set[str] = set()
    for p in parsed:
        key = f"{rel}#{p.qualname}"
        if key in new:
            continue  # a redefinition (a property setter, an overload): the first one stands
        new.add(key)
        if _changed(old.get(key), p):
            group.append(
                ops.UpsertSymbol(
                    name=key, kind=p.kind, file_path=rel, project=project,
                    line_start=p.line_start, line_end=p.line_end, signature=p.signature,
                    description=p.doc, at_ms=mtime, body_hash=p.body_hash,
                )
            )  # fmt: skip
            report.symbols_upserted += 1
    for key in sorted(set(old) - new):
        group.append(ops.RemoveSymbol(name=key, at_ms=mtime))
        report.symbols_removed += 1
    if core.encoding.enabled:  # the embedding of signature + doc (find_symbol's semantic match)
        group = _with_embeddings(core, group)
    for op in group:
        ops.validate(op)
    core.commit_group(group)
    report.files_changed += 1


def symbol_text(op: ops.UpsertSymbol) -> str:
    """What a symbol's embedding is made from: its qualified name, signature and doc."""
    return " ".join(
        x for x in (op.name.rsplit("#", 1)[-1], op.signature or "", op.description or "") if x
    )


def _with_embeddings(core: FieldCore, group: list[Op]) -> list[Op]:
    ups = [i for i, op in enumerate(group) if isinstance(op, ops.UpsertSymbol)]
    if not ups:
        return group
    vecs = core.encoding.embed([symbol_text(group[i]) for i in ups])  # type: ignore[arg-type]
    out = list(group)
    for i, v in zip(ups, vecs):
        blob = np.ascontiguousarray(v, "<f4").tobytes()
        out[i] = msgspec.structs.replace(group[i], embedding=blob)
    return out


def _commit_edges(
    core: FieldCore,
    state: CodeState,
    report: IndexReport,
    project: str,
    changed: dict[str, list[ParsedSymbol]],
) -> None:
    symbols, calls = state.symbols, state.calls
    assert symbols is not None and calls is not None
    by_short: dict[str, list[str]] = {}
    for key, s in symbols.symbols.items():
        if s.project == project:
            by_short.setdefault(key.rsplit("#", 1)[-1].rsplit(".", 1)[-1], []).append(key)
    group: list[Op] = []
    for rel, parsed in sorted(changed.items()):
        seen: set[str] = set()
        for p in parsed:
            caller = f"{rel}#{p.qualname}"
            if caller in seen or symbols.get(caller) is None:
                continue
            seen.add(caller)
            want = {c for n, via_self in p.calls if (c := _resolve(caller, n, via_self, by_short))}
            want.discard(caller)
            have = set(calls.callees_of(caller))
            for callee in sorted(want - have):
                group.append(ops.AddSymCallEdge(caller=caller, callee=callee, at_ms=core.now_ms()))
                report.edges_added += 1
            for callee in sorted(have - want):
                group.append(
                    ops.RemoveSymCallEdge(caller=caller, callee=callee, at_ms=core.now_ms())
                )
                report.edges_removed += 1
    for i in range(0, len(group), EDGE_BATCH):
        core.commit_group(group[i : i + EDGE_BATCH])


def _resolve(caller: str, name: str, via_self: bool, by_short: dict[str, list[str]]) -> str | None:
    keys = by_short.get(name)
    if not keys:
        return None
    path, _, qual = caller.partition("#")
    if via_self and "." in qual:
        cls = qual.rsplit(".", 1)[0]
        for k in keys:
            if k == f"{path}#{cls}.{name}":
                return k
    local = [k for k in keys if k.startswith(path + "#")]
    if len(local) == 1:
        return local[0]
    return keys[0] if len(keys) == 1 else None
