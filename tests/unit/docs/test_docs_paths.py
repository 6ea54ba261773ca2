"""Every repository path the user docs name exists.

Scans README.md and docs/*.md for paths in backticks (also inside commands, e.g.
``python benchmarks/eval_locomo.py --cache``) that start with a top-level directory of the
repository, and for relative Markdown link targets; the oracle is the file tree. Globs
(``csrc/wal/put_queue.*``), placeholders (``checkpoint-v<N>``) and brace lists
(``candidates.{h,cc}``) must match at least one file. A name that is meant not to exist (a file written at run time, say) goes in
``INTENTIONAL`` with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = ("chitta", "csrc", "_ext", "benchmarks", "research", "tests", "docs", "tools", "wheels")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP) + r")/(?:[\w./*{},-]|<\w+>)*)")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")

# Names the docs use on purpose although no such file is in the repository: (doc, path) -> why.
INTENTIONAL: dict[tuple[str, str], str] = {
    (
        "docs/API.md",
        "chitta/chitta_field.h",
    ): "where the wheel installs csrc/include/chitta/chitta_field.h",
    ("docs/API.md", "user_role.md"): "a topic file in the example of Claude Code's memory layout",
}


def _expand(path: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [
        x
        for alt in m.group(1).split(",")
        for x in _expand(path[: m.start()] + alt + path[m.end() :])
    ]


def _exists(path: str, base: Path = ROOT) -> bool:
    path = re.sub(r"<\w+>", "*", path.rstrip(".,;:"))  # a placeholder: checkpoint-v<N>
    for candidate in _expand(path):
        if any(c in candidate for c in "*?["):
            if not any(base.glob(candidate)):
                return False
        elif not (base / candidate).exists():
            return False
    return True


def named_paths() -> list[tuple[str, str, Path]]:
    """(doc, path as written, the directory it is relative to)."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        rel = doc.relative_to(ROOT).as_posix()
        for span in re.findall(r"`([^`\n]+)`", text):
            out += [(rel, p, ROOT) for p in PATH.findall(span)]
        for target in LINK.findall(text):
            if "://" not in target and not target.startswith("mailto:"):
                out.append((rel, target, doc.parent))
    return out


def test_the_scan_finds_paths() -> None:
    found = {p for _, p, _ in named_paths()}
    assert "benchmarks/RESULTS.md" in found and any(p.startswith("csrc/") for p in found)


@pytest.mark.parametrize("doc", [d.relative_to(ROOT).as_posix() for d in DOCS])
def test_named_paths_exist(doc: str) -> None:
    missing = sorted(
        {
            p
            for d, p, base in named_paths()
            if d == doc and (d, p) not in INTENTIONAL and not _exists(p, base)
        }
    )
    assert not missing, (
        f"{doc} names paths that are not in the repository: {missing}. Fix the reference, or add "
        "it to INTENTIONAL in tests/unit/docs/test_docs_paths.py with the reason"
    )
