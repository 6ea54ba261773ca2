"""The ``chitta`` command, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from clitools import chitta_exe as _chitta_exe
from clitools import run
from fieldtools import flip_byte, segment_files, truncate_by

import chitta


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0 and chitta.__version__ in r.stdout


def test_remember_get_forget_stats_round_trip(tmp_path: Path) -> None:
    r = run(
        "remember",
        "deploys need the VPN",
        "--kind",
        "decision",
        "--tag",
        "ops",
        "--json",
        home=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    mid = json.loads(r.stdout)["id"]
    r = run("get", str(mid), "--json", home=tmp_path)
    got = json.loads(r.stdout)
    assert (got["text"], got["kind"], got["tags"]) == ("deploys need the VPN", "decision", ["ops"])
    r = run("stats", "--json", home=tmp_path)
    assert json.loads(r.stdout)["memories"] == 1
    assert run("forget", str(mid), home=tmp_path).returncode == 0
    r = run("get", str(mid), home=tmp_path)
    assert r.returncode == 5 and "NotFound" in r.stderr
    with chitta.open(tmp_path / "field", read_only=True) as f:
        assert len(f) == 0 and f.stats().forgotten == 1


def test_path_option_overrides_env(tmp_path: Path) -> None:
    other = tmp_path / "other"
    r = run("--path", str(other), "remember", "elsewhere", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (other / "segments").is_dir() and not (tmp_path / "field").exists()


def test_bad_input_exit_codes(tmp_path: Path) -> None:
    assert run("remember", "", home=tmp_path).returncode == 2  # InvalidArgument: a bad value
    assert not (tmp_path / "field").exists()  # and nothing was created
    assert run("remember", "x", "--kind", "gossip", home=tmp_path).returncode == 2  # usage
    assert run("get", "not-a-number", home=tmp_path).returncode == 2
    assert run("stats", home=tmp_path).returncode == 5  # no field yet
    assert run("verify", str(tmp_path / "nowhere")).returncode == 5


def test_verify_exit_codes_tell_torn_from_corrupt(tmp_path: Path) -> None:
    root = tmp_path / "field"
    with chitta.open(root) as f:
        for i in range(5):
            f.remember(f"memory {i}")
    r = run("verify", str(root), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["records"] == 5
    seg = segment_files(root)[0]
    truncate_by(seg, 3)
    r = run("verify", str(root), "--json")
    assert r.returncode == 3 and [d["kind"] for d in json.loads(r.stdout)["damages"]] == [
        "torn_tail"
    ]
    flip_byte(seg, 60)
    r = run("verify", str(root))
    assert r.returncode == 4 and "crc_mismatch" in r.stdout


def test_dump_lists_records_in_replay_order(tmp_path: Path) -> None:
    root = tmp_path / "field"
    with chitta.open(root) as f:
        a = f.remember("first")
        f.forget(a)
    r = run("dump", str(root), "--json")
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["op"] for x in recs] == ["PutPayload", "DeleteMemory"]
    assert recs[0]["fields"]["text"] == "first" and recs[1]["fields"]["id"] == str(
        a
    )  # ids as strings (D-038)
    assert recs[0]["seqno"] < recs[1]["seqno"]
    r = run("dump", str(root))
    assert r.returncode == 0 and "PutPayload" in r.stdout


def test_no_arguments_prints_orientation(tmp_path: Path) -> None:
    r = run(home=tmp_path)
    assert r.returncode == 0 and "no field here yet" in r.stdout
    run("remember", "x", home=tmp_path)
    r = run(home=tmp_path)
    assert "1 memories" in r.stdout and "next:" in r.stdout


def test_help_lists_exit_codes() -> None:
    r = run("--help")
    assert r.returncode == 0 and "Exit codes" in r.stdout
    for cmd in ("remember", "get", "forget", "stats", "verify", "dump", "demo"):
        h = run(cmd, "--help")
        assert h.returncode == 0 and "Example" in h.stdout, cmd


def run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(Path.home()),
        "CHITTA_EMBEDDER": "hashing",
        "COLUMNS": "160",
    }
    return subprocess.run(
        [_chitta_exe(), "demo", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
        cwd=Path.home(),
    )


def test_demo_answers_each_question_in_top_5(tmp_path: Path) -> None:
    r = run_demo("--path", str(tmp_path / "demo"), "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    doc = json.loads(
        (Path(chitta.__file__).parent / "cli" / "data" / "tidepool_chat.json").read_text("utf-8")
    )
    assert summary["turns"] == summary["memories"] == len(doc["turns"]) >= 250
    assert summary["instances"] == 2 and summary["verify_damages"] == 0
    assert summary["embedder"].startswith("hashing")
    assert [q["question"] for q in summary["questions"]] == [
        q["question"] for q in doc["questions"]
    ]
    text_of = {t["id"]: f"{t['speaker']}: {t['text']}" for t in doc["turns"]}
    for q, want in zip(summary["questions"], doc["questions"]):
        hits = [h for h in q["hits"] if h["turn"] == want["answer"]]
        assert hits, (q["question"], [h["text"] for h in q["hits"]])
        assert hits[0]["rank"] <= 5 and hits[0]["text"] == text_of[want["answer"]]
        assert "bm25" in hits[0]["lanes"], q["question"]  # the keyword lane carries it
    with chitta.open(tmp_path / "demo", read_only=True, embedder=None) as f:
        assert {m.meta["turn"] for m in f.memories()} == set(text_of)


def test_demo_prints_tables_and_refuses_an_existing_field(tmp_path: Path) -> None:
    r = run_demo("--path", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    assert "embedder: hashing-v1-d384 (model-free fallback" in r.stdout
    assert (
        "Q: Which port does the staging database listen on?" in r.stdout and "<- answer" in r.stdout
    )
    assert "7 of 7 answers in the top 5" in r.stdout
    again = run_demo("--path", str(tmp_path / "demo"))
    assert again.returncode == 2 and "already holds a field" in again.stderr
