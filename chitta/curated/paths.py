"""Topic paths: the typed tuple a fact is filed under, with one renderer.

A path is ``TopicPath(domain, topic)``; ``topic=None`` names the domain itself
(used when declaring a domain). Names are short lowercase slugs. ``render`` is
the only way a path becomes text and ``parse`` the only way text becomes a path,
so the catalog, the log, the export tree and every door spell a path alike.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from chitta.errors import InvalidArgument

__all__ = ["NAME_PATTERN", "TopicPath", "parse", "parse_topic"]

NAME_PATTERN = "[a-z0-9][a-z0-9_-]{0,47}"
_NAME = re.compile(NAME_PATTERN)
_SEP = "/"


class TopicPath(NamedTuple):
    """``domain`` or ``domain/topic``: a place in the closed vocabulary."""

    domain: str
    topic: str | None = None

    def render(self) -> str:
        """The one text form of a path: ``domain`` or ``domain/topic``."""
        return self.domain if self.topic is None else f"{self.domain}{_SEP}{self.topic}"

    @property
    def is_topic(self) -> bool:
        return self.topic is not None

    def parent(self) -> TopicPath:
        return TopicPath(self.domain)


def _name(value: str, what: str, text: str) -> str:
    if not _NAME.fullmatch(value):
        raise InvalidArgument(
            f"{what} {value!r:.60} in path {text!r:.80} is not a name: use 1-48 of a-z, 0-9, "
            "'_' and '-', starting with a letter or digit (e.g. 'build/cache')"
        )
    return value


def parse(text: object) -> TopicPath:
    """``"domain"`` or ``"domain/topic"`` as a TopicPath; InvalidArgument otherwise."""
    if isinstance(text, TopicPath):
        return text
    if not isinstance(text, str):
        raise InvalidArgument(
            f"a topic path is a str like 'domain/topic', not {type(text).__name__}"
        )
    parts = text.split(_SEP)
    if len(parts) > 2:
        raise InvalidArgument(f"topic path {text!r:.80} has {len(parts)} parts; use 'domain/topic'")
    domain = _name(parts[0], "domain", text)
    topic = _name(parts[1], "topic", text) if len(parts) == 2 else None
    return TopicPath(domain, topic)


def parse_topic(text: object) -> TopicPath:
    """A path that names a topic (``domain/topic``): where facts are filed."""
    path = parse(text)
    if path.topic is None:
        raise InvalidArgument(
            f"{path.render()!r} names a domain; facts are filed under 'domain/topic'"
        )
    return path
