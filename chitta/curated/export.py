"""The export tree: what a foreign harness that only reads files can use, and
what a person edits and imports back.

    DIR/CATALOG.md          the catalog (domains, topics, descriptors, counts)
    DIR/fact/<ULID>.md      one file per live fact: a header, then the body
    DIR/index/<d>/<t>.md    per topic path: its facts in recall order without a query
    DIR/MANIFEST.json       format, version, counts, the SHA-256 of every file

A fact file::

    ---
    id: 01J...
    kind: pitfall
    scope: project
    paths: build/cache, build/ci
    provenance: machine
    field.fix: clear ~/.cache/x
    ---
    the body, as many lines as it has

Import reads an edited tree: a fact file whose bytes differ from the manifest and
whose content differs from the stored fact enters as a supersede with human
provenance; a new file (no id) as a new human fact. A tree imported unedited
changes nothing. Every file is parsed and checked before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta.curated import facts as F
from chitta.curated import read_path, ulid
from chitta.curated.paths import TopicPath, parse_topic
from chitta.errors import ChittaIOError, DuplicateFact, InvalidArgument

if TYPE_CHECKING:
    from chitta.organs.curated import CuratedOrgan

__all__ = ["FORMAT", "VERSION", "export_tree", "import_tree", "parse_fact_file", "render_fact_file"]

FORMAT, VERSION = "chitta-curated-export", 1
MANIFEST, CATALOG = "MANIFEST.json", "CATALOG.md"
MAX_FILE_BYTES = 256 * 1024
Progress = Callable[[int, int], None]


def render_fact_file(fact: F.Fact) -> bytes:
    head = [
        "---",
        f"id: {fact.id}",
        f"kind: {fact.kind}",
        f"scope: {fact.scope}",
        f"paths: {', '.join(p.render() for p in fact.paths)}",
        f"provenance: {fact.provenance}",
        *(f"field.{k}: {v}" for k, v in sorted(fact.fields.items())),
        "---",
    ]
    return ("\n".join(head) + "\n" + fact.body + "\n").encode()


def parse_fact_file(data: bytes, where: str) -> dict[str, Any]:
    """A fact file's content, checked (kind and fields, scope, paths' syntax)."""
    if len(data) > MAX_FILE_BYTES:
        raise InvalidArgument(f"{where}: {len(data)} bytes, over {MAX_FILE_BYTES}; shorten it")
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"{where}: not UTF-8 ({exc}); save it as UTF-8") from None
    lines = text.split("\n")
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        raise InvalidArgument(f"{where}: a fact file starts with a '---' header closed by '---'")
    end = lines.index("---", 1)
    head: dict[str, str] = {}
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(": ")
        if not sep:
            raise InvalidArgument(f"{where}: header line {line!r:.60} is not 'key: value'")
        if key.startswith("field."):
            fields[key[6:]] = value
        elif key in ("id", "kind", "scope", "paths", "provenance"):
            head[key] = value.strip()
        else:
            raise InvalidArgument(f"{where}: unknown header {key!r:.40}")
    kind, fields = F.check_fields(head.get("kind", "fact"), fields)
    scope = head.get("scope", "project")
    if scope not in F.SCOPE_TIERS:
        raise InvalidArgument(f"{where}: scope must be one of {list(F.SCOPE_TIERS)}")
    paths = [parse_topic(p.strip()) for p in head.get("paths", "").split(",") if p.strip()]
    if not paths:
        raise InvalidArgument(f"{where}: name at least one topic path in 'paths:'")
    fact_id = head.get("id")
    return {
        "id": None if not fact_id else ulid.check(fact_id, f"{where}: id"),
        "kind": kind,
        "fields": fields,
        "scope": scope,
        "paths": paths,
        "body": F.canonical_body("\n".join(lines[end + 1 :])),
    }


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(root: Path, rel: str, data: bytes, hashes: dict[str, str]) -> None:
    with open(os.path.join(root, rel), "wb") as out:  # directories made beforehand
        out.write(data)
    hashes[rel] = _sha(data)


def _index_file(path: TopicPath, facts: list[F.Fact]) -> bytes:
    lines = [f"# {path.render()}", ""]
    for f in facts:
        first = f.body.split("\n", 1)[0][:120]
        lines.append(f"- [{f.id}](../../fact/{f.id}.md) {f.kind}, {f.scope}: {first}")
    return ("\n".join(lines) + "\n").encode()


def export_tree(
    organ: CuratedOrgan, directory: str | Path, progress: Progress | None = None
) -> dict[str, Any]:
    """Write the tree into ``directory`` (new, empty, or an earlier export, replaced).
    The caller holds the field's lock (``Field.call`` does)."""
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise InvalidArgument(f"{root} is a file; give a directory for the export tree")
    if root.exists() and any(root.iterdir()) and not (root / MANIFEST).is_file():
        raise InvalidArgument(f"{root} is not empty and holds no {MANIFEST}; give a new directory")
    live = [f for f in organ.facts.values() if f.live]
    catalog = read_path.catalog(organ)
    per_path = {p: read_path.rank(organ, [p], "") for p in organ.topics}
    files = [(f"fact/{f.id}.md", render_fact_file(f)) for f in live]
    try:
        for old in ("fact", "index"):
            shutil.rmtree(root / old, ignore_errors=True)
        for sub in ("fact", *(f"index/{d}" for d in organ.domains)):
            (root / sub).mkdir(parents=True, exist_ok=True)
        hashes: dict[str, str] = {}
        _write(root, CATALOG, catalog, hashes)
        total = len(files) + len(per_path)
        for done, (rel, data) in enumerate(files, 1):
            _write(root, rel, data, hashes)
            if progress is not None and (done % 256 == 0 or done == total):
                progress(done, total)
        for done, (path, ranked) in enumerate(sorted(per_path.items()), len(files) + 1):
            _write(root, f"index/{path.domain}/{path.topic}.md", _index_file(path, ranked), hashes)
            if progress is not None:
                progress(done, total)
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "counts": {"domains": len(organ.domains), "topics": len(per_path), "facts": len(files)},
            "files": dict(sorted(hashes.items())),
        }
        (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    except OSError as exc:
        raise ChittaIOError(f"cannot write the export tree at {root}: {exc}") from exc
    return {"directory": str(root), **manifest["counts"]}  # type: ignore[dict-item]


def _read_manifest(root: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except FileNotFoundError:
        raise InvalidArgument(
            f"{root} holds no {MANIFEST}; import a tree `chitta memory export` wrote"
        ) from None
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"{root / MANIFEST} cannot be read ({exc}); export again") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidArgument(f"{root / MANIFEST} is not a {FORMAT} manifest")
    if manifest.get("version") != VERSION or not isinstance(manifest.get("files"), dict):
        raise InvalidArgument(
            f"{root / MANIFEST}: version {manifest.get('version')!r}; this chitta reads {VERSION}"
        )
    return manifest


def import_tree(organ: CuratedOrgan, ctx: Any, directory: str | Path) -> dict[str, Any]:
    """Read an edited tree back (rules in the module docstring)."""
    from chitta.curated import write_path

    root = Path(directory)
    known: dict[str, str] = _read_manifest(root)["files"]
    changes: list[tuple[str, dict[str, Any]]] = []
    unchanged, stale = 0, []
    try:
        names = sorted(p.name for p in (root / "fact").glob("*.md"))
    except OSError as exc:
        raise ChittaIOError(f"cannot list {root / 'fact'}: {exc}") from exc
    for name in names:
        rel = f"fact/{name}"
        try:
            data = (root / rel).read_bytes()
        except OSError as exc:
            raise ChittaIOError(f"cannot read {root / rel}: {exc}") from exc
        if known.get(rel) == _sha(data):
            unchanged += 1
            continue
        got = parse_fact_file(data, rel)
        for p in got["paths"]:
            if p not in organ.topics:
                raise InvalidArgument(f"{rel}: unknown topic path {p.render()!r}; declare it first")
        old = organ.facts.get(got["id"]) if got["id"] else None
        if got["id"] and old is None:
            raise InvalidArgument(
                f"{rel}: no fact {got['id']} in this field; remove the id line to add it"
            )
        if old is not None and not old.live:
            stale.append(old.id)  # superseded since the export: the newer version stands
            continue
        digest = F.payload_hash(got["kind"], got["body"], got["fields"])
        if (
            old is not None
            and digest == old.hash
            and old.scope == got["scope"]
            and list(old.paths) == got["paths"]
        ):
            unchanged += 1
            continue
        if digest in organ.by_hash and (old is None or organ.by_hash[digest] != old.id):
            raise DuplicateFact(f"{rel}: fact {organ.by_hash[digest]} already says this")
        changes.append((rel, got))
    superseded, added = [], []
    for _rel, got in changes:
        capture_id = write_path.capture(
            organ, ctx, body=got["body"], kind=got["kind"], fields=got["fields"],
            scope=got["scope"], paths=[p.render() for p in got["paths"]],
            supersedes=got["id"], provenance="human",
        )  # fmt: skip
        fact = write_path.file_capture(organ, ctx, capture_id)["fact"]
        if got["id"]:
            superseded.append([got["id"], fact])
        else:
            added.append(fact)
    return {"superseded": superseded, "added": added, "unchanged": unchanged, "stale": stale}
