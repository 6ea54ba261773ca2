"""The provenance axis: who wrote a memory, what it may write, how it ranks.

Pure functions (docs/PROVENANCE.md is the reference):

- :func:`normalise`: a provenance as given (``"claude"``, the seed's
  ``"OpenWeightGenerated"``) -> one of ``chitta.ops.PROVENANCES``;
- :func:`infer`: the provenance of a write that names none, from the writer:
  ``meta["provenance"] == "human"`` (the MEMORY.md importer), else the writer's
  name (the MCP client's ``clientInfo.name``, else ``source_tool``) by the markers
  of :data:`WRITER_MARKERS`, first match wins; else ``unknown``;
- :func:`can_write_kind` (the seed's gate): an open-weight-generated writer may not
  write a ``decision`` or a ``code_fact`` directly; :func:`admitted_kind` applies it
  (an explicit kind is refused, an inferred one becomes ``thought``);
- :func:`enters_candidate_band`: open-weight-generated writes always do;
- :func:`weight`: the ranking factor ``provenance`` (chitta/recall/engine.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from chitta.errors import InvalidArgument, ProvenanceRefused
from chitta.ops import PROVENANCES, WITNESS_SIGNALS

__all__ = [
    "CANDIDATE_MULTIPLIER",
    "FORBIDDEN_KINDS",
    "GUARDED_EDGES",
    "PROVENANCE_WEIGHTS",
    "WRITER_MARKERS",
    "admitted_kind",
    "can_write_kind",
    "enters_candidate_band",
    "from_writer",
    "infer",
    "normalise",
    "signal",
    "weight",
]

HUMAN, CLAUDE, CODEX = "human", "claude", "codex"
DISTILLED, GENERATED, UNKNOWN = "open_weight_distilled", "open_weight_generated", "unknown"
OPEN_WEIGHT = frozenset({DISTILLED, GENERATED})

FORBIDDEN_KINDS: Mapping[str, frozenset[str]] = {GENERATED: frozenset({"decision", "code_fact"})}
"""Kinds a provenance may not write directly (the seed: ``can_write_kind``)."""

# Substrings of a lowered writer name, checked in this order (the strictest class first,
# so "claude-via-ollama" is quarantined). An open-weight name with "distil" in it is a
# distiller (it condenses existing memories), any other open-weight name a generator.
_OPEN_WEIGHT = (
    "ollama", "llama", "lmstudio", "lm-studio", "lm studio", "vllm", "localai", "gpt4all",
    "koboldcpp", "mlx", "gguf", "mistral", "mixtral", "qwen", "gemma", "deepseek", "phi-",
    "open-weight", "open_weight", "openweight", "oobabooga", "text-generation-webui",
)  # fmt: skip
WRITER_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("open_weight", _OPEN_WEIGHT),
    (CODEX, ("codex",)),
    (CLAUDE, ("claude",)),
    (HUMAN, ("human", "person", "manual", "memory-md")),
)
"""(class, markers): the writer-name rules of :func:`from_writer`, first match wins."""

PROVENANCE_WEIGHTS: Mapping[str, float] = {
    HUMAN: 1.0,
    CLAUDE: 1.0,
    CODEX: 1.0,
    UNKNOWN: 1.0,  # old records keep their ranking
    DISTILLED: 0.9,
    GENERATED: 0.8,
}
CANDIDATE_MULTIPLIER = 0.75
"""A memory in the candidate band ranks at this share on top of its provenance weight."""

GUARDED_EDGES: frozenset[str] = frozenset(
    {"DerivedFrom", "Supports", "Confirms", "Contradicts", "Supersedes", "AliasOf", "RelatedTo"}
)
"""Edges the laundering guard checks: all but the field's own co-occurrence records
(``CoRetrieved`` by recall, ``SameSession``), which assert nothing about either end."""

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def normalise(value: object, what: str = "provenance") -> str:
    """``value`` as one of ``PROVENANCES`` (snake_case or the seed's CamelCase);
    InvalidArgument naming the values otherwise."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a str, not {type(value).__name__}")
    key = _CAMEL.sub("_", value.strip()).lower().replace("-", "_").replace(" ", "_")
    if key not in PROVENANCES:
        raise InvalidArgument(
            f"{what} must be one of {sorted(PROVENANCES)} (or the seed's CamelCase, e.g. "
            f"OpenWeightGenerated), not {value!r:.60}"
        )
    return key


def from_writer(name: str | None) -> str | None:
    """The provenance a writer's name shows (an MCP client name, a source tool), or None."""
    if not name:
        return None
    low = name.lower()
    for cls, markers in WRITER_MARKERS:
        if any(m in low for m in markers):
            if cls == "open_weight":
                return DISTILLED if "distil" in low else GENERATED
            return cls
    return None


def infer(
    source_tool: str | None = None,
    meta: Mapping[str, Any] | None = None,
    client: str | None = None,
) -> str:
    """The provenance of a write that names none (rules in the module docstring)."""
    if meta is not None and meta.get("provenance") == HUMAN:
        return HUMAN
    return from_writer(client) or from_writer(source_tool) or UNKNOWN


def can_write_kind(provenance: str, kind: str) -> bool:
    """The seed's gate: may a writer of this provenance write this kind directly?"""
    return kind not in FORBIDDEN_KINDS.get(provenance, frozenset())


def admitted_kind(provenance: str, kind: str, explicit: bool) -> str:
    """The kind a write stores: ``kind`` when ``can_write_kind``; otherwise an explicit
    kind is refused (ProvenanceRefused) and an inferred one is stored as ``thought``
    (the writer asked for no kind; its text reads as one it may not write)."""
    if can_write_kind(provenance, kind):
        return kind
    if explicit:
        raise ProvenanceRefused(
            f"an {provenance} writer may not write a {kind} directly (can_write_kind); "
            "store it as kind='thought' or 'observation' (it enters the candidate band) and "
            "promote it with witness_memory(id, signal) once a closed-loop signal bears it "
            "out; nothing was logged"
        )
    return "thought"


def enters_candidate_band(provenance: str) -> bool:
    """Open-weight-generated writes always enter the candidate band (the seed)."""
    return provenance == GENERATED


def weight(provenance: str, candidate: bool) -> float:
    """The ranking multiplier ``provenance``: its weight, times the candidate share."""
    w = PROVENANCE_WEIGHTS.get(provenance, 1.0)
    return w * CANDIDATE_MULTIPLIER if candidate else w


def signal(value: object) -> str:
    """A witness signal checked against ``WITNESS_SIGNALS``."""
    if not isinstance(value, str) or value not in WITNESS_SIGNALS:
        raise InvalidArgument(
            f"signal must be one of {sorted(WITNESS_SIGNALS)} (a closed-loop signal: a "
            f"person's correction, a tool result, a router hit-rate change), not {value!r:.60}"
        )
    return value
