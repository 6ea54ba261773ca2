"""Claude Code's memory layout beside a MEMORY.md: index lines that link topic files.

Claude Code keeps ``MEMORY.md`` as an index, one line per topic,
``- [User role](user_role.md) — what the topic holds``, and the topic itself in that
file, a Markdown body under an optional ``---`` front matter (``name``, ``description``,
``type``). An index entry whose whole text is such a link to a ``.md`` file inside the
MEMORY.md's directory is read through: the memory is the topic (its name and body),
not the index line. A link that leaves the directory, or whose file is missing, stays
an ordinary entry (its text as written).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from chitta.errors import ChittaIOError, InvalidArgument

_LINK = re.compile(
    r"^\[(?P<title>[^\]]+)\]\((?P<target>[^)\s]+\.md)\)\s*(?:[-—–:]+\s*(?P<rest>.*))?$"
)
_FRONT_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*):\s*(?P<value>.*)$")
MAX_TOPIC_BYTES = 1 << 20  # a topic file larger than this is not a memory


@dataclasses.dataclass(frozen=True, slots=True)
class Topic:
    """A topic file an index line links: its path, title and front matter, and the text
    the memory gets (``name: body``, or the index line's description without a body)."""

    file: Path
    title: str
    description: str | None
    type: str | None
    text: str


def resolve(entry_text: str, directory: Path) -> Topic | None:
    """The topic an index entry links, or None when the entry is not such a link (or
    the link leaves ``directory`` or names no file). Raises InvalidArgument for a topic
    file that is not UTF-8 text or is too large, ChittaIOError when it cannot be read."""
    m = _LINK.match(entry_text.strip())
    if m is None:
        return None
    target = (directory / m.group("target")).resolve()
    if directory.resolve() not in target.parents or not target.is_file():
        return None
    try:
        raw = target.read_bytes()
    except OSError as exc:
        raise ChittaIOError(f"cannot read the topic file {target}: {exc}") from exc
    if len(raw) > MAX_TOPIC_BYTES:
        raise InvalidArgument(f"topic file {target} is over {MAX_TOPIC_BYTES} bytes; split it")
    try:
        doc = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(f"topic file {target} is not UTF-8 text: {exc}") from None
    front, body = _front_matter(doc)
    title = front.get("name") or m.group("title").strip()
    description = front.get("description") or (m.group("rest") or "").strip() or None
    body = body.strip()
    text = f"{title}: {body}" if body else f"{title}: {description or m.group('title')}"
    return Topic(target, title, description, front.get("type"), text)


def _front_matter(doc: str) -> tuple[dict[str, str], str]:
    """(keys of a leading ``---`` block, the rest); no block: ({}, doc)."""
    lines = doc.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, doc
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            keys = {}
            for line in lines[1:end]:
                kv = _FRONT_KEY.match(line.strip())
                if kv:
                    keys[kv.group("key").lower()] = kv.group("value").strip().strip("\"'")
            return keys, "\n".join(lines[end + 1 :])
    return {}, doc  # an unclosed block is body text


def folded(text: str) -> str:
    """``text`` up to case, punctuation and whitespace: how write-back recognises a line
    the file already holds ("Deploys need the VPN." and "- deploys need the vpn")."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())
