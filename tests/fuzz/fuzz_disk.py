"""Coverage-guided fuzzing (atheris, libFuzzer's engine) of the bytes chitta reads from disk.

Targets:
  segment     one segment file: the salvage reader with payload decode and validation
              (``chitta verify``'s path), then the strict reader. Anything but a ChittaError
              is a crash.
  checkpoint  a checkpoint state body, framed with a valid CRC (so the fuzzer reaches the
              content checks, not only the checksum) beside the golden checkpoint's
              sidecars: read, migrate, check, restore every registered organ. Anything but
              what the loader turns into CheckpointIgnored is a crash; a restored memories
              organ must give back every text.

    python tests/fuzz/fuzz_disk.py segment -runs=1000000 -max_len=4096
    python tests/fuzz/fuzz_disk.py checkpoint -runs=1000000

Seeds are the golden files (tests/format/golden). Work files go to /dev/shm when it exists.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import atheris

from chitta import _core, ops
from chitta.errors import ChittaError
from chitta.field.checkpoint import content, snapshot
from chitta.field.checkpoint import format as fmt
from chitta.field.inspect import verify
from chitta.organs import registry

GOLDEN = Path(__file__).resolve().parents[1] / "format" / "golden"
# open_write.load's: snapshot.restore turns an OSError of a sidecar (missing, unreadable) into a
# CorruptionError, and so does this harness
LOADER_ERRORS = (ChittaError, KeyError, TypeError, ValueError, IndexError, OSError)
WORK = Path(
    tempfile.mkdtemp(prefix="chitta-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
)


def _segment_root() -> Path:
    root = WORK / "segment"
    (root / "segments").mkdir(parents=True, exist_ok=True)
    return root


SEGMENT_ROOT = _segment_root()
SEGMENT = SEGMENT_ROOT / "segments" / "00000001_000000000001.seg"


def segment_input(data: bytes) -> None:
    SEGMENT.write_bytes(data)
    verify(SEGMENT_ROOT)  # salvage: reports damage, never raises for it
    try:
        log = _core.SegmentLog(str(SEGMENT_ROOT), read_only=True)
        try:
            result = log.read_new()
        finally:
            log.close()
        for i in range(len(result)):
            ops.validate(ops.decode(int(result.op_types[i]), result.payload(i)))
    except ChittaError:
        pass


def _checkpoint_dir() -> Path:
    newest = max(GOLDEN.glob("checkpoint-v*"), key=lambda p: int(p.name.rsplit("v", 1)[1]))
    golden = next(iter(sorted((newest / "checkpoint").glob("ckpt-*"))))
    live = WORK / "ckpt" / golden.name
    shutil.copytree(golden, live)
    shutil.copytree(newest / "segments", WORK / "segments")  # state 10 refers into the log
    return live


CKPT = _checkpoint_dir()


def checkpoint_input(data: bytes) -> None:
    fmt._write_atomic_file(  # a well-framed state file around the fuzzed body
        CKPT / "state",
        [fmt._HEAD.pack(fmt.STATE_MAGIC, fmt.STATE_VERSION, 0, len(data)), data],
    )
    try:
        version, state = fmt.read_state(CKPT / "state")
        state = snapshot.migrate(version, state)
        content.check(state)
        ctx = snapshot.RestoreFiles(CKPT, version, state["sidecars"])
        ctx.shared["root"] = WORK  # as snapshot.restore sets them
        ctx.shared["watermark"] = state["watermark"]["positions"]
        organs = registry.build()
        for organ in organs:
            if organ.name in state["organs"]:
                organ.restore(state["organs"][organ.name], ctx)
    except LOADER_ERRORS:
        return
    memories = organs[0]
    for mid in list(memories.live_ids()):  # a restored organ answers for every memory it holds
        text = memories.text(mid)
        assert text is None or isinstance(text, str)


def seeds(target: str) -> list[bytes]:
    if target == "segment":
        return [p.read_bytes() for p in sorted(GOLDEN.glob("v*/segments/*.seg"))]
    states = []
    for state_file in sorted(GOLDEN.glob("checkpoint-v*/checkpoint/ckpt-*/state")):
        states.append(bytes(fmt._read_checked(state_file, fmt.STATE_MAGIC, 99, "state")[0]))
    return states


def main() -> None:
    target = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if target not in ("segment", "checkpoint"):
        sys.exit("usage: fuzz_disk.py segment|checkpoint [libFuzzer flags]")
    corpus = WORK / f"seeds-{target}"
    corpus.mkdir()
    for i, seed in enumerate(seeds(target)):
        (corpus / f"seed{i}").write_bytes(seed)
    one = segment_input if target == "segment" else checkpoint_input
    atheris.instrument_all()  # coverage of every loaded Python function (chitta's included)
    atheris.Setup([*sys.argv, str(corpus)], one)
    try:
        atheris.Fuzz()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
