"""MEMORY.md sync: import (idempotent), write-back between markers, bad input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from clitools import chitta_exe as _chitta_exe

import chitta
from chitta.errors import InvalidArgument
from chitta.field.importers import memory_md as mm

PERSON = """# Project memory

- Use pnpm, never npm, in this repo.
- Tests need a running Postgres 16;
  start it with `make db`.

## Style
Prefer small pull requests.
Explain why, not what.

* Ravi reviews before lunch
1. Deploys are manual on Fridays
"""


def field(tmp_path: Path) -> chitta.Field:
    return chitta.open(tmp_path / "field", embedder=None)


def test_parse_entries_and_headings() -> None:
    got = [(e.text, e.heading) for e in mm.parse(PERSON)]
    assert got == [
        ("Use pnpm, never npm, in this repo.", "Project memory"),
        ("Tests need a running Postgres 16; start it with `make db`.", "Project memory"),
        ("Prefer small pull requests. Explain why, not what.", "Style"),
        ("Ravi reviews before lunch", "Style"),
        ("Deploys are manual on Fridays", "Style"),
    ]


def test_import_is_human_provenance_and_idempotent(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    md.write_text(PERSON)
    with field(tmp_path) as f:
        r1 = mm.sync(f, md)
        assert (r1.entries, r1.imported, r1.already_present) == (5, 5, 0)
        m = f.get(r1.imported_ids[1])
        assert m.source_tool == "memory-md" and m.text.startswith(
            "Tests need a running Postgres 16"
        )
        assert m.meta["provenance"] == "human" and m.meta["source"] == "MEMORY.md"
        assert m.meta["heading"] == "Project memory" and m.meta["file"] == str(md.absolute())
        r2 = mm.sync(f, md)
        assert (r2.imported, r2.already_present) == (0, 5) and len(f) == 5
        # an edited line is a new memory; the old one stays
        md.write_text(md.read_text().replace("never npm", "never yarn"))
        r3 = mm.sync(f, md)
        assert r3.imported == 1 and len(f) == 6
    with chitta.open(tmp_path / "field", read_only=True, embedder=None) as again:  # survives replay
        assert (
            sum(1 for m in again.memories() if m.meta and m.meta.get("source") == "MEMORY.md") == 6
        )


def test_writes_back_top_memories_and_keeps_person_text_byte_for_byte(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    head = "# Notes\r\n\r\n- keep me exactly  \r\n"
    tail = "\r\nfooter paragraph, untouched ✓\r\n"
    md.write_bytes((head + mm.BEGIN + "\r\n- stale line\r\n" + mm.END + tail).encode())
    with field(tmp_path) as f:
        weak = f.remember("the staging port is 6543")
        strong = f.remember("deploys need the VPN")
        f.update(weak, strength=0.2)
        f.update(strong, strength=0.9)
        r = mm.sync(f, md)
    data = md.read_bytes().decode()
    before, section, after = mm.split_markers(data)
    assert before == head and after == tail  # byte for byte, CRLF kept
    assert (
        section
        == mm.BEGIN + "\r\n- deploys need the VPN\r\n- the staging port is 6543\r\n" + mm.END
    )
    assert r.written == 2 and r.imported == 2  # "keep me exactly" and the footer
    assert (
        "stale line" not in data and data.count("keep me exactly") == 1
    )  # own entries not written back


def test_budget_keeps_whole_lines(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    with field(tmp_path) as f:
        a = f.remember("a" * 50)
        f.remember("b" * 10)
        f.update(a, strength=1.0)
        r = mm.sync(f, md, budget_bytes=20)
    _, section, _ = mm.split_markers(md.read_text())
    assert section == mm.BEGIN + "\n- bbbbbbbbbb\n" + mm.END  # the long one is skipped, not cut
    assert (r.written, r.section_bytes, r.left_out) == (1, 13, 1)


def test_section_appended_when_absent_and_file_created(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    md.write_text("no trailing newline")
    with field(tmp_path) as f:
        f.remember("x marks the spot")
        mm.sync(f, md)
        assert (
            md.read_text() == f"no trailing newline\n\n{mm.BEGIN}\n- x marks the spot\n{mm.END}\n"
        )
        new = tmp_path / "NEW.md"
        mm.sync(f, new)
        # another file's imports are written back
        lines = new.read_text().splitlines()
        assert lines[0] == mm.BEGIN and lines[-1] == mm.END
        assert sorted(lines[1:-1]) == ["- no trailing newline", "- x marks the spot"]


@pytest.mark.parametrize(
    "content",
    [
        f"{mm.BEGIN}\nno end\n",
        f"{mm.END}\n{mm.BEGIN}\n",
        f"{mm.BEGIN}\n{mm.END}\n{mm.BEGIN}\n{mm.END}\n",
    ],
)
def test_bad_markers_change_nothing(tmp_path: Path, content: str) -> None:
    md = tmp_path / "MEMORY.md"
    md.write_text("- an entry\n" + content)
    with field(tmp_path) as f:
        with pytest.raises(InvalidArgument, match="chitta:begin"):
            mm.sync(f, md)
        assert len(f) == 0
    assert md.read_text() == "- an entry\n" + content


def test_bad_input(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    md.write_bytes(b"- ok\n- \xff\xfe broken\n")
    with field(tmp_path) as f:
        with pytest.raises(InvalidArgument, match="UTF-8"):
            mm.sync(f, md)
        with pytest.raises(InvalidArgument, match="directory"):
            mm.sync(f, tmp_path)
        with pytest.raises(InvalidArgument, match="does not exist"):
            mm.sync(f, tmp_path / "nope" / "MEMORY.md")
        for budget in (-1, True, 1.5, 1 << 30):
            with pytest.raises(InvalidArgument, match="budget_bytes"):
                mm.sync(f, md, budget_bytes=budget)  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument, match="path"):
            mm.sync(f, 42)  # type: ignore[arg-type]
        assert len(f) == 0
    assert md.read_bytes() == b"- ok\n- \xff\xfe broken\n"


def test_cli_sync_memory_md(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    md.write_text(PERSON)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CHITTA_HOME": str(tmp_path / "field"),
        "CHITTA_EMBEDDER": "none",
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_chitta_exe(), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            cwd=tmp_path,
            timeout=60,
        )

    assert run("remember", "the field remembers this").returncode == 0
    r = run("sync-memory-md", str(md), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert (rep["entries"], rep["imported"], rep["written"]) == (5, 5, 1)
    assert md.read_text().startswith(PERSON) and "- the field remembers this\n" in md.read_text()
    r = run("sync-memory-md", str(md))
    assert r.returncode == 0 and "0 imported, 5 already known" in r.stdout
    assert run("sync-memory-md", str(md), "--budget", "-5").returncode == 2
    assert run("sync-memory-md", str(tmp_path)).returncode == 2  # click: a directory
    os.chmod(md, 0o644)


def _claude_code_dir(tmp_path: Path) -> Path:
    """A MEMORY.md index in Claude Code's layout with two topic files, one missing link,
    and one link that leaves the directory."""
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "user_role.md").write_text(
        "---\nname: User role\ndescription: who the user is\ntype: user\n---\n\n"
        "The user is a data engineer who prefers SQL over pandas.\n",
        encoding="utf-8",
    )
    (mem / "deploys.md").write_text("Deploys go out on Tuesdays after the freeze.\n")
    (tmp_path / "secret.md").write_text("outside the memory directory\n")
    (mem / "MEMORY.md").write_text(
        "- [User role](user_role.md) — who the user is\n"
        "- [Deploys](deploys.md): when deploys happen\n"
        "- [Gone](gone.md) — a topic whose file was deleted\n"
        "- [Outside](../secret.md) — not read\n"
        "- Plain line, no link.\n",
        encoding="utf-8",
    )
    return mem / "MEMORY.md"


def test_index_lines_read_their_topic_files(tmp_path: Path) -> None:
    md = _claude_code_dir(tmp_path)
    with field(tmp_path) as f:
        report = mm.sync(f, md)
        by_text = {m.text: m for m in f.memories()}
    assert report.imported == 5
    user = by_text["User role: The user is a data engineer who prefers SQL over pandas."]
    assert user.meta is not None and user.meta["topic_file"] == str(md.parent / "user_role.md")
    assert (user.meta["title"], user.meta["description"], user.meta["type"]) == (
        "User role",
        "who the user is",
        "user",
    )
    assert "memory-md:user" in user.tags
    assert "Deploys: Deploys go out on Tuesdays after the freeze." in by_text
    assert "[Gone](gone.md) — a topic whose file was deleted" in by_text  # as written
    assert "[Outside](../secret.md) — not read" in by_text  # never read outside the directory
    assert not any("outside the memory directory" in t for t in by_text)


def test_an_edited_topic_file_is_a_new_memory_and_a_resync_adds_nothing(tmp_path: Path) -> None:
    md = _claude_code_dir(tmp_path)
    with field(tmp_path) as f:
        mm.sync(f, md)
        assert mm.sync(f, md).imported == 0
        (md.parent / "deploys.md").write_text("Deploys go out on Wednesdays now.\n")
        again = mm.sync(f, md)
        texts = {m.text for m in f.memories()}
    assert again.imported == 1 and "Deploys: Deploys go out on Wednesdays now." in texts


def test_write_back_skips_what_the_file_says_up_to_case_and_punctuation(tmp_path: Path) -> None:
    md = tmp_path / "MEMORY.md"
    md.write_text("- deploys need the vpn\n- Use pnpm\n", encoding="utf-8")
    with field(tmp_path) as f:
        f.remember("Deploys need the VPN.")  # the same line, but for case and the period
        f.remember("USE PNPM!")
        f.remember("the staging box is staging-2")  # new: written back
        report = mm.sync(f, md)
    section = md.read_text(encoding="utf-8").split(mm.BEGIN)[1]
    assert report.written == 1 and "- the staging box is staging-2" in section
    assert "VPN" not in section and "PNPM" not in section


def test_a_topic_file_that_is_not_text_changes_nothing(tmp_path: Path) -> None:
    md = _claude_code_dir(tmp_path)
    (md.parent / "user_role.md").write_bytes(b"\xff\xfe not utf-8")
    before = md.read_bytes()
    with field(tmp_path) as f:
        with pytest.raises(InvalidArgument, match="user_role.md is not UTF-8"):
            mm.sync(f, md)
        assert len(f) == 0
    assert md.read_bytes() == before
