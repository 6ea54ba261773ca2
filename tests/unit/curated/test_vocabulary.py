"""The closed vocabulary and the facts' rules: declare / amend, caps and the
catalog budget, typed topic paths with one renderer, kinds with required fields,
the payload hash, the body cap; bad input gets its documented error and leaves
the log byte for byte as it was."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import VOCABULARY, log_bytes
from hypothesis import given
from hypothesis import strategies as st

import chitta
from chitta.curated import facts as F
from chitta.curated import ulid
from chitta.curated.paths import TopicPath, parse
from chitta.errors import DuplicateFact, InvalidArgument, NotFound


@given(
    st.from_regex(r"[a-z0-9][a-z0-9_-]{0,47}", fullmatch=True),
    st.none() | st.from_regex(r"[a-z0-9][a-z0-9_-]{0,47}", fullmatch=True),
)
def test_a_path_renders_and_parses_back(domain: str, topic: str | None) -> None:
    path = TopicPath(domain, topic)
    assert parse(path.render()) == path
    assert path.render() == (domain if topic is None else domain + "/" + topic)


@pytest.mark.parametrize(
    "text", ["", "Build", "a/b/c", "a//b", "/a", "a/", "a b", "-a", "x" * 49, "a/B"]
)
def test_a_malformed_path_is_refused(text: str) -> None:
    with pytest.raises(InvalidArgument, match="path|name"):
        parse(text)


def test_catalog_lists_every_domain_and_topic(field: chitta.Field) -> None:
    text = field.call("memory_catalog")["text"]
    for path, descriptor in VOCABULARY.items():
        assert descriptor in text
        assert (f"- {path} (0 facts)" in text) == ("/" in path)
    shown = field.call("vocabulary_show")
    assert [t["path"] for t in shown["topics"]] == sorted(p for p in VOCABULARY if "/" in p)


def test_amend_changes_the_descriptor_and_nomination_follows(field: chitta.Field) -> None:
    field.call(
        "vocabulary_amend", path="tests/flaky", descriptor="quarantine of nondeterministic tests"
    )
    assert "quarantine of nondeterministic" in field.call("memory_catalog")["text"]
    got = field.call("memory_remember", body="quarantine nondeterministic tests after two failures")
    assert got["primary"] == "tests/flaky"


@pytest.mark.parametrize(
    ("call", "args", "error", "match"),
    [
        ("vocabulary_declare", {"path": "build", "descriptor": "again"}, InvalidArgument, "exists"),
        (
            "vocabulary_declare",
            {"path": "nodomain/x", "descriptor": "d"},
            InvalidArgument,
            "no domain",
        ),
        (
            "vocabulary_amend",
            {"path": "build/nope", "descriptor": "d"},
            InvalidArgument,
            "unknown topic path",
        ),
        (
            "memory_remember",
            {"body": "x", "paths": ["build/nope"]},
            InvalidArgument,
            "unknown topic path",
        ),
        ("memory_remember", {"body": "x", "paths": ["build"]}, InvalidArgument, "names a domain"),
        ("memory_remember", {"body": "x" * 3000}, InvalidArgument, "over the cap"),
        (
            "memory_remember",
            {"body": "x", "kind": "pitfall", "fields": {"symptom": "s"}},
            InvalidArgument,
            "needs the field",
        ),
        (
            "memory_remember",
            {"body": "x", "kind": "fact", "fields": {"nope": "s"}},
            InvalidArgument,
            "has no field",
        ),
        ("memory_remember", {"body": "x", "kind": "rumour"}, InvalidArgument, "must be one of"),
        (
            "memory_remember",
            {"body": "x", "disputes": "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
            NotFound,
            "no live fact",
        ),
        (
            "memory_supersede",
            {"fact": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "body": "y"},
            NotFound,
            "no live fact",
        ),
        ("memory_recall", {"paths": ["build/nope"]}, InvalidArgument, "unknown topic path"),
        ("memory_pinned", {"task": "t1"}, NotFound, "no pin"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    field: chitta.Field,
    root: Path,
    call: str,
    args: dict[str, object],
    error: type[Exception],
    match: str,
) -> None:
    before, stats = log_bytes(root), field.organ("curated").stats()
    with pytest.raises(error, match=match):
        field.call(call, **args)
    assert log_bytes(root) == before and field.organ("curated").stats() == stats


def test_a_duplicate_payload_is_refused_and_changes_nothing(
    field: chitta.Field, root: Path
) -> None:
    first = field.call("memory_remember", body="ccache lives in ~/.ccache", paths=["build/cache"])
    before = log_bytes(root)
    # The same payload after canonicalisation: trailing spaces and outer blank lines go.
    with pytest.raises(DuplicateFact, match=first["fact"]):
        field.call("memory_remember", body="\nccache lives in ~/.ccache   \n", paths=["build/ci"])
    assert log_bytes(root) == before
    assert isinstance(DuplicateFact("x"), InvalidArgument)  # documented: a kind of bad input


def test_the_payload_hash_is_the_canonical_form() -> None:
    import hashlib

    import msgspec

    want = hashlib.sha256(
        msgspec.msgpack.encode(["pitfall", "a\nb", [["fix", "f"], ["symptom", "s"]]])
    ).hexdigest()
    assert F.payload_hash("pitfall", "a  \nb\n\n", {"symptom": "s", "fix": "f"}) == want


def test_the_body_cap_is_the_rendered_block(field: chitta.Field) -> None:
    cap = field.organ("curated").limits.fact_bytes
    fits = "y" * (cap - 200)
    got = field.call("memory_remember", body=fits, paths=["build/cache"])
    text = field.call("memory_recall", paths=["build/cache"], budget=cap)["text"]
    assert got["fact"] in text and len(text.encode()) <= cap


def test_caps_bind_declarations(field: chitta.Field, root: Path) -> None:
    field.call("vocabulary_limits", max_topics_per_domain=2, max_domains=3)
    with pytest.raises(InvalidArgument, match="max_topics_per_domain"):
        field.call("vocabulary_declare", path="build/linker", descriptor="linkers")
    field.call("vocabulary_declare", path="docs", descriptor="documentation")
    with pytest.raises(InvalidArgument, match="max_domains"):
        field.call("vocabulary_declare", path="release", descriptor="releases")
    before = log_bytes(root)
    for limits, match in (
        ({"catalog_bytes": 60}, "catalog would take"),
        ({"max_domains": 2}, "below"),
    ):
        with pytest.raises(InvalidArgument, match=match):
            field.call("vocabulary_limits", **limits)
    assert log_bytes(root) == before


def test_the_catalog_budget_refuses_a_declaration_that_would_not_fit(
    field: chitta.Field, root: Path
) -> None:
    size = field.call("memory_catalog")["bytes"]
    field.call("vocabulary_limits", catalog_bytes=size + 60)
    before = log_bytes(root)
    with pytest.raises(InvalidArgument, match="catalog would take"):
        field.call("vocabulary_declare", path="tests/slow", descriptor="slow tests " * 8)
    assert log_bytes(root) == before
    assert field.call("memory_catalog")["bytes"] <= size + 60


def test_fact_caps_make_a_topic_full(field: chitta.Field) -> None:
    field.call("vocabulary_limits", max_facts_per_topic=2)
    for i in range(2):
        field.call("memory_remember", body=f"cache fact {i}", paths=["build/cache"])
    with pytest.raises(InvalidArgument, match="full"):
        field.call("memory_remember", body="cache fact 3", paths=["build/cache"])


def test_ulids_sort_by_time_and_are_unique() -> None:
    base = int(time.time() * 1000) + 10**7  # above any id this process made
    ids = [ulid.new(base + i // 3) for i in range(300)]
    assert ids == sorted(ids) and len(set(ids)) == 300
    assert ulid.timestamp_ms(ids[-1]) == base + 99
