"""The vocabulary's operations (declare, amend, limits, show): the checks a change
passes before it is logged. Caps and the catalog budget are checked against the
vocabulary as it would be, so an accepted change never leaves the catalog partial."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta import ops
from chitta.curated import facts as F
from chitta.curated.paths import TopicPath, parse
from chitta.curated.vocabulary import Limits, check_descriptor, render_catalog
from chitta.errors import InvalidArgument

if TYPE_CHECKING:
    from chitta.organs.curated import CuratedOrgan

__all__ = ["amend", "declare", "limits", "show"]


def _bound(organ: CuratedOrgan, domains: dict[str, str], topics: dict[TopicPath, str]) -> None:
    width = len(str(organ.limits.max_facts_per_topic))
    size = len(render_catalog(domains, topics, None, width))
    if size > organ.limits.catalog_bytes:
        raise InvalidArgument(
            f"the catalog would take {size} bytes, over its budget of {organ.limits.catalog_bytes} "
            "(catalog_bytes); shorten descriptors or raise the budget with vocabulary_limits"
        )


def declare(organ: CuratedOrgan, ctx: Any, *, path: str, descriptor: str) -> dict[str, Any]:
    p, text = parse(path), check_descriptor(descriptor)
    lim = organ.limits
    domains, topics = dict(organ.domains), dict(organ.topics)
    if p.topic is None:
        if p.domain in organ.domains:
            raise InvalidArgument(f"domain {p.domain!r} exists; change it with vocabulary_amend")
        if len(organ.domains) >= lim.max_domains:
            raise InvalidArgument(
                f"the vocabulary holds max_domains={lim.max_domains}; raise the cap first"
            )
        domains[p.domain] = text
    else:
        if p.domain not in organ.domains:
            raise InvalidArgument(f"no domain {p.domain!r}; declare it first")
        if p in organ.topics:
            raise InvalidArgument(f"topic {p.render()!r} exists; change it with vocabulary_amend")
        if sum(t.domain == p.domain for t in organ.topics) >= lim.max_topics_per_domain:
            raise InvalidArgument(
                f"domain {p.domain!r} holds max_topics_per_domain={lim.max_topics_per_domain}"
            )
        topics[p] = text
    _bound(organ, domains, topics)
    ctx.commit(ops.CuratedEvent(event="declare", key=p.render(), at_ms=ctx.now_ms(), text=text))
    return {"path": p.render(), "descriptor": text}


def amend(organ: CuratedOrgan, ctx: Any, *, path: str, descriptor: str) -> dict[str, Any]:
    p, text = parse(path), check_descriptor(descriptor)
    domains, topics = dict(organ.domains), dict(organ.topics)
    if p.topic is None:
        if p.domain not in domains:
            raise InvalidArgument(f"no domain {p.domain!r} to amend; declare it")
        domains[p.domain] = text
    else:
        if p not in topics:
            raise InvalidArgument(f"unknown topic path {p.render()!r} to amend; declare it")
        topics[p] = text
    _bound(organ, domains, topics)
    ctx.commit(ops.CuratedEvent(event="amend", key=p.render(), at_ms=ctx.now_ms(), text=text))
    return {"path": p.render(), "descriptor": text}


def limits(organ: CuratedOrgan, ctx: Any, **changes: Any) -> dict[str, Any]:
    new = Limits.from_fields({**organ.limits.to_fields(), **changes})
    per_domain = max((sum(p.domain == d for p in organ.topics) for d in organ.domains), default=0)
    per_topic = max((len(ids) for ids in organ.by_path.values()), default=0)
    for name, held, cap in (
        ("max_domains", len(organ.domains), new.max_domains),
        ("max_topics_per_domain", per_domain, new.max_topics_per_domain),
        ("max_facts_per_topic", per_topic, new.max_facts_per_topic),
    ):
        if held > cap:
            raise InvalidArgument(f"{name}={cap} is below what the vocabulary holds ({held})")
    current = organ.limits
    organ.limits = new  # the catalog bound is checked against the new limits
    try:
        _bound(organ, organ.domains, organ.topics)
    finally:
        organ.limits = current
    ctx.commit(ops.CuratedEvent(event="limits", key="", at_ms=ctx.now_ms(), fields=new.to_fields()))
    return new.to_fields()


def show(organ: CuratedOrgan, ctx: Any) -> dict[str, Any]:
    counts = organ.counts()
    return {
        "domains": [{"domain": d, "descriptor": t} for d, t in sorted(organ.domains.items())],
        "topics": [
            {"path": p.render(), "descriptor": t, "facts": counts[p]}
            for p, t in sorted(organ.topics.items())
        ],
        "limits": organ.limits.to_fields(),
        "kinds": {k: {"required": list(r), "optional": list(o)} for k, (r, o) in F.KINDS.items()},
        "scopes": list(F.SCOPE_TIERS),
    }
