"""The write path, five stages with at most one model call:

capture (durable first) -> nominate (keyword relevance over descriptor and
fact rows, zero tokens) -> classify (the optional Classifier, audited) ->
admit (chitta/curated/admission.py) -> file (one Batch; nomination and
admission run again right before it, under the field's lock, so a vocabulary
change that landed meanwhile is seen).

A capture that was logged and never filed (the process died) stays open; the
sweep (``sweep``, the organ's maintenance pass) files it later, exactly once:
the organ keeps the first filing of a capture and ignores any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.curated import facts as F
from chitta.curated import ulid
from chitta.curated.admission import Admission, Rules, admit
from chitta.curated.classifier import Candidate, audited
from chitta.curated.paths import TopicPath, parse, parse_topic
from chitta.curated.vocabulary import render_catalog
from chitta.errors import DuplicateFact, InvalidArgument, NotFound

if TYPE_CHECKING:
    from chitta.curated.facts import Capture
    from chitta.organs.curated import CuratedOrgan

__all__ = ["capture", "file_capture", "nominate", "sweep"]

MAX_BODY_CHARS = 64 * 1024  # refused before the block check reads it


def nominate(organ: CuratedOrgan, text: str) -> list[tuple[TopicPath, float]]:
    """Declared topics scored for ``text``: the descriptor's relevance plus the best
    relevance among the topic's live facts (BM25 both)."""
    descriptors = organ.topic_scores(text)
    best: dict[TopicPath, float] = {}
    for row, score in organ.fact_scores(text).items():
        for path in organ.facts[organ.row_fact[row]].paths:
            best[path] = max(score, best.get(path, 0.0))
    scores = {
        p: descriptors.get(p, 0.0) + best.get(p, 0.0) for p in descriptors.keys() | best.keys()
    }
    return sorted(scores.items(), key=lambda ps: (-ps[1], ps[0].render()))


def capture(
    organ: CuratedOrgan,
    ctx: Any,
    *,
    body: object,
    kind: object = "fact",
    fields: object = None,
    scope: object = "project",
    paths: object = None,
    supersedes: str | None = None,
    disputes: str | None = None,
    provenance: str = "human",
) -> str:
    """Check a candidate and log its capture; returns the capture id. Bad input
    raises before anything is written."""
    if not isinstance(body, str) or not body.strip() or len(body) > MAX_BODY_CHARS:
        raise InvalidArgument("body must be non-empty text; the block cap is fact_bytes")
    kind_, fields_ = F.check_fields(kind, fields)
    if not isinstance(scope, str) or scope not in F.SCOPE_TIERS:
        raise InvalidArgument(f"scope must be one of {list(F.SCOPE_TIERS)}, not {scope!r:.40}")
    body_ = F.canonical_body(body)
    named = _named_paths(organ, paths)
    probe = named[0] if named else TopicPath("x" * 48, "x" * 48)
    size = F.block_bound(kind_, scope, probe, body_, fields_)
    if size > organ.limits.fact_bytes:
        raise InvalidArgument(
            f"this fact renders to {size} bytes, over the cap of {organ.limits.fact_bytes} "
            "(fact_bytes); split it or shorten it"
        )
    digest = F.payload_hash(kind_, body_, fields_)
    if digest in organ.by_hash and organ.by_hash[digest] != supersedes:
        raise DuplicateFact(
            f"fact {organ.by_hash[digest]} already says this (same payload hash); "
            "supersede it to change it"
        )
    refs: list[str] = []
    for tag, target in (("supersedes", supersedes), ("disputes", disputes)):
        if target is not None:
            if organ.live(ulid.check(target, tag)) is None:
                raise NotFound(
                    f"no live fact {target} to {tag[:-1]}; list facts with memory_recall"
                )
            if tag == "disputes" and target in organ.disputes:
                raise InvalidArgument(
                    f"fact {target} is already in an open dispute; resolve it first"
                )
            refs.append(f"{tag}:{target}")
    if supersedes is not None and not named:
        named = list(organ.facts[supersedes].paths)
    capture_id = ulid.new(ctx.now_ms())
    ctx.commit(
        ops.CuratedEvent(
            event="capture",
            key=capture_id,
            at_ms=ctx.now_ms(),
            text=body_,
            kind=kind_,
            fields=fields_ or None,
            scope=scope,
            paths=tuple(p.render() for p in named),
            refs=tuple(refs),
            provenance=provenance,
        )
    )
    return capture_id


def _named_paths(organ: CuratedOrgan, paths: object) -> list[TopicPath]:
    if paths is None:
        return []
    if isinstance(paths, str) or not isinstance(paths, (list, tuple)):
        raise InvalidArgument("paths must be a list of 'domain/topic' strings")
    out: list[TopicPath] = []
    for text in paths:
        path = parse_topic(text)
        if path not in organ.topics:
            raise InvalidArgument(
                f"unknown topic path {path.render()!r}; declare it first "
                "(chitta memory vocabulary declare) or pick one from the catalog"
            )
        if path not in out:
            out.append(path)
    return out


def _rules(organ: CuratedOrgan) -> Rules:
    lim = organ.limits
    return Rules(lim.floor_score, lim.floor_ratio, lim.filing_cap)


