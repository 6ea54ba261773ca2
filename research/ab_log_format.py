"""A/B of the segment format: append and replay speed of this checkout against
another one (e.g. main, segment 1.0), interleaved in one run.

    python benchmarks/ab_log_format.py OTHER_PYTHON [N] [ROUNDS]

OTHER_PYTHON is an interpreter whose ``import chitta`` is the other checkout
(the machine-wide one has /work/main editable). Each round runs one child per
side in alternating order; a child appends N ~110-byte PutPayloads with
durability "flush" (one write per record) and N with "buffered", then replays
the buffered field with ``SegmentLog.read_new`` (framing + CRCs) and with
``chitta.open(read_only=True, embedder=None)`` (every organ; no model). Best of the rounds, per side,
and the ratio this/other (records/s; > 1 means this checkout is faster).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, tempfile, time
import chitta
from chitta import _core, ops
n = int(sys.argv[1])
payloads = [ops.encode(ops.PutPayload(id=(3 << 32) | (i + 1), text=f"memory number {i} about the build",
                                      created_ms=1_700_000_000_000 + i)) for i in range(n)]
out = {}
for mode in ("flush", "buffered"):
    d = tempfile.mkdtemp()
    log = _core.SegmentLog(d, instance_id=3, durability=mode)
    t = time.perf_counter()
    for p in payloads:
        log.append(0, p)
    log.close()
    out["append_" + mode] = n / (time.perf_counter() - t)
log = _core.SegmentLog(d, read_only=True)
t = time.perf_counter()
r = log.read_new()
out["read_new"] = len(r) / (time.perf_counter() - t)
log.close()
t = time.perf_counter()
with chitta.open(d, read_only=True, embedder=None) as f:  # the log, not the model
    assert len(f) == n
out["open_replay"] = n / (time.perf_counter() - t)
print(json.dumps(out))
"""


def main() -> None:
    other = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    best: dict[str, dict[str, float]] = {"this": {}, "other": {}}
    for r in range(rounds):
        sides = [("this", sys.executable), ("other", other)]
        for side, py in sides if r % 2 == 0 else sides[::-1]:
            with (
                tempfile.TemporaryDirectory() as cwd
            ):  # not the repo root: import the installed chitta
                res = json.loads(
                    subprocess.run(
                        [py, "-c", CHILD, str(n)],
                        capture_output=True,
                        text=True,
                        check=True,
                        cwd=cwd,
                    ).stdout.splitlines()[-1]
                )
            for k, v in res.items():
                best[side][k] = max(best[side].get(k, 0.0), v)
    print(f"{'case':<16}{'this rec/s':>14}{'other rec/s':>14}{'this/other':>12}")
    for k in best["this"]:
        a, b = best["this"][k], best["other"][k]
        print(f"{k:<16}{a:>14,.0f}{b:>14,.0f}{a / b:>12.3f}")


if __name__ == "__main__":
    main()
