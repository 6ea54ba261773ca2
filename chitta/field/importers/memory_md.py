"""Sync a Claude Code ``MEMORY.md`` with a field, both ways.

Import: every entry a person wrote (a bullet ``- ...`` / ``* ...`` / ``1. ...``
with its indented continuation lines, or a paragraph) becomes one memory with
``source_tool="memory-md"`` and ``meta = {"source": "MEMORY.md", "provenance":
"human", "file": <absolute path>, "heading": <nearest heading or None>,
"content_hash": <sha256 of the whitespace-normalised text>}``, and the session of its
file and heading (``session_of``: session-aware encoding, as every write path). Import is
idempotent by that hash: an entry whose hash a live MEMORY.md memory already
carries adds nothing. An edited line has a new hash and becomes a new memory
(the old one stays until forgotten); a memory forgotten in the field while its
line stays in the file comes back on the next sync (the file is the person's).

Claude Code's layout: an index entry that is a link to a topic file beside the
MEMORY.md (``- [User role](user_role.md) — ...``) imports the topic file (its name and
body; front matter into meta) instead of the line (chitta/field/importers/memory_topics.py).

Write-back: between ``<!-- chitta:begin -->`` and ``<!-- chitta:end -->`` (added
at the end of the file when absent) go the field's top memories by strength,
then confidence, then recency, one ``- text`` line each, whole lines only,
within ``budget_bytes``; memories imported from this same file (or carrying
the hash of one of its entries, or saying what an entry says up to case and
punctuation) are left out. Text outside the markers is kept
byte for byte; the file is replaced atomically (temp file + rename).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta.errors import ChittaIOError, InvalidArgument
from chitta.field.importers.memory_topics import Topic, folded, resolve

if TYPE_CHECKING:
    from chitta.field import Field

BEGIN = "<!-- chitta:begin -->"
END = "<!-- chitta:end -->"
SOURCE = "MEMORY.md"
SOURCE_TOOL = "memory-md"
DEFAULT_BUDGET = 2048
MAX_BUDGET = 1 << 20
_BATCH = 64

_BULLET = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


@dataclasses.dataclass(frozen=True, slots=True)
class Entry:
    text: str  # as the person wrote it
    heading: str | None
    topic: Topic | None = None  # the topic file an index line links (memory_topics.py)

    @property
    def memory_text(self) -> str:
        return self.topic.text if self.topic is not None else self.text

    @property
    def content_hash(self) -> str:
        return content_hash(self.memory_text)


@dataclasses.dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync did."""

    path: str
    entries: int  # entries found in the person's text
    imported: int  # new memories written
    already_present: int  # entries whose hash the field already holds
    imported_ids: tuple[int, ...]
    written: int  # memories written into the chitta section
    section_bytes: int  # bytes of those lines
    left_out: int  # candidates that did not fit the budget

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def content_hash(text: str) -> str:
    """sha256 of the text with runs of whitespace folded to one space (hex, 32 chars)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:32]


def split_markers(doc: str) -> tuple[str, str | None, str]:
    """(before, section or None, after): the text around the chitta section.
    Raises InvalidArgument for unpaired or repeated markers."""
    nb, ne = doc.count(BEGIN), doc.count(END)
    if nb == ne == 0:
        return doc, None, ""
    if nb != 1 or ne != 1 or doc.index(BEGIN) > doc.index(END):
        raise InvalidArgument(
            f"MEMORY.md must hold one {BEGIN} followed by one {END} (found {nb} and {ne})"
        )
    b = doc.index(BEGIN)
    e = doc.index(END) + len(END)
    return doc[:b], doc[b:e], doc[e:]


def parse(text: str) -> list[Entry]:
    """The entries a person wrote (the chitta section excluded)."""
    before, _, after = split_markers(text)
    entries: list[Entry] = []
    heading: str | None = None
    current: list[str] = []
    fence: list[str] | None = None

    def close() -> None:
        if current:
            joined = " ".join(s.strip() for s in current).strip()
            if joined:
                entries.append(Entry(joined, heading))
            current.clear()

    for line in (before + "\n" + after).splitlines():
        if fence is not None:
            fence.append(line)
            if _FENCE.match(line):
                entries.append(Entry("\n".join(fence), heading))
                fence = None
            continue
        if _FENCE.match(line):
            close()
            fence = [line]
            continue
        if not line.strip() or line.strip().startswith("<!--"):
            close()
            continue
        h = _HEADING.match(line)
        if h:
            close()
            heading = h.group(2) or None
            continue
        b = _BULLET.match(line)
        if b:
            close()
            current.append(b.group(1))
        else:
            current.append(line)  # a paragraph line, or a bullet's continuation
    if fence is not None:
        entries.append(Entry("\n".join(fence), heading))
    close()
    return entries


def session_of(file: str, heading: str | None) -> str:
    """The session of a file's entries under one heading: its entries are encoded with the ones
    before them, as every session write is (chitta/field/sessions.py). Named by a hash of the
    file's path and the heading (a path may be longer than a session name may be)."""
    digest = hashlib.sha256(f"{file}\0{heading or ''}".encode()).hexdigest()[:16]
    return f"memory-md:{digest}"


