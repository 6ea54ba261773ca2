"""Rewrite tests/format/golden/v<major>.<minor>/ from tests/format/golden.py
(``--codes``: tests/format/golden/v<major>.<minor>-sparse-codes/ from
tests/format/golden_codes.py).

Only together with a segment format version bump (``--codes``: a change of op 12
or op 68): old goldens stay, so every version keeps being read by the tests.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "format"))

from golden import write_golden
from golden_codes import write_codes_golden

from chitta import _core


def main() -> None:
    major, minor = _core.SEGMENT_FORMAT_VERSION
    codes = "--codes" in sys.argv[1:]
    name = f"v{major}.{minor}" + ("-sparse-codes" if codes else "")
    out = HERE / "tests" / "format" / "golden" / name / "segments"
    with tempfile.TemporaryDirectory() as tmp:
        (write_codes_golden if codes else write_golden)(Path(tmp))
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for seg in (Path(tmp) / "segments").glob("*.seg"):
            shutil.copy(seg, out / seg.name)
            print(out / seg.name)


if __name__ == "__main__":
    main()
