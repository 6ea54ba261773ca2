"""The handle's recent recalls, so feedback can name a recall instead of repeating it.

Each recall that returns hits gets a ``recall_id`` (12 hex digits, random: unique
across handles and processes for any practical purpose), carried by every one of its
hits. The handle keeps the last ``KEEP`` recalls in memory (their query and hit ids);
``feedback(recall_id=...)`` takes the query and checks the memory from there. Nothing is
logged: the feedback op records the query and the memory as before, so replay needs no
recall id. A recall id from another process, or one that aged out, is NotFound.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

from chitta.errors import InvalidArgument, NotFound

KEEP = 256


class RecentRecalls:
    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._by_id: OrderedDict[str, tuple[str | None, tuple[int, ...]]] = OrderedDict()

    def record(self, query: str | None, ids: tuple[int, ...]) -> str:
        rid = os.urandom(6).hex()
        with self._lock:
            self._by_id[rid] = (query, ids)
            while len(self._by_id) > self.keep:
                self._by_id.popitem(last=False)
        return rid

    def get(self, recall_id: object) -> tuple[str | None, tuple[int, ...]]:
        """(query, hit ids) of a recent recall; NotFound / InvalidArgument otherwise."""
        if not isinstance(recall_id, str) or not recall_id:
            raise InvalidArgument(
                f"recall_id must be the text a recall returned, not {recall_id!r:.40}"
            )
        with self._lock:
            found = self._by_id.get(recall_id)
        if found is None:
            raise NotFound(
                f"no recent recall {recall_id!r:.40} on this handle (it keeps the last {self.keep}); "
                "give memory_id and query instead"
            )
        return found


__all__ = ["KEEP", "RecentRecalls"]
