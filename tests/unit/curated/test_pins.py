"""Pinned recall and roles: a pin's bytes stay identical across 100 later writes
(that reorder a fresh recall) and a reopen; a pin is written once and never by
the task it governs; the implementer reads the channel, the reviewer is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import log_bytes

import chitta
from chitta.errors import InvalidArgument, RoleRefused


def test_pinned_bytes_survive_100_writes_and_a_reopen(field: chitta.Field, root: Path) -> None:
    for i in range(6):
        field.call(
            "memory_remember", body=f"ccache runner note {i} " + "pad " * i, paths=["build/cache"]
        )
    query = "ccache runner"
    pinned = field.call("memory_pin", task="task-1", query=query, paths=["build/cache"], budget=400)
    assert pinned["ids"] and pinned["bytes"] <= 400
    for i in range(100):  # later facts change BM25's statistics and take budget
        field.call("memory_remember", body=f"ccache ccache runner {i}", paths=["build/cache"])
    fresh = field.call("memory_recall", paths=["build/cache"], query=query, budget=400)
    assert fresh["ids"] != pinned["ids"]  # a fresh recall now answers differently
    assert field.call("memory_pinned", task="task-1")["text"] == pinned["text"]
    field.close()
    with chitta.open(root, embedder=None, read_only=True) as again:
        got = again.call("memory_pinned", task="task-1")
        assert got["text"] == pinned["text"] and got["ids"] == pinned["ids"]
        assert (
            again.call("memory_channel", task="task-1", role="implementer")["text"]
            == pinned["text"]
        )
    with chitta.open(root, embedder=None) as writer:  # from a checkpoint too
        writer.checkpoint()
    with chitta.open(root, embedder=None, read_only=True) as warm:
        assert warm.checkpoint_loaded is not None
        assert warm.call("memory_pinned", task="task-1")["text"] == pinned["text"]


def test_a_pin_is_written_once_and_not_by_its_own_task(field: chitta.Field, root: Path) -> None:
    field.call("memory_remember", body="flaky socket test", paths=["tests/flaky"])
    before = log_bytes(root)
    with pytest.raises(RoleRefused, match="own recall"):
        field.call("memory_pin", task="t-7", paths=["tests/flaky"], by_task="t-7")
    assert log_bytes(root) == before
    first = field.call("memory_pin", task="t-7", paths=["tests/flaky"], by_task="orchestrator")
    before = log_bytes(root)
    with pytest.raises(RoleRefused, match="already pinned"):
        field.call("memory_pin", task="t-7", paths=["build/cache"])
    assert log_bytes(root) == before
    assert field.call("memory_pinned", task="t-7")["text"] == first["text"]


def test_the_reviewer_receives_no_memory(field: chitta.Field) -> None:
    field.call("memory_remember", body="flaky socket test", paths=["tests/flaky"])
    field.call("memory_pin", task="t-8", paths=["tests/flaky"])
    assert (
        "flaky socket test" in field.call("memory_channel", task="t-8", role="implementer")["text"]
    )
    with pytest.raises(RoleRefused, match="reviewer role receives no memory"):
        field.call("memory_channel", task="t-8", role="reviewer")
    with pytest.raises(InvalidArgument, match="role"):
        field.call("memory_channel", task="t-8", role="auditor")


def test_a_pin_without_paths_chooses_them_by_nomination(field: chitta.Field) -> None:
    field.call("memory_remember", body="the CI runners have two cores", paths=["build/ci"])
    got = field.call("memory_pin", task="t-9", query="continuous integration runners cores")
    assert got["paths"] == ["build/ci"] and len(got["ids"]) == 1


class Selects:
    name = "fake-select"

    def __init__(self, answer: list[str]) -> None:
        self.answer = answer

    def classify(self, candidate: object, catalog: bytes) -> list[str]:
        return []

    def select(self, request: str, catalog: bytes) -> list[str]:
        assert b"build/ci" in catalog
        return self.answer


def test_a_pin_without_paths_asks_the_select_hook_under_an_audit(field: chitta.Field) -> None:
    from chitta.curated import set_classifier

    field.call("memory_remember", body="flaky socket test", paths=["tests/flaky"])
    field.call("memory_remember", body="the CI runners have two cores", paths=["build/ci"])
    set_classifier(field.organ("curated"), Selects(["tests/flaky", "nowhere/x"]))
    got = field.call("memory_pin", task="t-10", query="continuous integration runners cores")
    assert got["paths"] == ["tests/flaky"]  # the model chose; the illegal path was dropped
    [audit] = [a for a in field.organ("curated").audits.values() if a["call"] == "select"]
    assert audit["state"] == "ok" and audit["subject"] == "t-10"
    set_classifier(field.organ("curated"), Selects(["nowhere/x"]))  # nothing legal: nomination
    got = field.call("memory_pin", task="t-11", query="continuous integration runners cores")
    assert got["paths"] == ["build/ci"]


def test_the_sweep_is_a_maintenance_pass(field: chitta.Field) -> None:
    ran = field.maintain()
    assert ran["curated.file_open_captures"] == 0
