"""The Field: one chitta memory store, as seen by one process.

Every change is validated, encoded as a typed op, appended to this instance's
segment, and only then applied to the organs. Opening a field and ``refresh()``
replay what the log holds (every instance's records, merged by
``(seqno, instance_id)``) into the organs. Nothing is applied that is not in
the log; nothing in the log is applied twice.

:class:`Field` is the facade: it checks its constructor's arguments, opens a
:class:`~chitta.field.core.FieldCore` (the log, the organ registry, the clock
and the lock) and delegates each public method to the feature module that
implements it (write, read, recall, replay, maintain, lifecycle, link,
checkpoint, calls), in a line or two. ``field.core`` is the documented way for
tools and tests to reach the core.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from chitta.encode.field_encoding import FieldEncoding
from chitta.errors import InvalidArgument, NotAFieldError
from chitta.field import (
    deferred,
    deferred_codes,
    extract_write,
    lifecycle,
    link,
    maintain,
    read,
    recall,
    replay,
    routed,
    vocab,
    write,
)
from chitta.field.checkpoint import open_write
from chitta.field.checkpoint.snapshot import CheckpointInfo
from chitta.field.core import FieldCore
from chitta.field.puts import NO_TAGS, infer_harness
from chitta.field.routed import ROUTE_DEFAULT, RouteInfo
from chitta.field.write import _OBSERVATION, _ONE
from chitta.model import FieldStats, Memory
from chitta.ops import checks as v
from chitta.organs import Organ
from chitta.policies.contradictions import ContradictionPair
from chitta.policies.curation import CurationReport
from chitta.policies.dedup import DedupReport
from chitta.policies.kinds import kind_from_text
from chitta.recall.engine import RecallSettings
from chitta.recall.hit import Hit
from chitta.recall.presets import settings_for
from chitta.recall.router_ir import RecallRequest

if TYPE_CHECKING:
    from typing_extensions import Self

DURABILITIES = ("flush", "fsync", "buffered")
DEFAULT_SEGMENT_BYTES = 256 << 20
_MAX_INSTANCE = 2**32 - 1

__all__ = ["DURABILITIES", "Field", "default_path", "infer_harness", "open"]


def default_path() -> Path:
    """``$CHITTA_HOME``, else ``$XDG_DATA_HOME/chitta/default`` (``~/.local/share``)."""
    home = os.environ.get("CHITTA_HOME")
    if home:
        return Path(home).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(data) / "chitta" / "default"


def _check_field_path(path: Path, create: bool) -> None:
    if path.exists() and not path.is_dir():
        raise NotAFieldError(f"{path} is a file, not a chitta field")
    if (path / "segments").is_dir():
        return
    if not create:
        raise NotAFieldError(f"{path} is not a chitta field (no segments/ directory)")
    if path.exists() and any(path.iterdir()):
        raise NotAFieldError(
            f"{path} exists, is not empty and is not a chitta field; refusing to create one inside it"
        )


class Field:
    """A chitta field. Use :func:`chitta.open` to get one; close it (or use ``with``)."""

    _core: FieldCore  # set once the log is open

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        instance_id: int | None = None,
        durability: str = "flush",
        create: bool = True,
        read_only: bool = False,
        salvage: bool = False,
        segment_bytes: int | None = None,
        embedder: Any = "auto",
        reembed: bool = False,
        clock: Callable[[], float] | None = None,
        recall_settings: RecallSettings | None = None,
        load_checkpoint: bool = True,
    ) -> None:
        self._remote: Any = (
            None  # chitta.remote.Replicator when opened with remote= (chitta/remote/attach.py)
        )
        if path is None:
            path = default_path()
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidArgument(f"path must be a str or os.PathLike, not {type(path).__name__}")
        if isinstance(path, str) and not path.strip():
            raise InvalidArgument("path is empty")
        root = (
            Path(v.field_path(path)).expanduser().absolute()
        )  # no NUL, UTF-8: before anything is made
        if durability not in DURABILITIES:
            raise InvalidArgument(f"durability must be one of {DURABILITIES}, not {durability!r}")
        if instance_id is not None:
            if isinstance(instance_id, bool) or not isinstance(instance_id, int):
                raise InvalidArgument("instance_id must be an int or None")
            if not 1 <= instance_id <= _MAX_INSTANCE:
                raise InvalidArgument(
                    f"instance_id must be between 1 and 2**32-1, got {instance_id}"
                )
        if segment_bytes is None:
            segment_bytes = DEFAULT_SEGMENT_BYTES
        else:
            segment_bytes = v.segment_bytes(segment_bytes)
        if clock is not None and not callable(clock):
            raise InvalidArgument("clock must be a callable returning epoch seconds")
        for flag, value in (
            ("create", create),
            ("read_only", read_only),
            ("salvage", salvage),
            ("reembed", reembed),
            ("load_checkpoint", load_checkpoint),
        ):
            if not isinstance(value, bool):
                raise InvalidArgument(f"{flag} must be a bool")
        _check_field_path(root, create and not read_only)

        self._core = core = FieldCore(
            root,
            instance_id=instance_id or 0,
            durability=durability,
            create=create,
            read_only=read_only,
            salvage=salvage,
            segment_bytes=segment_bytes,
            clock=clock,
            recall_settings=recall_settings,
        )
        try:
            if load_checkpoint:
                open_write.load(core)
            core.replay()
        except BaseException:
            core.close()
            raise
        core.pending_puts.start_ids(core.memories.next_local_id(core.log.instance_id))
        try:
            core.encoding = FieldEncoding(
                embedder, recorded=core.settings.get("embedder"), reembed=reembed
            )
            if (
                core.recall_settings is None
            ):  # the embedder's preferred dense weight (chitta.recall.presets)
                core.recall_settings = core.engine.settings = settings_for(core.encoding.embedder)
            # the field's vocabulary for query expansion when the settings ask for it (chitta.recall.expand),
            # from the checkpoint's table plus the log after it (chitta/field/vocab.py)
            vocab.attach_vocabulary(core)
            if reembed and not read_only:
                maintain.reembed(core)
        except BaseException:
            self.close()
            raise
        if not read_only and core.encoding.enabled:
            try:  # a model's texts get their vectors off the caller's thread
                deferred.attach(core, background=deferred.wanted(core.encoding.embedder))
            except BaseException:
                self.close()
                raise
        if not read_only:  # codes a crash left undone, and big groups' codes, in the background
            deferred_codes.attach(core)
        if not read_only and not core.encoding.enabled:
            core.fast_put = core.pending_puts.put
            if type(self).remember is Field.remember and not extract_write.enabled(core):
                # remember(text) alone, natively: skips binding the method's ten keyword
                # defaults; any other call runs the Python method (chitta/field/write.py).
                self.__dict__["remember"] = core.pending_puts.remember_entry(
                    Field.remember,
                    weakref.ref(self),
                    kind_from_text,  # a kind: Python infers it
                )
                extract_write.note_native_entry(core, self)

    @property
    def core(self) -> FieldCore:
        """The field's core (log, organs, clock, lock): for tools and tests that need
        more than the public methods. Read organ state through it; write only through
        the public methods (or ``core.commit`` with validated ops)."""
        return self._core

    # ---- lifecycle -------------------------------------------------------------
    def close(self) -> None:
        """Flush what is buffered and release this instance. Idempotent."""
        core = getattr(self, "_core", None)
        if core is None or core.closed:
            return
        self.__dict__.pop("remember", None)
        deferred.finish(core)  # the backlog's vectors first (chitta/field/deferred.py)
        deferred_codes.finish(core)  # a running coding step commits; the rest: next open
        core.close()
        if core.remote is not None:  # ship what is left (bounded), then stop its threads
            core.remote.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self)} memories"
        return f"<chitta.Field {str(self.core.path)!r} {state}>"

    def __len__(self) -> int:
        self.core.check_open()
        return len(self.core.memories)

    def __contains__(self, id: object) -> bool:
        self.core.check_open()
        try:
            mid = v.memory_id(id)
        except InvalidArgument:
            return False
        return self.core.memories.is_live(mid)

    @property
    def path(self) -> Path:
        return self.core.path

    @property
    def closed(self) -> bool:
        core = getattr(self, "_core", None)
        return core is None or core.closed

    @property
    def read_only(self) -> bool:
        return bool(self.core.log.read_only)

    @property
    def instance_id(self) -> int | None:
        """This handle's writer instance (None when read-only)."""
        return self.core.instance_id

    @property
    def durability(self) -> str:
        return self.core.durability

    @property
    def salvaged(self) -> list[dict[str, Any]]:
        """What ``salvage=True`` skipped: one dict per damaged record (segment, offset, bytes, kind, detail)."""
        return self.core.salvaged

    @property
    def checkpoint_loaded(self) -> str | None:
        """The checkpoint this handle opened from (its directory name), else None."""
        return self.core.checkpoint_loaded

    # ---- the log ----------------------------------------------------------------------
    def flush(self) -> None:
        """Push buffered records to the OS (matters for ``durability="buffered"``)."""
        self.core.check_open()
        with self.core.lost_writes():
            self.core.log.flush()

    def sync(self) -> None:
        """Make everything this instance wrote durable on disk now."""
        self.core.check_open()
        with self.core.lost_writes():
            self.core.log.sync()

    # ---- organ operations (chitta/field/calls.py) -----------------------------------
    def call(self, name: str, /, **arguments: Any) -> Any:
        """Run an organ's operation by name (the operations of every registered organ,
        also offered by the daemon and as MCP tools); ``arguments`` are checked
        against its JSON schema. InvalidArgument names what to fix."""
        from chitta.field import calls

        return calls.call(self.core, name, arguments)

    def organ(self, name: str) -> Organ:
        """The organ called ``name`` (chitta.organs.registry), for its queries: tools and
        tests read organ state through it; change it only through ops."""
        self.core.check_open()
        return self.core.registry.organ(name)

    # ---- replication (chitta/remote) ------------------------------------------------
    @property
    def remote(self) -> Any:
        """The ``chitta.remote.Replicator`` when opened with ``remote=``, else None."""
        return self.core.remote

    def remote_status(self) -> dict[str, Any] | None:
        """Replication state (lag, errors, chunks) when opened with ``remote=``, else None."""
        return self.core.remote.status() if self.core.remote is not None else None

    # ---- writes (chitta/field/write.py) --------------------------------------------------

    def remember(
        self,
        text: str,
        *,
        kind: str = _OBSERVATION,
        realm: str | None = None,
        session: str | None = None,
        source_tool: str | None = None,
        tags: Iterable[str] = NO_TAGS,
        confidence: float = _ONE,
        embedding: Any = None,
        meta: Mapping[str, Any] | None = None,
        at: datetime | float | None = None,
        artifacts: Iterable[str] = (),
        dedup: bool = False,
        provenance: str | None = None,
    ) -> int:
        """Store a memory; returns its id (stable, unique across instances).

        ``at``: when it happened (datetime or epoch seconds; default now).
        ``artifacts``: the code it is about, ``path``, ``path#Qualified.name`` or
        ``path:line``; its staleness verdict follows that code (D-042).
        ``embedding``: your own vector; otherwise the field's embedder makes one
        (unless opened with ``embedder=None``). The id is returned once the op is
        in the OS (``durability="flush"``) or on disk (``"fsync"``); with
        ``"buffered"`` once it is in this process. With the default model the
        vector comes from a background thread shortly after (:meth:`wait_embedded`);
        until then the memory is found by its words. ``dedup=True``: if a live
        memory of the same realm has the same canonical text (case, Unicode form and
        whitespace aside), nothing is stored: that memory is reinforced (an access)
        and its id returned. ``provenance``: who wrote it (human, claude, codex,
        open_weight_distilled, open_weight_generated, unknown); default: inferred from
        ``source_tool`` and ``meta`` (docs/PROVENANCE.md). Open-weight-generated memories
        enter the candidate band and may not be decisions or code facts.
        """
        return write.remember(
            self._core,
            text,
            kind=kind,
            realm=realm,
            session=session,
            source_tool=source_tool,
            tags=tags,
            confidence=confidence,
            embedding=embedding,
            meta=meta,
            at=at,
            **({"artifacts": artifacts} if artifacts else {}),
            dedup=dedup,
            provenance=provenance,
        )

    def remember_many(self, items: Iterable[str | Mapping[str, Any]]) -> list[int]:
        """Store several memories as one atomic group: after a crash either all
        of them exist or none. Each item is a text or a dict of ``remember`` arguments.
        Texts are embedded in one batch."""
        return write.remember_many(self._core, items)

    def remember_triplet(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        kind: str = "observation",
        realm: str | None = None,
        session: str | None = None,
        source_tool: str | None = None,
        tags: Iterable[str] = (),
        confidence: float = 1.0,
        at: datetime | float | None = None,
        provenance: str | None = None,
    ) -> tuple[int, int]:
        """Store a fact in triplet form, plus its plain-English twin.

        The triplet memory keeps the canonical ``subject | predicate | object``;
        a ``kind="alias"`` memory carries the English gloss (which is what gets
        embedded for both, so prose questions find structured facts), linked to
        it by an ``AliasOf`` edge. All in one atomic group. Returns
        ``(triplet_id, alias_id)``.
        """
        return write.remember_triplet(
            self._core,
            subject,
            predicate,
            object,
            kind=kind,
            realm=realm,
            session=session,
            source_tool=source_tool,
            tags=tags,
            confidence=confidence,
            at=at,
            provenance=provenance,
        )

    def forget(self, id: int) -> None:
        """Soft-delete a memory: it is no longer returned, its history stays in the log."""
        return write.forget(self._core, id)

    def update(
        self,
        id: int,
        *,
        text: str | None = None,
        embedding: Any = None,
        tags: Iterable[str] | None = None,
        meta: Mapping[str, Any] | None = None,
        confidence: float | None = None,
        strength: float | None = None,
    ) -> None:
        """Change a memory's content (text, embedding, tags, meta) and/or state
        (confidence, strength). All changes land as one atomic group; a new text
        is re-embedded (and re-coded) when the field embeds and no embedding is given."""
        return write.update(
            self._core,
            id,
            text=text,
            embedding=embedding,
            tags=tags,
            meta=meta,
            confidence=confidence,
            strength=strength,
        )

    # ---- reads by id (chitta/field/read.py) ----------------------------------------------

    def get(self, id: int) -> Memory:
        """The live memory with this id; NotFound if it never existed or was forgotten."""
        return read.get(self._core, id)

    def ids(self) -> list[int]:
        """Ids of all live memories, in the order they were applied."""
        return read.ids(self._core)

    def memories(self) -> Iterator[Memory]:
        """Every live memory (a snapshot of ids taken at the call)."""
        return read.memories(self._core)

    def stats(self) -> FieldStats:
        return read.stats(self._core)

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """Wait until every memory this handle wrote has its vector (``remember()``
        returns before its text is embedded: the background embedder logs the vector
        soon after). True when done, False at ``timeout`` seconds; the embedder's
        error (e.g. a missing model) if it cannot run."""
        self._core.check_open()
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0
        ):
            raise InvalidArgument(f"timeout must be None or seconds >= 0, not {timeout!r}")
        return deferred.wait(self._core, timeout)

    # ---- recall (chitta/field/recall.py) -------------------------------------------------

    def recall(
        self,
        query: str | None = None,
        *,
        vector: Any = None,
        k: int = 10,
        kinds: Iterable[str] | None = None,
        realm: str | None = None,
        session: str | None = None,
        harness: str | None = None,
        since: datetime | float | None = None,
        until: datetime | float | None = None,
        include_staged: bool = True,
        budget_bytes: int | None = None,
        explain: bool = False,
        lanes: Sequence[str] | None = None,
        touch: bool = True,
        tags: Iterable[str] | None = None,
        min_score: float | None = None,
        mood: float | None = None,
        provenance: str | Iterable[str] | None = None,
        route: bool | str = ROUTE_DEFAULT,
    ) -> list[Hit]:
        """The ``k`` memories that matter most for ``query`` (and/or ``vector``).

        Filters (``kinds``, ``realm``, ``session``, ``harness``, ``since``/``until``
        on the event time, ``include_staged``) restrict every lane. With
        ``budget_bytes`` only the hits whose rendered lines fit are returned
        (whole memories, in rank order, skipping one that does not fit).
        ``explain`` fills each hit's factors. ``lanes`` limits the lanes used
        (bm25, dense, posting, neighbour). ``touch=True`` records an access of the top 3 hits
        (reinforcement, the write gate's promotion); ``touch=False`` records none.
        ``tags``: only memories carrying every one of these tags (inside the lanes too).
        Each hit's ``relevance`` is absolute (the query's cosine with the memory's
        vector; None without one) where ``score`` ranks the hits against each other;
        ``min_score`` drops hits whose relevance is below it (hits without one stay).
        ``mood``: the caller's current mood, -1 (negative) .. 1 (positive): memories whose
        ``meta["valence"]`` agrees with it rank higher (factor ``mood_congruence``).
        ``provenance``: only memories written by these (a name or several; ``unknown``
        for memories with none recorded). With ``explain`` a memory whose provenance
        weighs other than 1 (open-weight, candidate) shows the factor ``provenance``.
        ``route``: True parses ``query`` into a typed request and runs its dispatch
        (chitta/field/routed.py; ``explain_route`` shows it); False runs the lanes alone;
        a dispatch name ("exact", "fuzzy", "temporal", "causal", "hybrid") forces one.
        """
        kw: dict[str, Any] = {
            "vector": vector,
            "k": k,
            "kinds": kinds,
            "realm": realm,
            "session": session,
            "harness": harness,
            "since": since,
            "until": until,
            "include_staged": include_staged,
            "budget_bytes": budget_bytes,
            "explain": explain,
            "lanes": lanes,
            "touch": touch,
            "tags": tags,
            "min_score": min_score,
            "mood": mood,
            "provenance": provenance,
        }
        if (
            route is not False
            and isinstance(query, str)
            and query.strip()
            and len(query) <= routed.MAX_TEXT  # a longer text is free text: the lanes
        ):
            return routed.routed_recall(self._core, query, route, kw)[0]
        if route is not False and route is not True:
            routed.dispatch_named(route)  # an unknown dispatch is an error without a query too
        return recall.recall(self._core, query, **kw)

    def explain_route(self, query: str, *, ref_ms: int | None = None) -> RouteInfo:
        """What the router makes of ``query``: its typed request (IR), the dispatch and why,
        with relative dates counted from ``ref_ms`` (default: now). Runs nothing."""
        return routed.explain_route(self._core, query, ref_ms)

    def set_slot_filler(self, hook: Callable[[RecallRequest, str], str | None] | None) -> None:
        """An optional model hook for this handle: ``hook(request, slot)`` is asked only for a
        slot a request leaves unbound (``subject``, ``topic``, ``time``, ``causal_entity``) and
        returns its value (or None); each fill is logged (``router_fill``). None removes it."""
        routed.set_slot_filler(self._core, hook)

    def render(self, hits: Sequence[Hit], budget_bytes: int | None = None) -> str:
        """The hits as ``- [kind] text`` lines within ``budget_bytes`` (never truncating one)."""
        return recall.render_hits(self._core, hits, budget_bytes)

    def set_dense_index(self, kind: str) -> None:
        """Choose the dense lane's index (a field-wide setting, logged): above the
        exact-scan size (20,000 vectors) ``"hnsw"`` (a tiered HNSW graph, saved by
        checkpoints) or ``"hamming"`` (binary codes + exact rescoring);
        ``"exact"`` (an exact scan at any size) or ``"auto"``
        (the default: the graph checkpoints build for a field of 4,096 vectors
        or more, at most 100,000 vectors each, plus an exact scan of the vectors
        it lacks; until then the exact scan up to 20,000 vectors, binary codes +
        rescoring above; chitta/organs/dense_ann.py)."""
        return recall.set_dense_index(self._core, kind)

    def write_gate_stats(self) -> dict[str, Any]:
        """How many memories are staged (never recalled yet) and how old the oldest is."""
        return recall.write_gate_stats(self._core)

    # ---- other writers (chitta/field/replay.py) ------------------------------------------

    def refresh(self) -> int:
        """Apply what other instances appended since the last look. Returns records read."""
        return replay.refresh(self._core)

    # ---- maintenance (chitta/field/maintain.py) ------------------------------------------

    def write_gate_pass(self) -> int:
        """Prune staged memories (never recalled) older than the prune age (7 days;
        ``set_prune_days``, 0 = never); returns how many. Never prunes decisions,
        code facts, wisdom, human-provenance, pinned/curated or restored memories; a
        prune is a soft delete (``pruned()``, ``restore(id)``). Runs by itself every
        50 embedded writes."""
        return maintain.write_gate_pass(self._core)

    def pruned(self) -> list[dict[str, Any]]:
        """The memories the write gate pruned and nobody restored (id, text, kind,
        pruned_at in epoch seconds, by)."""
        from chitta.field import pruning

        return pruning.pruned(self._core)

    def restore(self, id: int) -> int:
        """Bring a pruned memory back as a new memory; returns its id."""
        from chitta.field import pruning

        return pruning.restore(self._core, id)

    def learn_encoder(self, *, max_vectors: int = 1024) -> int | None:
        """One learning step of the sparse encoder on the most recent vectors;
        logs the result (UpdateSparseEncoder) and returns the new version."""
        return maintain.learn_encoder(self._core, max_vectors=max_vectors)

    def reencode(self, *, batch: int = 512) -> int:
        """Re-encode the sparse codes older than the encoder's version. A new code
        is logged (UpdateSparseCode, atomic groups of ``batch``) only where the
        active features changed: a learning step moves a few hundred atoms, and
        most codes keep their features. Returns how many codes were rewritten."""
        return maintain.reencode(self._core, batch=batch)

    def maintain(self) -> dict[str, int | None]:
        """The periodic passes at once: write gate, one encoder learning step,
        re-encoding of stale codes, surprise decay rates and demotion tiers,
        near-duplicate merging hourly (``near_deduplicated``: the memories written since the
        last pass against their nearest neighbours, ``chitta/field/near_dedup.py``), curation
        hourly (``curated_expired``, ``curated_deduplicated``: exact duplicates,
        ``curated_decayed``), then every organ pass whose cadence has elapsed
        (``"<organ>.<pass>"``): among them contradiction detection with the router's metrics
        (hourly; new pairs go to the KG), the debt scan (every 30 minutes), distillation into
        wisdom, theme clustering. ``dedup_pass()`` compares all pairs, on demand."""
        return maintain.maintain(self._core)

    # ---- lifecycle (chitta/field/lifecycle.py) -------------------------------------------

    def supersede(self, old: int, new: int) -> None:
        """Record that ``new`` replaces ``old`` (a ``Supersedes`` edge new -> old).
        While ``new`` is live, ``old`` scores 0.3x in recall (factor ``suppression``);
        it stays readable by ``get`` and ``history``."""
        return lifecycle.supersede(self._core, old, new)

    def contradict(self, a: int, b: int) -> None:
        """Record that ``a`` disputes ``b`` (a ``Contradicts`` edge a -> b); while
        ``a`` is live, ``b`` scores 0.6x in recall."""
        return lifecycle.contradict(self._core, a, b)

    def confirm(self, a: int, b: int) -> None:
        """Record that ``a`` re-observes ``b`` (a ``Confirms`` edge a -> b)."""
        return lifecycle.confirm(self._core, a, b)

    def detect_contradictions(self) -> list[ContradictionPair]:
        """Candidate conflicts by the reconciler R0 (``chitta.policies.contradictions``):
        same realm and first six words; 0.6 for a kind mismatch, 0.4 for diverging
        bodies; at most 50 pairs. Each pair the knowledge graph does not hold yet is
        logged there as (``contradiction:A-B``, ``conflict_score``, ``0.6`` / ``0.4``)
        (not on a read-only field); a repeat logs nothing more."""
        return lifecycle.find_contradictions(self._core)

    def demote_pass(self) -> int:
        """Move every live memory down to the tier its access recency and frequency
        earn (``chitta.policies.tiers``): one ``DemoteMemory`` per move. Returns the
        number of moves. Run by ``maintain()``."""
        return lifecycle.demote_pass(self._core)

    def surprise_pass(self) -> int:
        """Set each vector-bearing memory's ``decay_rate`` from its surprise under the
        current sparse encoder (``chitta.policies.surprise``): ``UpdateState`` ops
        where the rate changed. Returns how many. Run by ``maintain()``."""
        return lifecycle.surprise_pass(self._core)

    def dedup_pass(self) -> DedupReport:
        """Merge exact duplicates (same realm, kind, canonical hash) and near duplicates
        (F_merge < 0, significant tokens equal; ``chitta.policies.dedup``). Each merge
        is one atomic group: the survivor's ``meta["merged_from"]`` gains the others,
        which are forgotten."""
        return lifecycle.dedup_pass(self._core)

    def curate(self, *, now: datetime | float | None = None) -> CurationReport:
        """Expire, exact-dedupe and decay confidence (``chitta.policies.curation``).
        ``now``: a datetime or epoch seconds (default: the field's clock)."""
        return lifecycle.curate(self._core, now=now)

    def history(self, id: int) -> list[dict[str, Any]]:
        """Every logged op that touched memory ``id`` (forgotten ones too), in replay
        order: dicts with seqno, instance, op and fields (ops inside an atomic group
        carry ``"batch": True``). NotFound when the log never mentions it."""
        return lifecycle.history(self._core, id)

    # ---- links (chitta/field/link.py) ----------------------------------------------------

    def link(self, src: int, dst: int, edge: str = "RelatedTo", weight: float = 1.0) -> None:
        """Add a typed edge ``src -> dst`` (``edge`` one of ``chitta.ops.EDGE_KINDS``:
        RelatedTo, Supports, Contradicts, Supersedes, DerivedFrom, ...). Both
        memories must be live; ``weight`` is a finite number in (0, 1e6]."""
        return link.link(self._core, src, dst, edge, weight)

    # ---- checkpoints (chitta/field/checkpoint/open_write.py) ----------------------------------------

    def checkpoint(self) -> CheckpointInfo:
        """Write the field's derived state as a new checkpoint (``<root>/checkpoint/``)
        so that later opens load it and replay only what came after.

        Everything this handle wrote is pushed to the OS first; the checkpoint is
        built by a separate read-only view, so writers (this one included) go on
        appending meanwhile. LockedError if another process is writing one;
        InvalidArgument on a read-only handle (use ``chitta checkpoint``)."""
        return open_write.checkpoint(self._core)


