"""The organ registry: which organs a field builds, and which op types reach each.

``BUILTIN`` lists chitta's own organs in the order they are built, restored and
applied (an op handled by several organs reaches them in this order). Adding an
organ to chitta is one line here. :func:`register` adds one at run time (a
plugin, a test): every field opened afterwards builds it. ``$CHITTA_ORGANS``
(``module:attribute`` entries separated by commas) registers plugins in processes
chitta starts itself, such as a daemon.

An op type no registered organ handles stays valid: it is kept in the log,
counted as unrouted and replayed to an organ a later version adds.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence

from chitta.errors import InvalidArgument
from chitta.organs.code import (
    ArtifactsOrgan,
    CallGraphOrgan,
    CodeFilesOrgan,
    SymbolEventsOrgan,
    SymbolsOrgan,
    TrustOrgan,
)
from chitta.organs.contract import Organ
from chitta.organs.curated import CuratedOrgan
from chitta.organs.debts import DebtsOrgan
from chitta.organs.encoder import EncoderOrgan
from chitta.organs.feedback import FeedbackOrgan
from chitta.organs.graph import GraphOrgan
from chitta.organs.knowledge import KnowledgeOrgan
from chitta.organs.memories import MemoriesOrgan
from chitta.organs.predictor import PredictorOrgan
from chitta.organs.provenance import ProvenanceOrgan
from chitta.organs.pruning import PruningOrgan
from chitta.organs.recall_index import RecallIndexOrgan
from chitta.organs.router_log import RouterLogOrgan
from chitta.organs.scorer_model import ScorerModelOrgan
from chitta.organs.settings import SettingsOrgan
from chitta.organs.source_weights import SourceWeightsOrgan
from chitta.organs.surprise_credit import SurpriseCreditOrgan
from chitta.organs.themes import ThemesOrgan
from chitta.organs.wisdom import WisdomOrgan

OrganFactory = Callable[[], Organ]

BUILTIN: tuple[OrganFactory, ...] = (
    MemoriesOrgan,
    GraphOrgan,
    SettingsOrgan,
    RecallIndexOrgan,
    EncoderOrgan,
    KnowledgeOrgan,
    ArtifactsOrgan,
    CodeFilesOrgan,
    SymbolsOrgan,
    CallGraphOrgan,
    SymbolEventsOrgan,
    TrustOrgan,
    CuratedOrgan,
    FeedbackOrgan,
    SourceWeightsOrgan,
    ScorerModelOrgan,
    SurpriseCreditOrgan,
    WisdomOrgan,
    DebtsOrgan,
    PredictorOrgan,
    PruningOrgan,
    ProvenanceOrgan,
    ThemesOrgan,
    RouterLogOrgan,
)

_registered: list[OrganFactory] = []
_plugins_loaded: str | None = None

__all__ = ["BUILTIN", "Routes", "build", "factories", "register", "unregister"]


def register(factory: OrganFactory) -> OrganFactory:
    """Add an organ (its class or a factory) to every field opened from now on.
    Usable as a class decorator; registering the same factory twice is a no-op."""
    if not callable(factory):
        raise InvalidArgument(
            f"register() takes an organ class or factory, not {type(factory).__name__}"
        )
    if factory not in _registered and factory not in BUILTIN:
        _registered.append(factory)
    return factory


def unregister(factory: OrganFactory) -> None:
    """Remove an organ :func:`register` added (fields already open keep theirs)."""
    if factory in _registered:
        _registered.remove(factory)


def _load_plugins() -> None:
    global _plugins_loaded
    spec = os.environ.get("CHITTA_ORGANS", "")
    if spec == _plugins_loaded:
        return
    _plugins_loaded = spec
    for entry in filter(None, (part.strip() for part in spec.split(","))):
        module, _, attr = entry.partition(":")
        if not module or not attr:
            raise InvalidArgument(
                f"CHITTA_ORGANS entry {entry!r} is not 'module:attribute'; fix the variable"
            )
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise InvalidArgument(f"CHITTA_ORGANS entry {entry!r} cannot be loaded: {exc}") from exc
        register(factory)


def factories() -> tuple[OrganFactory, ...]:
    """Every organ a field opened now builds: the built-in ones, then the registered."""
    _load_plugins()
    return BUILTIN + tuple(_registered)


def build() -> list[Organ]:
    """Fresh instances of every organ, checked against the contract."""
    organs = [factory() for factory in factories()]
    names: set[str] = set()
    for organ in organs:
        missing = [
            a
            for a in (
                "name",
                "handles",
                "apply",
                "apply_run",
                "snapshot",
                "restore",
                "stats",
                "maintenance",
                "operations",
            )
            if not hasattr(organ, a)
        ]
        if missing:
            raise InvalidArgument(
                f"organ {type(organ).__name__} lacks {missing} of the organ contract "
                "(chitta.organs.contract.Organ); subclass OrganBase"
            )
        if not organ.name or organ.name in names:
            raise InvalidArgument(
                f"organ name {organ.name!r} is empty or used twice; give each organ its own"
            )
        names.add(organ.name)
    return organs


class Routes:
    """Op byte -> the organs that apply it, in registry order."""

    def __init__(self, organs: Sequence[Organ]) -> None:
        table: dict[int, list[Organ]] = {}
        for organ in organs:
            for op_type in organ.handles:
                table.setdefault(int(op_type), []).append(organ)
        self.table: dict[int, tuple[Organ, ...]] = {code: tuple(o) for code, o in table.items()}
        self.by_name: dict[str, Organ] = {organ.name: organ for organ in organs}
        self.organs: tuple[Organ, ...] = tuple(organs)

    def get(self, code: int) -> tuple[Organ, ...] | None:
        return self.table.get(code)

    def __getitem__(self, code: int) -> tuple[Organ, ...]:
        return self.table[code]

    def organ(self, name: str) -> Organ:
        try:
            return self.by_name[name]
        except KeyError:
            raise InvalidArgument(
                f"no organ named {name!r}; organs: {sorted(self.by_name)}"
            ) from None

    def operations(self) -> Iterable[tuple[Organ, object]]:
        for organ in self.organs:
            for operation in organ.operations:
                yield organ, operation
