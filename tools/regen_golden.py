"""Rewrite tests/format/golden/v<major>.<minor>/ from tests/format/golden.py.

Only together with a segment format version bump: old goldens stay, so every
version keeps being read by the tests.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "format"))

from golden import write_golden

from chitta import _core


def main() -> None:
    major, minor = _core.SEGMENT_FORMAT_VERSION
    out = HERE / "tests" / "format" / "golden" / f"v{major}.{minor}" / "segments"
    with tempfile.TemporaryDirectory() as tmp:
        write_golden(Path(tmp))
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for seg in (Path(tmp) / "segments").glob("*.seg"):
            shutil.copy(seg, out / seg.name)
            print(out / seg.name)


if __name__ == "__main__":
    main()
