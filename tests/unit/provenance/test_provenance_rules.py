"""The provenance rules (chitta/policies/provenance.py) against the seed's statement
and a hand-labelled set of writer names."""

from __future__ import annotations

import pytest

from chitta import ops
from chitta.errors import InvalidArgument, ProvenanceRefused
from chitta.policies import provenance as p

# writer name (MCP clientInfo.name or source_tool) -> the provenance a person reads in it
LABELLED = {
    "claude-code": "claude",
    "Claude Desktop": "claude",
    "claude-ai": "claude",
    "codex": "codex",
    "codex-cli": "codex",
    "codex-mcp-client": "codex",
    "ollama": "open_weight_generated",
    "llama.cpp-agent": "open_weight_generated",
    "LM Studio": "open_weight_generated",
    "vllm-runner": "open_weight_generated",
    "qwen-coder": "open_weight_generated",
    "mistral-agent": "open_weight_generated",
    "ollama-distiller": "open_weight_distilled",
    "gemma-distill": "open_weight_distilled",
    "claude-via-ollama": "open_weight_generated",  # the strictest class wins
    "memory-md": "human",
    "human": "human",
    "manual-entry": "human",
    "cursor": None,
    "my-script": None,
    "": None,
}


@pytest.mark.parametrize("name", sorted(LABELLED))
def test_writer_names_map_to_the_labelled_provenance(name: str) -> None:
    assert p.from_writer(name) == LABELLED[name]


def test_infer_order_meta_then_client_then_source_tool() -> None:
    assert p.infer("claude-code", {"provenance": "human"}) == "human"  # the importer's mark
    assert p.infer("claude-code", None, client="ollama") == "open_weight_generated"
    assert p.infer("codex", None, client="some-ide") == "codex"  # the client shows nothing
    assert p.infer(None, None) == "unknown"
    assert p.infer("cursor", {"provenance": "machine"}) == "unknown"


def test_can_write_kind_is_the_seed_gate_over_every_pair() -> None:
    # seed: open-weight-generated writes are forbidden from direct Decision or CodeFact writes
    for prov in ops.PROVENANCES:
        for kind in ops.MEMORY_KINDS:
            forbidden = prov == "open_weight_generated" and kind in ("decision", "code_fact")
            assert p.can_write_kind(prov, kind) is not forbidden, (prov, kind)


def test_admitted_kind_refuses_explicit_and_downgrades_inferred() -> None:
    for kind in ("decision", "code_fact"):
        with pytest.raises(ProvenanceRefused, match="witness_memory"):
            p.admitted_kind("open_weight_generated", kind, explicit=True)
        assert p.admitted_kind("open_weight_generated", kind, explicit=False) == "thought"
        assert p.admitted_kind("open_weight_distilled", kind, explicit=True) == kind
    assert p.admitted_kind("open_weight_generated", "observation", explicit=True) == "observation"


def test_only_open_weight_generated_enters_the_candidate_band() -> None:
    assert {x for x in ops.PROVENANCES if p.enters_candidate_band(x)} == {"open_weight_generated"}


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("OpenWeightGenerated", "open_weight_generated"),
        ("OpenWeightDistilled", "open_weight_distilled"),
        ("Human", "human"),
        ("claude", "claude"),
        ("open-weight-generated", "open_weight_generated"),
        (" codex ", "codex"),
        ("Unknown", "unknown"),
    ],
)
def test_normalise_accepts_snake_and_the_seed_spelling(given: str, want: str) -> None:
    assert p.normalise(given) == want


@pytest.mark.parametrize("bad", ["gpt", "", "open weight", 3, None, ["human"]])
def test_normalise_refuses_unknown_provenance(bad: object) -> None:
    with pytest.raises(InvalidArgument, match="provenance must be"):
        p.normalise(bad)


def test_weight_is_the_table_times_the_candidate_share() -> None:
    for prov, w in p.PROVENANCE_WEIGHTS.items():
        assert p.weight(prov, False) == w
        assert p.weight(prov, True) == w * p.CANDIDATE_MULTIPLIER
    assert set(p.PROVENANCE_WEIGHTS) == ops.PROVENANCES


@pytest.mark.parametrize("bad", ["user-correction", "", None, 1, "correction"])
def test_signal_refuses_what_is_not_a_closed_loop_signal(bad: object) -> None:
    with pytest.raises(InvalidArgument, match="closed-loop"):
        p.signal(bad)
