"""Cost of kind inference on the write path, side by side in one process (docs/KINDS.md).

Three remember() shapes on one field without an embedder, interleaved for 4 rounds,
best per call: the native plain path (no inference), a non-plain write that infers
(realm given) and the same with an explicit kind (no inference). Also the classifier
alone on the same text.

    python benchmarks/bench_kinds.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable

import chitta
from chitta.policies.kinds import infer_kind

TEXT = (
    "The user prefers dark mode in every editor, wants terse commit messages and "
    "runs the test suite before each push; remember this for the next session ok."
)


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as d, chitta.open(d + "/f", embedder=None) as f:
        cases: dict[str, Callable[[], object]] = {
            "remember(text): native plain path, no inference": lambda: f.remember(TEXT),
            "remember(text, realm): inferred": lambda: f.remember(TEXT, realm="r"),
            "remember(text, realm, kind=): explicit": lambda: f.remember(
                TEXT, realm="r", kind="observation"
            ),
            "infer_kind(text) alone": lambda: infer_kind(TEXT),
        }
        best: dict[str, float] = {}
        for _ in range(4):
            for name, fn in cases.items():
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                len(f)
                best[name] = min(best.get(name, 1e9), (time.perf_counter() - t0) / n * 1e6)
    for name, us in best.items():
        print(f"{us:7.2f} us/call  {name}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
