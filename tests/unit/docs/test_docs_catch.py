"""docs/ARCHITECTURE.md names every native source outside csrc/capi/ that catches.

The oracle is the source tree itself: every non-test C++ file under csrc/ (the C API
excepted: it catches at every entry point by design) with a ``catch (`` must be named in
the architecture document's native-core paragraph, and every file it names there must catch.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CATCH = re.compile(r"\bcatch\s*\(")


def catching_sources() -> set[str]:
    out = set()
    for path in (ROOT / "csrc").rglob("*"):
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix not in {".cc", ".h", ".cpp", ".hpp"} or rel.startswith("csrc/capi/"):
            continue
        if path.name.endswith("_test.cc"):
            continue
        code = "\n".join(line.split("//", 1)[0] for line in path.read_text().splitlines())
        if CATCH.search(code):
            out.add(rel)
    return out


def test_architecture_names_every_catch_outside_the_c_api() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    paragraph = doc.split("- **Native core**", 1)[1].split("\n- **", 1)[0]
    named = set(re.findall(r"`(csrc/[\w/.-]+\.(?:cc|h))`", paragraph))
    found = catching_sources()
    assert found, "no catch found at all: the scan is broken (posting_search.cc catches)"
    assert found <= named, (
        f"{sorted(found - named)} catch exceptions but docs/ARCHITECTURE.md (native core) does not "
        "say so: name them there with what they catch, or return a Status instead"
    )
    assert named <= found, (
        f"docs/ARCHITECTURE.md names {sorted(named - found)} as catching; they do not"
    )
