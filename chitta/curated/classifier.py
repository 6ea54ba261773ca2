"""The optional model hook: a ``Classifier`` the write path may ask where a
candidate belongs (``classify``) and the read path which paths a request needs
(``select``). It gets the candidate (or request) and the catalog text, nothing
else: no tools, no workspace, no turn loop; it returns topic paths only, and
the rules (admission) decide what is legal. It never writes.

Every call is audited: an ``audit_open`` event is logged before dispatch and an
``audit_close`` after, with the answer or the error. With no classifier set on
the organ (``set_classifier``) the stage is skipped and nomination decides.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from chitta import ops
from chitta.curated import ulid
from chitta.curated.paths import TopicPath, parse
from chitta.errors import ChittaError, InvalidArgument

__all__ = ["Candidate", "Classifier", "audited", "set_classifier"]

MAX_ANSWER = 16  # paths kept from one answer
MAX_ERROR_CHARS = 500


@dataclasses.dataclass(frozen=True)
class Candidate:
    kind: str
    body: str
    fields: dict[str, str]
    scope: str


@runtime_checkable
class Classifier(Protocol):
    """``classify(candidate, catalog) -> topic paths`` ("domain/topic" strings), best
    first. A classifier may also define ``select(request, catalog) -> paths`` for
    the read path. ``name`` identifies it in the audit records."""

    name: str

    def classify(self, candidate: Candidate, catalog: bytes) -> Sequence[str]: ...


def set_classifier(organ: Any, classifier: Classifier | None) -> None:
    """Use ``classifier`` for this open field's curated organ (None: no model)."""
    if classifier is not None and not isinstance(classifier, Classifier):
        raise InvalidArgument(
            "a classifier has a name and classify(candidate, catalog) -> paths "
            "(chitta.curated.classifier.Classifier)"
        )
    organ.classifier = classifier


def audited(
    ctx: Any, classifier: Classifier, call: str, subject: str, run: Callable[[], object]
) -> tuple[list[TopicPath], list[str]] | None:
    """Run one model call under an audit record. Returns (paths that parse, answers
    that do not) or None when the call raised or answered something that is not a
    list of strings (the audit record is closed with the error either way)."""
    audit_id = ulid.new(ctx.now_ms())
    name = str(getattr(classifier, "name", type(classifier).__name__))[:200]
    ctx.commit(
        ops.CuratedEvent(
            event="audit_open",
            key=audit_id,
            at_ms=ctx.now_ms(),
            text=name,
            refs=(subject,),
            outcome=call,
        )
    )
    error: str | None = None
    answer: list[str] = []
    try:
        got = run()
        if isinstance(got, (str, bytes)) or not isinstance(got, Sequence):
            raise TypeError(f"answered {type(got).__name__}, not a list of topic paths")
        if not all(isinstance(p, str) for p in got):
            raise TypeError("answered something other than topic path strings")
        answer = [p[:200] for p in got[:MAX_ANSWER]]
    except Exception as exc:  # noqa: BLE001 - a model hook may fail any way; the audit says how
        error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
    ctx.commit(
        ops.CuratedEvent(
            event="audit_close",
            key=audit_id,
            at_ms=ctx.now_ms(),
            outcome="error" if error else "ok",
            paths=tuple(answer),
            text=error,
        )
    )
    if error is not None:
        return None
    paths: list[TopicPath] = []
    bad: list[str] = []
    for text in answer:
        try:
            paths.append(parse(text))
        except ChittaError:
            bad.append(text)
    return paths, bad
