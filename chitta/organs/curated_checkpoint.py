"""The curated organ's checkpoint rows: its whole state as one list of tagged rows
(the shared sidecar format, chitta/organs/sidecar.py), in the organ's own order, so
two replays of one log write equal bytes. The keyword indexes are rebuilt at load."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from chitta.curated import facts as F
from chitta.curated.paths import parse
from chitta.curated.vocabulary import Limits

if TYPE_CHECKING:
    from chitta.organs.curated import CuratedOrgan

__all__ = ["load", "rows"]


def rows(organ: CuratedOrgan) -> list[Any]:
    out: list[Any] = [["limits", organ.limits.to_fields()]]
    out += [["domain", d, text] for d, text in organ.domains.items()]
    out += [["topic", p.render(), text, organ.topic_rows[p]] for p, text in organ.topics.items()]
    out += [["capture", *dataclasses.astuple(c)] for c in organ.captures.values()]
    for f in organ.facts.values():
        paths = [p.render() for p in f.paths]
        out.append(
            [
                "fact",
                f.id,
                f.kind,
                f.body,
                f.fields,
                f.scope,
                paths,
                f.provenance,
                f.capture,
                f.filed_ms,
                f.row,
                f.superseded_by,
            ]
        )
    out += [["dispute", a, b] for a, b in organ.disputes.items() if a < b]
    out += [["pin", t, list(refs), blob, ms] for t, (refs, blob, ms) in organ.pins.items()]
    out += [["audit", a] for a in organ.audits.values()]
    return out


def load(organ: CuratedOrgan, records: list[Any]) -> None:
    """Fill a fresh organ from ``records``; raises on anything malformed (the field
    then replays its log)."""
    for row in records:
        kind, rest = row[0], row[1:]
        if kind == "limits":
            organ.limits = Limits.from_fields(rest[0])
        elif kind == "domain":
            organ.domains[str(rest[0])] = str(rest[1])
        elif kind == "topic":
            path, at = parse(rest[0]), int(rest[2])
            organ.topics[path], organ.topic_rows[path], organ.row_topic[at] = str(rest[1]), at, path
        elif kind == "capture":
            c = F.Capture(
                rest[0],
                rest[1],
                rest[2],
                dict(rest[3]),
                rest[4],
                tuple(rest[5]),
                tuple(rest[6]),
                rest[7],
                int(rest[8]),
            )
            organ.captures[c.id] = c
        elif kind == "fact":
            fields = {str(k): str(v) for k, v in dict(rest[3]).items()}
            digest = F.payload_hash(rest[1], rest[2], fields)
            paths = tuple(parse(p) for p in rest[5])
            organ.restored(
                F.Fact(
                    rest[0],
                    rest[1],
                    rest[2],
                    fields,
                    rest[4],
                    digest,
                    paths,
                    rest[6],
                    rest[7],
                    int(rest[8]),
                    int(rest[9]),
                    rest[10],
                )
            )
        elif kind == "dispute":
            organ.disputes[rest[0]], organ.disputes[rest[1]] = rest[1], rest[0]
        elif kind == "pin":
            organ.pins[rest[0]] = (tuple(rest[1]), bytes(rest[2]), int(rest[3]))
        elif kind == "audit":
            organ.audits[rest[0]["id"]] = dict(rest[0])
        else:
            raise ValueError(f"curated: unknown checkpoint record {kind!r}")