def _candidate_text(c: Capture) -> str:
    return " ".join([c.body, *c.fields.values()])


def _classify(organ: CuratedOrgan, ctx: Any, c: Capture) -> tuple[list[TopicPath], dict[str, Any]]:
    """Stage 2: the named paths, else the classifier's answer, else nothing."""
    if c.paths:
        return [parse(p) for p in c.paths], {"classifier": "named"}
    classifier = organ.classifier
    if classifier is None:
        return [], {"classifier": None}
    catalog = render_catalog(organ.domains, organ.topics, organ.counts())
    candidate = Candidate(c.kind, c.body, dict(c.fields), c.scope)
    got = audited(
        ctx, classifier, "classify", c.id, lambda: classifier.classify(candidate, catalog)
    )
    if got is None:
        return [], {"classifier": "error"}
    return got[0], {"classifier": "ok", "unparsed": got[1]}


def _decide(organ: CuratedOrgan, c: Capture, classified: list[TopicPath]) -> Admission:
    # Paths an operator named are the whole answer: nomination adds nothing to them.
    nominated = [] if c.paths else nominate(organ, _candidate_text(c))
    return admit(nominated, classified, organ.topics, organ.full(), _rules(organ))


def file_capture(organ: CuratedOrgan, ctx: Any, capture_id: str) -> dict[str, Any]:
    """Stages 2-5 for one logged capture. Returns the filing; InvalidArgument when no
    path is admitted (the capture stays open)."""
    c = organ.captures[capture_id]
    F.check_fields(c.kind, c.fields)  # a capture another writer logged may be malformed
    if c.scope not in F.SCOPE_TIERS:
        raise InvalidArgument(f"capture {capture_id} has scope {c.scope!r}; it cannot be filed")
    if capture_id in organ.filed:
        return {"capture": capture_id, "fact": organ.filed[capture_id], "filed": False}
    classified, how = _classify(organ, ctx, c)
    first = _decide(organ, c, classified)
    # Stage 5, the filing: take in what other writers appended meanwhile, then
    # re-nominate and re-admit right before the one Batch (under the field's lock).
    ctx.refresh()
    if capture_id in organ.filed:  # another writer (a sweep) filed it meanwhile
        return {"capture": capture_id, "fact": organ.filed[capture_id], "filed": False}
    decision = _decide(organ, c, classified)
    if decision.primary is None:
        raise InvalidArgument(
            f"no topic admits capture {capture_id} (refused: "
            f"{[(p.render(), why) for p, why in decision.refused][:6]}); declare a topic or "
            "name one with paths=; the capture stays open for the sweep"
        )
    fact_id = ulid.new(ctx.now_ms())
    group: list[ops.Op] = [
        ops.CuratedEvent(
            event="file",
            key=fact_id,
            at_ms=ctx.now_ms(),
            text=c.body,
            kind=c.kind,
            fields=c.fields or None,
            scope=c.scope,
            paths=tuple(p.render() for p in decision.paths),
            refs=(capture_id,),
            provenance=c.provenance,
        )
    ]
    for ref in c.refs:
        tag, _, target = ref.partition(":")
        if organ.live(target) is None:
            continue  # superseded or retired meanwhile: file the fact alone
        if tag == "supersedes":
            group.append(
                ops.CuratedEvent(event="supersede", key=target, at_ms=ctx.now_ms(), refs=(fact_id,))
            )
        elif tag == "disputes" and target not in organ.disputes:
            group.append(
                ops.CuratedEvent(event="dispute", key=fact_id, at_ms=ctx.now_ms(), refs=(target,))
            )
    ctx.commit(ops.Batch.of(*group))  # one filing, one Batch record
    filed = organ.filed.get(capture_id)
    return {
        "capture": capture_id,
        "fact": filed,
        "filed": filed == fact_id,
        "primary": decision.primary.render(),
        "paths": [p.render() for p in decision.paths],
        "refused": [[p.render(), why] for p, why in decision.refused],
        "changed_since_first_admission": first != decision,
        **how,
    }


def sweep(organ: CuratedOrgan, ctx: Any, *, min_age_ms: int = 60_000) -> dict[str, Any]:
    """File every open capture at least ``min_age_ms`` old, oldest first, and close
    audit records left open as long (their process ended mid-call)."""
    now = ctx.now_ms()
    filed: list[str] = []
    failed: list[list[str]] = []
    for audit in list(organ.audits.values()):
        if audit["state"] == "open" and now - audit["opened_ms"] >= min_age_ms:
            ctx.commit(
                ops.CuratedEvent(
                    event="audit_close",
                    key=audit["id"],
                    at_ms=now,
                    outcome="abandoned",
                    text="the process ended before the call returned",
                )
            )
    for c in organ.open_captures():
        if now - c.at_ms < min_age_ms:
            continue
        try:
            got = file_capture(organ, ctx, c.id)
        except InvalidArgument as exc:
            failed.append([c.id, str(exc)])
            continue
        if got["fact"] is not None:
            filed.append(got["fact"])
    return {"filed": filed, "failed": failed, "open": len(organ.open_captures())}
