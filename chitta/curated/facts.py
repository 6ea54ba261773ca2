"""Facts: kinds with their fields, scope tiers, the canonical payload hash, the
rendered block (the one renderer recall, pins and the export share) and the
checks a fact passes before anything is written.

A fact is ``kind`` + ``body`` + ``fields`` (str -> one-line str). Its payload
hash is the SHA-256 of the canonical form: the body NFC-normalised with line
ends stripped, fields sorted by name, encoded as deterministic msgpack. Two
facts with one hash are one fact (a second filing is refused as a duplicate).
"""

from __future__ import annotations

import dataclasses
import hashlib
import unicodedata
from collections.abc import Mapping
from typing import Any

import msgspec

from chitta.curated.paths import TopicPath
from chitta.errors import InvalidArgument

__all__ = [
    "KINDS",
    "SCOPE_TIERS",
    "Capture",
    "Fact",
    "block",
    "canonical_body",
    "check_fields",
    "payload_hash",
    "scope_tier",
]

# kind -> (required fields, optional fields). Field values are one line of text.
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fact": ((), ("source",)),
    "convention": (("applies_to",), ("source",)),
    "pitfall": (("symptom", "fix"), ("source",)),
    "decision": (("rationale",), ("source", "alternatives")),
    "command": (("command",), ("source", "cwd")),
}
# Scope tiers, most specific first: recall orders equal relevance by this index.
SCOPE_TIERS: tuple[str, ...] = ("repository", "project", "global")
MAX_FIELD_CHARS = 300
_ENCODER = msgspec.msgpack.Encoder(order="deterministic")


@dataclasses.dataclass
class Fact:
    """One filed fact as the curated organ holds it."""

    id: str  # ULID
    kind: str
    body: str
    fields: dict[str, str]
    scope: str
    hash: str
    paths: tuple[TopicPath, ...]  # primary first
    provenance: str
    capture: str  # the capture it was filed from
    filed_ms: int
    row: int  # its document id in the organ's keyword index
    superseded_by: str | None = None  # set when superseded or when it lost a dispute
    rendered: bytes | None = None  # its block without a dispute line (a cache, not state)

    @property
    def live(self) -> bool:
        return self.superseded_by is None

    @property
    def primary(self) -> TopicPath:
        return self.paths[0]


def scope_tier(scope: str) -> int:
    return SCOPE_TIERS.index(scope)


def canonical_body(body: str) -> str:
    """NFC, each line's trailing whitespace dropped, outer blank lines dropped."""
    lines = unicodedata.normalize("NFC", body).split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def payload_hash(kind: str, body: str, fields: Mapping[str, str]) -> str:
    value = [kind, canonical_body(body), sorted(fields.items())]
    return hashlib.sha256(_ENCODER.encode(value)).hexdigest()


def check_fields(kind: object, fields: object) -> tuple[str, dict[str, str]]:
    """The kind and its fields when they are legal: every required field present and
    non-empty, no field the kind does not name, each value one line."""
    if not isinstance(kind, str) or kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {sorted(KINDS)}, not {kind!r:.40}")
    required, optional = KINDS[kind]
    if fields is None:
        fields = {}
    if not isinstance(fields, Mapping):
        raise InvalidArgument(
            f"fields must be an object of name: text, not {type(fields).__name__}"
        )
    out: dict[str, str] = {}
    for name, value in fields.items():
        if name not in required and name not in optional:
            raise InvalidArgument(
                f"a {kind} has no field {name!r:.40}; it takes {list(required + optional)}"
            )
        if not isinstance(value, str) or not value.strip():
            raise InvalidArgument(f"field {name!r} must be non-empty text")
        if "\n" in value or len(value) > MAX_FIELD_CHARS:
            raise InvalidArgument(
                f"field {name!r} must be one line of at most {MAX_FIELD_CHARS} characters"
            )
        out[str(name)] = value.strip()
    missing = [n for n in required if n not in out]
    if missing:
        raise InvalidArgument(f"a {kind} needs the field(s) {missing}; give them in fields")
    return kind, dict(sorted(out.items()))


def block(
    fact_id: str,
    kind: str,
    scope: str,
    primary: TopicPath,
    body: str,
    fields: Mapping[str, str],
    disputes: str | None = None,
) -> bytes:
    """A fact's rendered block, UTF-8, ending in a blank line (recall, pins, export)."""
    lines = [f"[{fact_id}] {kind} | {scope} | {primary.render()}", body]
    lines += [f"  {name}: {value}" for name, value in sorted(fields.items())]
    if disputes is not None:
        lines.append(f"  disputes: {disputes}")
    return ("\n".join(lines) + "\n\n").encode()


def block_bound(
    kind: str, scope: str, primary: TopicPath, body: str, fields: Mapping[str, str]
) -> int:
    """The most bytes the fact's block can take (with a dispute line)."""
    return len(block("0" * 26, kind, scope, primary, body, fields, disputes="0" * 26))


def fact_dict(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "kind": fact.kind,
        "body": fact.body,
        "fields": dict(fact.fields),
        "scope": fact.scope,
        "hash": fact.hash,
        "paths": [p.render() for p in fact.paths],
        "provenance": fact.provenance,
        "capture": fact.capture,
        "filed_ms": fact.filed_ms,
        "superseded_by": fact.superseded_by,
    }


@dataclasses.dataclass
class Capture:
    """A candidate fact as captured (durable before anything is derived from it)."""

    id: str
    kind: str
    body: str
    fields: dict[str, str]
    scope: str
    paths: tuple[str, ...]  # paths an operator named (rendered); empty: let nomination decide
    refs: tuple[str, ...]  # "supersedes:<id>" / "disputes:<id>"
    provenance: str
    at_ms: int
