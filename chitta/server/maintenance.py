"""The daemon's periodic work: the maintenance passes (write gate, encoder
learning, re-encoding, surprise and demotion tiers) and, when the compaction
policy says so, a checkpoint. Runs in one background thread of ``chitta serve``."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import AbstractContextManager
from typing import Any

from chitta.errors import ChittaError, LockedError
from chitta.field import Field
from chitta.field.background_priority import lower_this_thread
from chitta.field.checkpoint import CheckpointPolicy, store
from chitta.field.checkpoint.policy import saved_graph_lacks


class Maintainer:
    """Every ``every_s`` seconds: ``field.maintain()`` under the daemon's lock,
    then a checkpoint if ``policy`` finds one due (written by a read-only view,
    so requests are served meanwhile)."""

    def __init__(
        self,
        field: Field,
        lock: AbstractContextManager[Any],
        every_s: float,
        policy: CheckpointPolicy,
    ) -> None:
        self.field, self.lock, self.every_s, self.policy = field, lock, every_s, policy
        self.runs = 0
        self.last: dict[str, Any] = {}
        self.checkpoints = 0
        self._graph_lacks: tuple[str, int | None] | None = None  # (checkpoint read, its lack)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="chitta-maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=120)

    def _loop(self) -> None:
        lower_this_thread()
        while not self._stop.wait(self.every_s):
            try:
                self.run_once()
            except ChittaError as exc:  # reported, retried next round; never takes the daemon down
                print(
                    f"chitta serve: maintenance failed: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )

    def run_once(self) -> dict[str, Any]:
        t0 = time.perf_counter()
        with self.lock:
            self.field.refresh()
            passes = self.field.maintain() if not self.field.read_only else {}
            stats = self.field.stats()
        result: dict[str, Any] = {"passes": passes, "checkpoint": None}
        pruned = passes.get("pruned_staged") or 0
        if pruned:  # never silently: say what went and how to bring it back
            print(
                f"chitta serve: the write gate pruned {pruned} never-recalled memories "
                "(`chitta pruned` lists them, `chitta restore ID` brings one back)",
                file=sys.stderr,
            )
        live = store.current(self.field.path) if stats.checkpoint else None
        age = store.age_seconds(live) if live is not None else None
        reason = self.policy.due(
            stats.records_since_checkpoint, stats.bytes_since_checkpoint, age, self._lacks(live)
        )
        if reason is not None:
            try:
                info = self.field.checkpoint()
            except LockedError:
                result["checkpoint"] = "skipped: another process is writing one"
            else:
                self.checkpoints += 1
                result["checkpoint"] = {
                    "reason": reason,
                    "path": info.path,
                    "seconds": round(info.seconds, 3),
                }
        self.runs += 1
        result["seconds"] = round(time.perf_counter() - t0, 3)
        self.last = result
        return result

    def _lacks(self, live: Any) -> int | None:
        """What the live checkpoint's dense graph lacks (read once per checkpoint)."""
        if live is None:
            return None
        key = str(live)
        if self._graph_lacks is None or self._graph_lacks[0] != key:
            self._graph_lacks = (key, saved_graph_lacks(live))
        return self._graph_lacks[1]
