"""Smoke runs of the disk fuzzers (tests/fuzz/fuzz_disk.py): a few thousand coverage-guided
inputs per target, as a real subprocess; a crash (anything but a ChittaError, or what the
checkpoint loader turns into CheckpointIgnored) makes libFuzzer exit non-zero with the
input. The long runs (>= 1M executions each) are local: see the module's docstring."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

HARNESS = Path(__file__).resolve().parent / "fuzz_disk.py"


@pytest.mark.parametrize("target", ["segment", "checkpoint"])
def test_fuzzer_smoke_run_finds_no_crash(tmp_path: Path, target: str) -> None:
    runs = 2000
    out = subprocess.run(
        [sys.executable, str(HARNESS), target, f"-runs={runs}", "-max_len=4096", "-seed=1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"Done {runs} runs" in out.stderr
    assert "cov: " in out.stderr and " cov: 0 " not in out.stderr  # chitta's code is covered
