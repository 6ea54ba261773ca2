"""Who said each memory, for the speaker prior of recall (a mixin of
RecallIndexOrgan; ``chitta.recall.context.speaker_of`` reads it from the
memory's ``meta["speaker"]``).

Kept as id -> speaker and speaker -> ids. ``speaker_ids(query)`` returns the
sorted ids of the one speaker the query names (``chitta.recall.query
.named_speaker``), None when it names none or several. Derived state: rebuilt
from puts and meta updates on replay, saved in a checkpoint's state as the
optional ``speakers`` list (absent: taken from the puts' meta).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import numpy.typing as npt

from chitta.recall.context import speaker_of
from chitta.recall.query import named_speaker

U64 = npt.NDArray[np.uint64]


class SpeakerIndex:
    """speaker bookkeeping; the attributes live on the organ."""

    _speaker: dict[int, str]
    _by_speaker: dict[str, set[int]]
    _speaker_arrays: dict[str, U64]

    def _init_speakers(self) -> None:
        self._speaker = {}
        self._by_speaker = defaultdict(set)
        self._speaker_arrays = {}  # derived: sorted ids per speaker, cleared on change

    def _note_speaker(self, mid: int, meta: Any) -> None:
        """Record ``mid``'s speaker from its (new) meta; a meta without one clears it."""
        self._forget_speaker(mid)
        who = speaker_of(meta) if isinstance(meta, dict) else None
        if who is not None:
            self._speaker[mid] = who
            self._by_speaker[who].add(mid)
            self._speaker_arrays.pop(who, None)

    def _forget_speaker(self, mid: int) -> None:
        who = self._speaker.pop(mid, None)
        if who is None:
            return
        members = self._by_speaker[who]
        members.discard(mid)
        if not members:
            del self._by_speaker[who]
        self._speaker_arrays.pop(who, None)

    def speaker_ids(self, query: str) -> U64 | None:
        """Sorted ids of the memories said by the one speaker ``query`` names."""
        if not self._by_speaker:
            return None
        who = named_speaker(query, self._by_speaker.keys())
        if who is None:
            return None
        arr = self._speaker_arrays.get(who)
        if arr is None:
            members = self._by_speaker[who]
            arr = np.fromiter(members, np.uint64, len(members))
            arr.sort()
            self._speaker_arrays[who] = arr
        return arr

    def named_speaker(self, query: str) -> str | None:
        """The one speaker ``query`` names (chitta.recall.query.named_speaker), else None."""
        return named_speaker(query, self._by_speaker.keys()) if self._by_speaker else None

    def speakers_state(self) -> list[list[Any]]:
        return [[mid, who] for mid, who in self._speaker.items()]

    def restore_speakers(
        self, saved: list[list[Any]] | None, mids: list[int], metas: list[Any]
    ) -> None:
        """From a checkpoint's ``speakers`` list, else from the live puts' meta."""
        if saved is None:
            pairs: Any = (
                (mid, speaker_of(meta) if isinstance(meta, dict) else None)
                for mid, meta in zip(mids, metas)
            )
        else:
            pairs = saved
        for mid, who in pairs:
            if isinstance(who, str) and who:
                self._speaker[int(mid)] = who
                self._by_speaker[who].add(int(mid))
