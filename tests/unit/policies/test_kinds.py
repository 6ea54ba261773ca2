"""Kinds inferred at write time (chitta/policies/kinds.py, docs/KINDS.md).

The oracle is a labelled set written for this test (64 sentences, 16 per kind,
labelled by hand from what each sentence is, not from the rules), then one test
per rule, then the write path: inference only when no kind= is given, the kind
logged and replayed as written.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import chitta
from chitta import inspect as cinspect
from chitta.policies.kinds import PREFIX, infer_kind

LABELLED: list[tuple[str, str]] = [
    # decisions: a chosen action, usually with its reason
    ("decision", "Decision: we use postgres for the ledger because it has row locks."),
    ("decision", "We decided to drop Python 3.9 support in the next release."),
    ("decision", "ADR-14: the daemon listens on a unix socket only."),
    ("decision", "Going with msgpack for the wire format; JSON was too slow."),
    ("decision", "The team agreed to freeze the schema until the audit is done."),
    ("decision", "We will use ruff instead of flake8 from now on."),
    ("decision", "After the outage we chose to pin the kernel version on the build hosts."),
    ("decision", "Decided to keep the old endpoint alive for two more sprints."),
    ("decision", "## Decision - retries stay at three with exponential backoff"),
    ("decision", "Let's go with the smaller instance type to save cost."),
    ("decision", "From now on every migration needs a rollback script."),
    ("decision", "I decided against caching the tokens on disk."),
    ("decision", "The plan is to ship the importer behind a flag first."),
    ("decision", "We've settled on weekly releases instead of daily ones."),
    ("decision", "Resolution: the flaky test is quarantined, not deleted."),
    ("decision", "Ana and I opted for a single writer per shard."),
    # thoughts: speculation, hypotheses, synthesis
    ("thought", "I think the memory leak comes from the thread pool."),
    ("thought", "Maybe the user wants shorter answers in the evening."),
    ("thought", "Hypothesis: recall drops because the vocabulary table is stale."),
    ("thought", "Perhaps the timeout is too tight on the CI runners."),
    ("thought", "It might be a clock skew between the two hosts."),
    ("thought", "My guess is that the parser chokes on tabs."),
    ("thought", "Probably the cache key ignores the realm."),
    ("thought", "I suspect the benchmark is disk-bound rather than CPU-bound."),
    ("thought", "What if we indexed the tags separately?"),
    ("thought", "The slowdown, we think, started with the new allocator."),
    ("thought", "Idea: cluster the episodes by week before summarising them."),
    ("thought", "Not sure the retry loop ever terminates under load."),
    ("thought", "It seems the second writer never sees the new segment."),
    ("thought", "One hypothesis is that the embedder normalises twice."),
    ("thought", "I wonder whether users read the explain output at all."),
    ("thought", "Possibly the regression is in the tokenizer, not the index."),
    # observations: recorded external facts
    ("observation", "The user prefers dark mode in every editor."),
    ("observation", "Ana moved to Lisbon in May 2023 and works as a nurse."),
    ("observation", "The build passed on the second try."),
    ("observation", "Deploys happen on Tuesday mornings."),
    ("observation", "The staging database has 42 GB of data."),
    ("observation", "Tom asked for the report by Friday."),
    ("observation", "Latency p99 was 180 ms during the load test."),
    ("observation", "The customer reported that exports fail for files over 2 GB."),
    ("observation", "Observation: the nightly job took 3 hours yesterday."),
    ("observation", "The office closes at six on Fridays."),
    ("observation", "Our CI runs on two cores."),
    ("observation", "Fact: the contract renews every January."),
    ("observation", "The meeting moved to Thursday at 10."),
    ("observation", "Mira likes her coffee black and her reviews short."),
    ("observation", "Version 2.3 shipped to all regions last night."),
    ("observation", "The printer on the third floor is out of toner."),
    # code facts: symbols, files, signatures, call graphs
    ("code_fact", "put_op lives in chitta/field/puts.py and builds the PutPayload."),
    ("code_fact", "def recall(self, query: str, k: int = 10) -> list[Hit]"),
    ("code_fact", "class SegmentLog: appends records and rotates segments."),
    ("code_fact", "The retry wrapper is defined in net/retry.go:88."),
    ("code_fact", "```python\nfield.remember('x')\n```"),
    ("code_fact", "`open_field()` raises NotAFieldError on an empty directory."),
    ("code_fact", "Symbol: FieldCore.commit appends and applies one op."),
    ("code_fact", "std::vector<int> is returned by Index::search."),
    ("code_fact", "The CLI entry point is main in cli/app.py."),
    ("code_fact", "fn parse_header(buf: &[u8]) -> Result<Header> reads the magic first."),
    ("code_fact", "Call graph: remember calls put_op, which calls infer_kind."),
    ("code_fact", "The config loader is in settings.ts and exports loadConfig."),
    ("code_fact", "Code: SparseEncoder.encode returns a sparse matrix of codes."),
    ("code_fact", "function debounce(fn, ms) is exported from utils.js."),
    ("code_fact", "Signature: link(src, dst, edge='RelatedTo', weight=1.0)"),
    ("code_fact", "The header chitta_field.h declares chitta_open and chitta_close."),
]


def test_labelled_set_accuracy() -> None:
    assert len(LABELLED) >= 60
    assert Counter(k for k, _ in LABELLED) == {
        "decision": 16,
        "thought": 16,
        "observation": 16,
        "code_fact": 16,
    }
    wrong = [(k, infer_kind(t), t) for k, t in LABELLED if infer_kind(t) != k]
    accuracy = 1 - len(wrong) / len(LABELLED)
    print(f"\nkind inference accuracy on {len(LABELLED)} labelled sentences: {accuracy:.3f}")
    for want, got, text in wrong:
        print(f"  want {want}, got {got}: {text!r}")
    assert accuracy >= 0.95, wrong


# ---- one test per rule -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tags", "kind"),
    [
        (["kind:decision"], "decision"),
        (["KIND: Thought"], "thought"),
        (["x", "code_fact"], "code_fact"),
        (["CodeFact"], "code_fact"),
        (["code-fact"], "code_fact"),
        (["observation", "decision"], "observation"),  # the first kind tag wins
        (["kind:lesson", "y"], "thought"),  # not an inferred kind: the text decides
    ],
)
def test_rule1_kind_tag_beats_content(tags: list[str], kind: str) -> None:
    assert infer_kind("I think so.", None, tags) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Decision: x", "decision"),
        ("# ADR 12: x", "decision"),
        ("- Thought: x", "thought"),
        ("> Guess - x", "thought"),
        ("Finding: maybe x", "observation"),  # a label beats an opening hedge after it
        ("[code] x", "observation"),  # a label needs its mark after the word
        ("code] x", "code_fact"),
        ("Call graph: a -> b", "code_fact"),
    ],
)
def test_rule2_leading_label(text: str, kind: str) -> None:
    assert infer_kind(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We have decided x", "decision"),
        ("going with x", "decision"),
        ("We'll switch x", "decision"),
        ("Presumably x", "thought"),
        ("That could be x", "thought"),
        ("I'm not sure x", "thought"),
        ("Maybe class C: is the culprit", "thought"),  # the opening beats a later code cue
    ],
)
def test_rule3_opening_phrase(text: str, kind: str) -> None:
    assert infer_kind(text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("In March the decision was made to x", "decision"),
        ("Yesterday the team chose x; I suspect y", "decision"),  # decision cues first
        ("The crash, I suspect, is in a.py", "thought"),  # speculation before code
        ("Nobody has a hypothesis yet", "thought"),
        ("See the fence ``` x", "code_fact"),
        ("see lib/x.rs#L10", "code_fact"),
        ("async def run(", "code_fact"),
        ("a::b", "code_fact"),
        ("try `f(x)` first", "code_fact"),
        ("It is in the U.S. office", "observation"),  # no code extension
        ("Read config.yaml", "observation"),  # not a source file
    ],
)
def test_rule4_cue_in_prefix(text: str, kind: str) -> None:
    assert infer_kind(text) == kind


def test_rule4_reads_only_the_prefix() -> None:
    pad = "The weather was fine. " * 9
    assert len(pad) < PREFIX and infer_kind(pad + "I suspect x") == "thought"
    far = "x" * PREFIX + " I suspect the index"
    assert infer_kind(far) == "observation"


@pytest.mark.parametrize(
    ("realm", "kind"),
    [
        ("code:chitta", "code_fact"),
        ("repo/api", "code_fact"),
        ("decisions.2024", "decision"),
        ("ADR", "decision"),
        ("ideas", "thought"),
        ("facts", "observation"),
        ("chitta", "observation"),
        (None, "observation"),
    ],
)
def test_rule5_realm(realm: str | None, kind: str) -> None:
    assert infer_kind("The report is due.", realm) == kind


def test_rule5_content_beats_realm() -> None:
    assert infer_kind("I think the cache is stale", "code:api") == "thought"
    assert infer_kind("The cache is stale", "code:api") == "code_fact"


def test_rule6_default_observation() -> None:
    assert infer_kind("") == "observation"
    assert infer_kind("Deploys happen on Tuesdays.") == "observation"


# ---- the write path ----------------------------------------------------------------------


def kinds_of(path: Path) -> list[str]:
    return [r["fields"]["kind"] for r in cinspect.iter_records(path) if r["op"] == "PutPayload"]


def test_remember_infers_unless_kind_given_and_the_kind_is_logged(tmp_path: Path) -> None:
    p = tmp_path / "f"
    with chitta.open(p, embedder=None) as f:
        ids = [
            f.remember("Decision: we use postgres", realm="db"),
            f.remember("Decision: we use postgres", realm="db", kind="observation"),
            f.remember("Maybe it is DNS", tags=["net"]),
            f.remember("The office closes at six", realm="code:web"),
        ]
        got = [f.get(i).kind for i in ids]
    assert got == ["decision", "observation", "thought", "code_fact"]
    assert kinds_of(p) == got
    with chitta.open(p, read_only=True) as again:  # replay reads the logged kinds
        assert [again.get(i).kind for i in ids] == got


def test_remember_many_infers_for_texts_and_dicts_without_kind(tmp_path: Path) -> None:
    with chitta.open(tmp_path / "f", embedder=None) as f:
        ids = f.remember_many(
            [
                "I suspect the allocator",
                {"text": "We decided to ship", "kind": "thought"},
                {"text": "It lives in a/b.py"},
                {"text": "plain", "tags": ["kind:decision"]},
            ]
        )
        assert [f.get(i).kind for i in ids] == ["thought", "thought", "code_fact", "decision"]


def test_native_plain_path_infers_and_triplets_are_not_inferred(
    tmp_path: Path,
) -> None:
    # Documented in docs/KINDS.md: remember(text) alone on a field without an embedder
    # is one native call unless the text names a kind (then Python infers it).
    # Triplets keep their given kind.
    with chitta.open(tmp_path / "f", embedder=None) as f:
        plain = f.remember("Decision: we use postgres")
        t_id, a_id = f.remember_triplet("we", "decided", "postgres")
        assert f.get(plain).kind == "decision"
        assert (f.get(t_id).kind, f.get(a_id).kind) == ("observation", "alias")


def test_bad_kind_still_rejected_and_nothing_written(tmp_path: Path) -> None:
    p = tmp_path / "f"
    with chitta.open(p, embedder=None) as f:
        f.remember("keep", realm="r")
        with pytest.raises(chitta.InvalidArgument):
            f.remember("Decision: x", kind="verdict")
        with pytest.raises(chitta.InvalidArgument):
            f.remember("Decision: x", kind=None)  # type: ignore[arg-type]
        assert len(f) == 1
    assert kinds_of(p) == ["observation"]
