"""Write tests/format/golden/checkpoint-v<state version>/: the golden segment
(tests/format/golden.py) plus a checkpoint of it in the current state format.

Only together with a checkpoint state version bump: old goldens stay, so every
version keeps loading through its migration in the tests.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests" / "format"))

from golden import write_golden

import chitta
from chitta.encode import HashingEmbedder
from chitta.field.checkpoint import format as fmt
from chitta.field.checkpoint.run import write_checkpoint
from chitta.recall.engine import RecallSettings


def main() -> None:
    out = HERE / "tests" / "format" / "golden" / f"checkpoint-v{fmt.STATE_VERSION}"
    if out.exists():
        sys.exit(f"{out} exists: goldens are never rewritten (bump the version instead)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "field"
        write_golden(root)
        # state 5 on: with the expansion lane's word table (vocab.emb) of a 4-d hashing embedder
        settings = RecallSettings(fusion_alpha=0.5, expansion_weight=0.3)
        with chitta.open(
            root, read_only=True, embedder=HashingEmbedder(4), recall_settings=settings
        ) as f:
            write_checkpoint(root, vocabulary=f.core.engine.vocabulary)
        shutil.copytree(root, out, ignore=shutil.ignore_patterns("LOCK", "locks", "MANIFEST"))
    for p in sorted(out.rglob("*")):
        print(p.relative_to(HERE))


if __name__ == "__main__":
    main()