def _memory_items(entries: list[Entry], file: str) -> list[dict[str, Any]]:
    items = []
    for e in entries:
        meta: dict[str, Any] = {
            "source": SOURCE,
            "provenance": "human",
            "file": file,
            "heading": e.heading,
            "content_hash": e.content_hash,
        }
        tags = ["memory-md"]
        if e.topic is not None:
            meta.update(
                topic_file=str(e.topic.file),
                title=e.topic.title,
                description=e.topic.description,
                type=e.topic.type,
            )
            if e.topic.type:
                tags.append(f"memory-md:{e.topic.type}")
        items.append(
            {
                "text": e.memory_text,
                "source_tool": SOURCE_TOOL,
                "tags": tags,
                "meta": meta,
                "session": session_of(file, e.heading),
            }
        )
    return items


def _already_written(entries: list[Entry]) -> set[str]:
    """What the person's text already says, up to case and punctuation (write-back skips
    a memory that says the same): each entry, and a topic's title and description."""
    out = set()
    for e in entries:
        out.add(folded(e.text))
        out.add(folded(e.memory_text))
        if e.topic is not None:
            out.update(folded(x) for x in (e.topic.title, e.topic.description or "") if x)
    return out


def _section(
    field: Field,
    exclude_file: str,
    exclude_hashes: set[str],
    exclude_folded: set[str],
    budget: int,
    newline: str,
) -> tuple[str, int, int, int]:
    candidates = []
    for m in field.memories():
        meta = m.meta or {}
        if meta.get("source") == SOURCE and meta.get("file") == exclude_file:
            continue
        if meta.get("content_hash") in exclude_hashes or content_hash(m.text) in exclude_hashes:
            continue
        if folded(m.text) in exclude_folded:  # the file says it already, up to case and punctuation
            continue
        candidates.append(m)
    candidates.sort(
        key=lambda m: (-m.strength, -m.confidence, -max(m.updated_ms, m.created_ms), m.id)
    )
    lines: list[str] = []
    used = 0
    for m in candidates:
        line = "- " + " ".join(m.text.split()) + newline
        size = len(line.encode("utf-8"))
        if used + size > budget:
            continue
        lines.append(line)
        used += size
    body = (newline + "".join(lines)) if lines else newline
    return BEGIN + body + END, len(lines), used, len(candidates) - len(lines)


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sync(
    field: Field, path: str | os.PathLike[str], *, budget_bytes: int = DEFAULT_BUDGET
) -> SyncReport:
    """Import the entries of the MEMORY.md at ``path`` into ``field`` (idempotent),
    then rewrite its chitta section with what the field knows (see the module doc).
    A missing file is created (its parent must exist)."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise InvalidArgument(f"path must be a str or path, not {type(path).__name__}")
    if (
        isinstance(budget_bytes, bool)
        or not isinstance(budget_bytes, int)
        or not 0 <= budget_bytes <= MAX_BUDGET
    ):
        raise InvalidArgument(f"budget_bytes must be an int between 0 and {MAX_BUDGET}")
    p = Path(path).expanduser().absolute()
    if p.is_dir():
        raise InvalidArgument(f"{p} is a directory, not a MEMORY.md file")
    if not p.parent.is_dir():
        raise InvalidArgument(f"{p.parent} does not exist")
    try:
        raw = p.read_bytes() if p.exists() else b""
    except OSError as exc:
        raise ChittaIOError(f"cannot read {p}: {exc}") from exc
    try:
        doc = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"{p} is not UTF-8 text: {exc}") from None
    before, section, after = split_markers(doc)
    entries = [dataclasses.replace(e, topic=resolve(e.text, p.parent)) for e in parse(doc)]
    file = str(p)
    # Validate everything before the first write: a bad entry leaves the field unchanged.
    from chitta.ops import checks as _validate

    for e in entries:
        _validate.text(e.memory_text)
    known = {
        (m.meta or {}).get("content_hash")
        for m in field.memories()
        if (m.meta or {}).get("source") == SOURCE
    }
    fresh: list[Entry] = []
    seen: set[str] = set()
    for e in entries:
        h = e.content_hash
        if h not in known and h not in seen:
            fresh.append(e)
        seen.add(h)
    ids: list[int] = []
    items = _memory_items(fresh, file)
    for i in range(0, len(items), _BATCH):
        ids.extend(field.remember_many(items[i : i + _BATCH]))

    newline = "\r\n" if "\r\n" in doc else "\n"
    block, written, used, left_out = _section(
        field, file, seen, _already_written(entries), budget_bytes, newline
    )
    if section is None:
        sep = "" if not before or before.endswith("\n") else newline
        sep += newline if before.strip() else ""
        new_doc = before + sep + block + newline
    else:
        new_doc = before + block + after
    if new_doc != doc:
        if p.exists() and p.read_bytes() != raw:
            raise ChittaIOError(f"{p} changed while syncing; run the sync again")
        try:
            _atomic_write(p, new_doc.encode("utf-8"))
        except OSError as exc:
            raise ChittaIOError(f"cannot write {p}: {exc}") from exc
    return SyncReport(
        path=file,
        entries=len(entries),
        imported=len(ids),
        already_present=len(entries) - len(fresh),
        imported_ids=tuple(ids),
        written=written,
        section_bytes=used,
        left_out=left_out,
    )