def open(
    path: str | os.PathLike[str] | None = None,
    *,
    instance_id: int | None = None,
    durability: str = "flush",
    create: bool = True,
    read_only: bool = False,
    salvage: bool = False,
    segment_bytes: int | None = None,
    embedder: Any = "auto",
    reembed: bool = False,
    clock: Callable[[], float] | None = None,
    recall_settings: RecallSettings | None = None,
    load_checkpoint: bool = True,
    remote: str | None = None,
    remote_durability: str = "async",
    remote_timeout: float = 10.0,
) -> Field:
    """Open (or create) the field at ``path`` (default: ``$CHITTA_HOME``, else
    ``~/.local/share/chitta/default``).

    ``instance_id`` continues a named writer instance (locked while open);
    without it this handle writes as a fresh random instance. ``durability``:
    ``"flush"`` (default: survives a process crash), ``"fsync"`` (survives power
    loss; concurrent writers share fsyncs), ``"buffered"`` (bulk import; written
    on flush/close). ``salvage=True`` skips damaged records and lists them in
    ``Field.salvaged`` instead of failing.

    ``embedder``: ``"auto"`` (the field's recorded model, else the default
    one; ``$CHITTA_EMBEDDER`` overrides), an Embedder, a model name, or None
    (store no vectors for texts). A different model family than the field's is
    refused unless ``reembed=True``, which re-embeds every memory. ``clock``:
    a callable returning epoch seconds (tests). ``recall_settings``: lane
    weights and pool sizes (default: ``chitta.recall.presets.settings_for``
    the embedder). ``load_checkpoint=False`` ignores the field's
    checkpoint and replays the whole log.

    ``remote``: ``"s3://bucket/prefix"`` (default ``$CHITTA_REMOTE``) shares the field
    with other machines through an S3-compatible object store (docs/REMOTE.md);
    ``remote_durability``: ``"async"`` (shipped in the background) or ``"sync"``
    (each write returns once the bucket holds it; ``RemoteUnavailable`` after
    ``remote_timeout`` seconds).
    """
    remote = remote if remote is not None else (os.environ.get("CHITTA_REMOTE") or None)
    if remote is not None:
        from chitta.remote.attach import open_remote

        return open_remote(
            Field,
            path,
            remote,
            remote_durability=remote_durability,
            remote_timeout=remote_timeout,
            instance_id=instance_id,
            durability=durability,
            create=create,
            read_only=read_only,
            salvage=salvage,
            segment_bytes=segment_bytes,
            embedder=embedder,
            reembed=reembed,
            clock=clock,
            recall_settings=recall_settings,
            load_checkpoint=load_checkpoint,
        )
    return Field(
        path,
        instance_id=instance_id,
        durability=durability,
        create=create,
        read_only=read_only,
        salvage=salvage,
        segment_bytes=segment_bytes,
        embedder=embedder,
        reembed=reembed,
        clock=clock,
        recall_settings=recall_settings,
        load_checkpoint=load_checkpoint,
    )


# The public names keep the module they always had (reprs, pickles, docs tools).
for _public in (Field, open, default_path, infer_harness):
    _public.__module__ = "chitta.field"
del _public
