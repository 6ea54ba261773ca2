"""The Replicator: one field's link to its bucket prefix.

Two daemon threads: the shipper (this machine's new records out, every
``ship_interval`` or at once when a sync-mode writer waits: every writer
waiting then shares the next chunk, a group commit) and the fetcher (other
machines' chunks in, every ``pull_interval``). Errors never stop the threads:
they are kept in ``status()`` (the lag grows while the store is away) and the
work is retried with a back-off. In ``"sync"`` mode each write call returns
only once the bucket holds the chunk with its record, or raises
``RemoteUnavailable`` after ``timeout`` seconds (the record stays in the local
log and is shipped when the store is back; the call was not acknowledged).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta.errors import ChittaError, RemoteError, RemoteUnavailable
from chitta.remote.fetch import Fetcher
from chitta.remote.ship import Progress, Shipper, wait_until
from chitta.remote.store import ObjectStore
from chitta.remote.url import RemoteURL

if TYPE_CHECKING:
    from chitta.field import Field

MODES = ("async", "sync")


class Replicator:
    def __init__(
        self,
        root: Path,
        url: RemoteURL,
        store: ObjectStore,
        field_id: str,
        *,
        mode: str = "async",
        timeout: float = 10.0,
        ship_interval: float = 0.05,
        pull_interval: float = 0.25,
    ) -> None:
        self.root, self.url, self.store, self.mode, self.timeout = root, url, store, mode, timeout
        self.field_id = field_id
        self.ship_interval, self.pull_interval = ship_interval, pull_interval
        self.progress = Progress()
        self._fid = bytes.fromhex(field_id)
        self.instance = 0
        self.shipper: Shipper | None = None
        self.fetcher = Fetcher(root, store, self._fid, 0, self.progress)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._pull_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.last_error: str | None = None
        self.errors = 0
        self._unshipped_since: float | None = None
        self.last_shipped: float | None = None
        self.last_pulled: float | None = None
        self.field: Field | None = None

    # ---- lifecycle --------------------------------------------------------------------
    def start(self, instance: int | None) -> None:
        """Begin shipping as ``instance`` (None: a read-only handle, fetch only)."""
        self.instance = instance or 0
        self.fetcher.own = self.instance
        if instance:
            self.shipper = Shipper(
                self.root, self.store, self._fid, instance, self.progress, wake=self._wake.set
            )
            self._spawn(self._ship_loop, "chitta-remote-ship")
        self._spawn(self._pull_loop, "chitta-remote-pull")

    def _spawn(self, target: Any, name: str) -> None:
        t = threading.Thread(target=target, name=name, daemon=True)
        t.start()
        self._threads.append(t)

    def close(self, drain: float | None = None) -> None:
        """Stop the threads after a last attempt (up to ``drain`` s) to ship what is left."""
        if self._stop.is_set():
            return
        self.field = None
        if self.shipper is not None:
            self.wait_shipped(self.timeout if drain is None else drain, raise_error=False)
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=self.timeout + 1)
        if self.shipper is not None:
            self.shipper.close()

    # ---- the loops ----------------------------------------------------------------------
    def _note_error(self, exc: Exception) -> None:
        self.errors += 1
        self.last_error = f"{type(exc).__name__}: {exc}"

    def _ship_loop(self) -> None:
        assert self.shipper is not None
        backoff = 0.0
        while not self._stop.is_set():
            self._wake.wait(backoff or self.ship_interval)
            self._wake.clear()
            self._track_lag()  # before a pass that may block on an unreachable store
            try:
                while self.shipper.ship_once():  # as long as there is more, no pause
                    self.last_shipped = time.time()
                self.last_error, backoff = None, 0.0
            except (ChittaError, OSError) as exc:
                self._note_error(exc)
                backoff = min(2.0, max(0.1, backoff * 2))
            self._track_lag()

    def _track_lag(self) -> None:
        assert self.shipper is not None
        try:
            lag = self.shipper.lag_bytes()
        except OSError:
            return
        if lag == 0:
            self._unshipped_since = None
        elif self._unshipped_since is None:
            self._unshipped_since = time.time()

    def _pull_loop(self) -> None:
        backoff = 0.0
        while not self._stop.wait(backoff or self.pull_interval):
            try:
                self.pull()
                backoff = 0.0
            except (ChittaError, OSError) as exc:
                self._note_error(exc)
                backoff = min(2.0, max(0.25, backoff * 2))

    # ---- the field's hooks --------------------------------------------------------------
    def pull(self) -> int:
        """Fetch every new chunk of other machines now. Returns chunks applied."""
        with self._pull_lock:
            n = self.fetcher.pull_once()
            self.last_pulled = time.time()
            return n

    def pull_quietly(self) -> None:
        """``refresh()``'s pull: an unreachable store is noted, not raised (the field
        goes on with what it has; ``status()`` shows it)."""
        try:
            self.pull()
        except (ChittaError, OSError) as exc:
            self._note_error(exc)

    def wait_shipped(self, timeout: float | None = None, *, raise_error: bool = True) -> bool:
        """Block until the bucket holds everything this instance has written so far."""
        shipper = self.shipper
        if shipper is None:
            return True
        target = shipper.own_end()
        if target is None:
            return True
        self._wake.set()
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        if wait_until(self.progress, lambda: shipper.caught_up(target), deadline):
            return True
        if shipper.diverged.get(self.instance):
            why = shipper.diverged[self.instance]
            if raise_error:
                raise RemoteError(why)
            return False
        if raise_error:
            raise RemoteUnavailable(
                f"the write is in the local log but the bucket {self.url} did not take it within "
                f"{self.timeout:g} s ({self.last_error or 'no answer'}); it was not acknowledged: retry, "
                "or open with remote_durability='async'"
            )
        return False

    def status(self) -> dict[str, Any]:
        shipper = self.shipper
        lag_bytes = 0
        if shipper is not None:
            try:
                lag_bytes = shipper.lag_bytes()
            except OSError:
                lag_bytes = -1
        if lag_bytes > 0 and self._unshipped_since is None:
            self._unshipped_since = time.time()  # seen here first (the ship loop may be blocked)
        since = self._unshipped_since
        return {
            "url": str(self.url),
            "endpoint": self.url.endpoint,
            "mode": self.mode,
            "field_id": self.field_id,
            "lag_bytes": lag_bytes,
            "lag_seconds": round(time.time() - since, 3)
            if (since is not None and lag_bytes)
            else 0.0,
            "chunks_shipped": shipper.chunks if shipper else 0,
            "bytes_shipped": shipper.bytes if shipper else 0,
            "chunks_fetched": self.fetcher.chunks,
            "bytes_fetched": self.fetcher.bytes,
            "rejected": dict(self.fetcher.rejected),
            "diverged": {
                f"{k:08x}": v
                for k, v in [
                    *self.fetcher.diverged.items(),
                    *(shipper.diverged.items() if shipper else ()),
                ]
            },
            "last_error": self.last_error,
            "errors": self.errors,
            "last_shipped": self.last_shipped,
            "last_pulled": self.last_pulled,
        }

    def compact(self, *, small: int | None = None) -> dict[str, int]:
        """Merge the small chunks of sealed segments into larger objects (every
        instance of the prefix; chitta/remote/compact.py). Returns what it did."""
        from chitta.remote.compact import SMALL, compact

        done = compact(self.store, self._fid, small=SMALL if small is None else small)
        return {
            "objects_written": done.objects_written,
            "chunks_deleted": done.chunks_deleted,
            "bytes_merged": done.bytes_merged,
        }

    def publish_checkpoint(self) -> str:
        """Write a checkpoint of the field and publish it in the bucket (CURRENT swapped
        by a conditional put). Returns the name CURRENT names afterwards."""
        from chitta.remote.checkpoints import publish

        if self.field is None:
            raise RemoteError("the replicator is not attached to an open field")
        return publish(self.field, self)
