"""`chitta list | update | history | link | export | import | doctor`, `remember -` and
`--file`, `--path` after the command, one exit code per kind of error, and what tables and
dumps leave out (real `chitta` processes; the Python API on the same field is the oracle)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
from clitools import chitta_exe, run

import chitta
from chitta.mcp.forward import _argv_field


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
        "CHITTA_EMBEDDER": "none",
    }
    return subprocess.run(
        [chitta_exe(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def _field(tmp_path: Path) -> tuple[Path, list[int]]:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        ids = [
            f.remember("the build uses ninja", kind="decision", tags=["build"], realm="ci"),
            f.remember("staging listens on 8080", tags=["ops"], meta={"host": "staging"}),
            f.remember("a passing thought", kind="thought", confidence=0.4),
        ]
    return root, ids


def test_path_after_the_command_means_the_same(tmp_path: Path) -> None:
    root, ids = _field(tmp_path)
    before = run("--path", str(root), "stats", "--json")
    after = run("stats", "--json", "--path", str(root))
    assert before.returncode == after.returncode == 0, after.stderr
    assert json.loads(before.stdout)["memories"] == json.loads(after.stdout)["memories"] == 3
    got = run("get", str(ids[0]), "--json", "--path", str(root))
    assert json.loads(got.stdout)["text"] == "the build uses ninja"
    assert _argv_field(["mcp", "--path", str(root)]) == root
    assert _argv_field(["mcp", f"--path={root}"]) == root
    assert _argv_field(["--path", str(root), "mcp"]) == root
    assert _argv_field(["mcp", "--other"]) is None


def test_remember_reads_stdin_and_files(tmp_path: Path) -> None:
    root = tmp_path / "f"
    text = "a long note\nwith two lines " + "x" * 200_000  # beyond what argv comfortably holds
    r = _run("--path", str(root), "remember", "-", "--tag", "piped", stdin=text + "\n")
    assert r.returncode == 0, r.stderr
    note = tmp_path / "note.txt"
    note.write_text("from a file\n", encoding="utf-8")
    r2 = _run("--path", str(root), "remember", "--file", str(note))
    assert r2.returncode == 0, r2.stderr
    with chitta.open(root, read_only=True, embedder=None) as f:
        assert f.get(int(r.stdout)).text == text and f.get(int(r.stdout)).tags == ("piped",)
        assert f.get(int(r2.stdout)).text == "from a file"
    both = _run("--path", str(root), "remember", "x", "--file", str(note))
    assert both.returncode == 2 and "not both" in both.stderr


def test_list_filters_like_the_api(tmp_path: Path) -> None:
    root, ids = _field(tmp_path)
    r = run("--path", str(root), "list", "--tag", "build", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    with chitta.open(root, read_only=True, embedder=None) as f:
        want = [m.id for m in f.memories() if "build" in m.tags]
    assert out["total"] == 1 and [int(m["id"]) for m in out["memories"]] == want
    everything = json.loads(run("--path", str(root), "list", "--json").stdout)
    assert {int(m["id"]) for m in everything["memories"]} == set(ids)
    limited = json.loads(run("--path", str(root), "list", "--limit", "2", "--json").stdout)
    assert limited["total"] == 3 and len(limited["memories"]) == 2


def test_update_history_and_link_reach_the_field(tmp_path: Path) -> None:
    root, ids = _field(tmp_path)
    r = run(
        "--path", str(root), "update", str(ids[1]), "staging listens on 8081", "--confidence", "0.5"
    )
    assert r.returncode == 0, r.stderr
    r = run("--path", str(root), "link", str(ids[1]), str(ids[0]), "--edge", "Supports")
    assert r.returncode == 0, r.stderr
    hist = json.loads(run("--path", str(root), "history", str(ids[1]), "--json").stdout)
    with chitta.open(root, read_only=True, embedder=None) as f:
        m = f.get(ids[1])
        assert (m.text, m.confidence) == ("staging listens on 8081", 0.5)
        assert (ids[0], "Supports", True, 1.0) in f.core.graph.neighbours(ids[1])  # outgoing
        assert [h["op"] for h in hist["history"]] == [h["op"] for h in f.history(ids[1])]
    nothing = run("--path", str(root), "update", str(ids[1]))
    assert nothing.returncode == 2 and "nothing to change" in nothing.stderr


def test_export_import_round_trip_keeps_every_field(tmp_path: Path) -> None:
    root, _ = _field(tmp_path)
    out = tmp_path / "m.jsonl"
    assert run("--path", str(root), "export", str(out)).returncode == 0
    copy = tmp_path / "copy"
    r = run("--path", str(copy), "import", str(out), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == 3
    again = tmp_path / "again.jsonl"
    assert run("--path", str(copy), "export", str(again)).returncode == 0

    def rows(p: Path) -> list[dict[str, object]]:
        lines = [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]
        return sorted(({k: v for k, v in x.items() if k != "id"} for x in lines[1:]), key=str)

    assert rows(out) == rows(again) and len(rows(out)) == 3
    with (
        chitta.open(root, read_only=True, embedder=None) as a,
        chitta.open(copy, read_only=True, embedder=None) as b,
    ):
        key = lambda m: (m.text, m.kind, m.realm, m.tags, m.confidence, m.meta, m.created_at)
        assert sorted(map(key, a.memories()), key=str) == sorted(map(key, b.memories()), key=str)


def test_import_of_a_bad_file_writes_nothing(tmp_path: Path) -> None:
    root, _ = _field(tmp_path)
    good = tmp_path / "m.jsonl"
    run("--path", str(root), "export", str(good))
    lines = good.read_text(encoding="utf-8").splitlines()
    bad_row = json.loads(lines[2])
    bad_row["kind"] = "not-a-kind"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], lines[1], json.dumps(bad_row), lines[3]]) + "\n")
    target = tmp_path / "t"
    with chitta.open(target, embedder=None) as f:
        f.remember("already here")
    r = run("--path", str(target), "import", str(bad))
    assert r.returncode == 2 and "line 3" in r.stderr and "nothing was imported" in r.stderr
    not_export = tmp_path / "plain.jsonl"
    not_export.write_text('{"text": "x"}\n')
    r2 = run("--path", str(target), "import", str(not_export))
    assert r2.returncode == 2 and "chitta export" in r2.stderr
    with chitta.open(target, read_only=True, embedder=None) as f:
        assert [m.text for m in f.memories()] == ["already here"]


def test_one_exit_code_for_bad_values(tmp_path: Path) -> None:
    root, _ = _field(tmp_path)
    assert run("--path", str(root), "get", "abc").returncode == 2
    assert run("--path", str(root), "remember", "x", "--confidence", "2").returncode == 2
    assert run("--path", str(root), "get", "12345").returncode == 5


def test_tables_and_dumps_leave_out_bulk(tmp_path: Path) -> None:
    root = tmp_path / "f"
    with chitta.open(root, embedder=None) as f:
        mid = f.remember("y" * 5000, embedding=np.ones(8, np.float32))
    table = run("--path", str(root), "get", str(mid))
    assert table.returncode == 0 and "--full shows all" in table.stdout
    assert "y" * 5000 not in table.stdout.replace("\n", "").replace("│", "").replace(" ", "")
    full = run("--path", str(root), "get", str(mid), "--full", "--json")
    assert json.loads(full.stdout)["text"] == "y" * 5000
    dumped = run("--path", str(root), "dump", "--json")
    records = [json.loads(x) for x in dumped.stdout.splitlines()]
    inner = [i for r in records if r["op"] == "Batch" for i in r["fields"]["ops"]]
    puts = [r["fields"] for r in records + inner if r["op"] == "PutPayload"]
    assert [p["embedding"] for p in puts] == ["<32 bytes>"]  # 8 float32
    raw = run("--path", str(root), "dump", "--json", "--vectors")
    assert "<32 bytes>" not in raw.stdout


def test_doctor_reports_the_field_and_what_to_do(tmp_path: Path) -> None:
    root, _ = _field(tmp_path)
    r = run("--path", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    checks = {c["check"]: c for c in json.loads(r.stdout)["checks"]}
    assert checks["field"]["status"] == "ok" and "3 memories" in checks["field"]["detail"]
    assert checks["field files"]["status"] == "ok"  # created 0700 (FORMAT.md §1)
    assert checks["daemon"]["status"] == "off" and checks["daemon"]["next"] == "chitta serve"
    assert checks["chitta"]["detail"].startswith(chitta.__version__)
    missing = run("--path", str(tmp_path / "nowhere"), "doctor", "--json")
    gone = {c["check"]: c for c in json.loads(missing.stdout)["checks"]}
    assert gone["field"]["status"] == "missing" and "remember" in gone["field"]["next"]


def test_shell_completion_completes_commands_and_options(tmp_path: Path) -> None:
    script = run("completion", "bash")
    assert script.returncode == 0 and "_CHITTA_COMPLETE=bash_complete" in script.stdout
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "COMP_WORDS": "chitta rem",
        "COMP_CWORD": "1",
        "_CHITTA_COMPLETE": "bash_complete",
    }
    done = subprocess.run(
        [chitta_exe()], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert "plain,remember" in done.stdout.splitlines()
    env["COMP_WORDS"], env["COMP_CWORD"] = "chitta remember x --ki", "3"
    done = subprocess.run(
        [chitta_exe()], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert "plain,--kind" in done.stdout.splitlines()
