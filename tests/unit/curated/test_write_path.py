"""The write path: nomination decides without a classifier; a classifier's illegal
paths are refused by admission; a classifier that raises leaves a closed audit
record and filing falls back to nomination; admission runs again inside the
filing; a capture whose process was SIGKILLed is filed by the sweep exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import declare

import chitta
from chitta.curated import Candidate, set_classifier
from chitta.errors import InvalidArgument


class Answers:
    name = "fake-answers"

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.seen: list[tuple[Candidate, bytes]] = []

    def classify(self, candidate: Candidate, catalog: bytes) -> Sequence[str]:
        self.seen.append((candidate, catalog))
        return self.answer  # type: ignore[return-value]


class Raises:
    name = "fake-raises"

    def classify(self, candidate: Candidate, catalog: bytes) -> Sequence[str]:
        raise RuntimeError("provider unreachable")


def _audits(f: chitta.Field) -> list[dict[str, object]]:
    return list(f.organ("curated").audits.values())


def test_without_a_classifier_nomination_decides_and_no_audit_is_written(
    field: chitta.Field,
) -> None:
    got = field.call("memory_remember", body="sccache keeps its cache directory small by default")
    assert got["primary"] == "build/cache" and got["classifier"] is None
    assert _audits(field) == []


def test_a_classifier_answer_is_filed_with_one_audit_record(field: chitta.Field) -> None:
    fake = Answers(["tests/flaky"])
    set_classifier(field.organ("curated"), fake)
    got = field.call("memory_remember", body="retry the network test twice")
    assert got["paths"][0] == "tests/flaky" and got["primary"] == "tests/flaky"
    [audit] = _audits(field)
    assert (
        audit["state"] == "ok"
        and audit["answer"] == ["tests/flaky"]
        and audit["call"] == "classify"
    )
    assert audit["subject"] == got["capture"] and audit["classifier"] == "fake-answers"
    # The classifier saw the candidate and the catalog, nothing else.
    candidate, catalog = fake.seen[0]
    assert candidate.body == "retry the network test twice" and b"tests/flaky" in catalog


def test_illegal_paths_from_a_classifier_are_refused_by_admission(field: chitta.Field) -> None:
    set_classifier(
        field.organ("curated"), Answers(["build/nope", "Not A Path", "secrets/x", "build"])
    )
    got = field.call("memory_remember", body="ccache hit rate drops after a compiler upgrade")
    assert got["primary"] == "build/cache"  # nomination's choice
    refused = dict(map(tuple, got["refused"]))
    assert refused["build/nope"] == "illegal" and refused["secrets/x"] == "illegal"
    assert refused["build"] == "illegal"  # a domain is no filing place
    assert got["unparsed"] == ["Not A Path"]
    facts = field.organ("curated").facts
    assert all(str(p) != "build/nope" for f in facts.values() for p in f.paths)


def test_a_classifier_that_raises_closes_its_audit_with_the_error(field: chitta.Field) -> None:
    set_classifier(field.organ("curated"), Raises())
    got = field.call("memory_remember", body="the CI runners have two cores")
    assert got["classifier"] == "error" and got["primary"] == "build/ci"
    [audit] = _audits(field)
    assert audit["state"] == "error" and "provider unreachable" in str(audit["error"])
    assert audit["closed_ms"] is not None


def test_a_classifier_answering_no_list_is_an_error_too(field: chitta.Field) -> None:
    set_classifier(field.organ("curated"), Answers("build/cache"))
    got = field.call("memory_remember", body="ccache directory on CI")
    assert got["classifier"] == "error" and _audits(field)[0]["state"] == "error"


def test_filing_readmits_against_the_vocabulary_as_it_is_then(field: chitta.Field) -> None:
    class FillsTheTopic:
        name = "fills"

        def classify(self, candidate: Candidate, catalog: bytes) -> Sequence[str]:
            # Meanwhile the topic reaches its cap (as another writer's filing would).
            set_classifier(field.organ("curated"), None)
            field.call("vocabulary_limits", max_facts_per_topic=1)
            field.call("memory_remember", body="flaky: the socket test", paths=["tests/flaky"])
            return ["tests/flaky"]

    set_classifier(field.organ("curated"), FillsTheTopic())
    with pytest.raises(InvalidArgument, match="no topic admits"):
        field.call("memory_remember", body="quarantine tests that time out")
    organ = field.organ("curated")
    assert len(organ.by_path[next(p for p in organ.topics if p.render() == "tests/flaky")]) == 1
    assert len(organ.open_captures()) == 1  # the capture stays open for a later sweep


def test_filing_readmits_after_another_writers_change(field: chitta.Field, root: Path) -> None:
    class OtherWriterFillsTheTopic:
        name = "other-writer"

        def classify(self, candidate: Candidate, catalog: bytes) -> Sequence[str]:
            with chitta.open(root, embedder=None) as other:  # a second writer instance
                other.call("vocabulary_limits", max_facts_per_topic=1)
                other.call("memory_remember", body="flaky: the socket test", paths=["tests/flaky"])
            return ["tests/flaky"]

    set_classifier(field.organ("curated"), OtherWriterFillsTheTopic())
    got = field.call("memory_remember", body="ccache quarantine of flaky cache tests")
    assert got["changed_since_first_admission"] is True
    assert "tests/flaky" not in got["paths"] and ["tests/flaky", "full"] in got["refused"]


def test_supersede_and_dispute_are_one_batch_with_the_filing(
    field: chitta.Field, root: Path
) -> None:
    a = field.call("memory_remember", body="the cache lives in /tmp", paths=["build/cache"])["fact"]
    b = field.call(
        "memory_remember", body="the cache lives in ~/.cache", paths=["build/cache"], disputes=a
    )
    field.call("memory_supersede", fact=b["fact"], body="the cache lives in ~/.cache/x")
    from chitta.field.inspect import iter_records

    batches = [r["fields"]["ops"] for r in iter_records(root) if r["op_type"] == 64]
    events = [[(i["fields"]["event"]) for i in ops] for ops in batches]
    assert events == [["file"], ["file", "dispute"], ["file", "supersede"]]  # each filing


_CHILD = textwrap.dedent(
    """
    import sys, time
    import chitta
    from chitta.curated import set_classifier

    class Hangs:
        name = "hangs"
        def classify(self, candidate, catalog):
            print("classifying", flush=True)  # the capture is in the log by now
            time.sleep(120)
            return []

    f = chitta.open(sys.argv[1], embedder=None)
    set_classifier(f.organ("curated"), Hangs())
    f.call("memory_remember", body="ccache needs CCACHE_DIR on the CI runners")
    """
)


def test_a_capture_killed_before_filing_is_filed_by_the_sweep_exactly_once(tmp_path: Path) -> None:
    root = tmp_path / "field"
    with chitta.open(root, embedder=None) as f:
        declare(f)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(root)], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:  # (an editable install may print its rebuild first)
            if line.strip() == "classifying":
                break
        else:
            raise AssertionError("the child ended before classifying")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL
    with chitta.open(root, embedder=None) as f:
        organ = f.organ("curated")
        assert organ.stats()["open_captures"] == 1 and organ.stats()["facts"] == 0
        [audit] = organ.audits.values()
        assert audit["state"] == "open"
        assert f.call("memory_sweep")["filed"] == []  # younger than the default minimum age
        first = f.call("memory_sweep", min_age_s=0)
        assert len(first["filed"]) == 1 and first["open"] == 0
        assert f.call("memory_sweep", min_age_s=0)["filed"] == []
        assert organ.audits[audit["id"]]["state"] == "abandoned"
    with chitta.open(root, embedder=None, read_only=True) as again:
        organ = again.organ("curated")
        [fact] = organ.facts.values()
        assert fact.body == "ccache needs CCACHE_DIR on the CI runners"
        assert fact.primary.render() in ("build/cache", "build/ci")
        assert organ.stats()["open_captures"] == 0
