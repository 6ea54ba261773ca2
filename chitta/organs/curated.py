"""The curated organ (seed 001): the closed vocabulary, captures, filed facts,
disputes, pins and classifier audit records, all from CuratedEvent ops.

State is applied exactly as the log says, in log order, and never re-derived:
the write path (chitta/curated/write_path.py) decides a filing and logs it; this
organ only stores it. ``apply`` ignores (and counts) an event that names state
it does not hold or that a cap or an earlier event already rules out: a second
filing of one capture, a duplicate payload hash, a declaration past a cap. The
first in replay order wins, so every replica agrees.

Two keyword indexes serve the write path's nomination and the read path's
relevance: one over the live facts (body and field values), one over the
topics' descriptors (domain and topic names and descriptors). They are rebuilt
from the facts and the vocabulary at restore.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chitta import ops
from chitta.curated import facts as F
from chitta.curated.facts import Capture
from chitta.curated.paths import TopicPath, parse
from chitta.curated.vocabulary import DEFAULT_LIMITS, Limits
from chitta.errors import ChittaError
from chitta.ops import Op, OpType
from chitta.organs import curated_checkpoint
from chitta.organs.contract import OrganBase, RestoreContext, SnapshotContext
from chitta.organs.curated_ops import MAINTENANCE, OPERATIONS
from chitta.organs.index.bm25 import BM25

__all__ = ["CuratedOrgan", "fact_text"]

SIDECAR = "curated.rec"
MAGIC = b"CHITTACU"
VERSION = 1


def fact_text(fact: F.Fact) -> str:
    """What the keyword index holds of a fact: its body and field values."""
    return " ".join([fact.body, *fact.fields.values()])


class CuratedOrgan(OrganBase):
    name = "curated"
    handles = frozenset({OpType.CuratedEvent})
    operations = OPERATIONS
    maintenance = MAINTENANCE

    def __init__(self) -> None:
        self.limits: Limits = DEFAULT_LIMITS
        self.domains: dict[str, str] = {}
        self.topics: dict[TopicPath, str] = {}
        self.topic_rows: dict[TopicPath, int] = {}
        self.row_topic: dict[int, TopicPath] = {}
        self.captures: dict[str, Capture] = {}  # every capture, in log order
        self.filed: dict[str, str] = {}  # capture id -> the fact filed from it
        self.facts: dict[str, F.Fact] = {}
        self.row_fact: dict[int, str] = {}
        self.by_path: dict[TopicPath, dict[str, None]] = {}  # live facts per topic
        self.by_hash: dict[str, str] = {}  # live facts by payload hash
        self.disputes: dict[str, str] = {}  # open disputes, both directions
        self.pins: dict[str, tuple[tuple[str, ...], bytes, int]] = {}
        self.audits: dict[str, dict[str, Any]] = {}
        self.ignored = 0
        self.version = 0  # bumped whenever the live facts or disputes change (read caches)
        self.min_block = 1 << 30  # no live fact's block is smaller (a lower bound)
        self.rank_cache: dict[Any, Any] = {}  # chitta/curated/read_path.py's, by paths
        self.classifier: Any = None  # a chitta.curated.classifier.Classifier (this process only)
        self._fact_index = BM25()
        self._topic_index = BM25()

    # ---- queries --------------------------------------------------------------------
    def open_captures(self) -> list[Capture]:
        return [c for c in self.captures.values() if c.id not in self.filed]

    def live(self, fact_id: str) -> F.Fact | None:
        fact = self.facts.get(fact_id)
        return fact if fact is not None and fact.live else None

    def full(self) -> frozenset[TopicPath]:
        cap = self.limits.max_facts_per_topic
        return frozenset(p for p, ids in self.by_path.items() if len(ids) >= cap)

    def counts(self) -> dict[TopicPath, int]:
        return {p: len(self.by_path.get(p, ())) for p in self.topics}

    def fact_hits(self, query: str, rows: Any) -> tuple[Any, Any]:
        """``(rows, scores)`` of the facts among ``rows`` (uint64) that match ``query``,
        best first (BM25, float32)."""
        ids, scores = self._fact_index.search(query, k=max(1, len(rows)), allowed=rows)
        n = int(np.count_nonzero(scores > 0))
        return ids[:n], scores[:n]

    def fact_scores(self, query: str, rows: list[int] | None = None) -> dict[int, float]:
        """Keyword relevance of live facts for ``query`` (only ``rows`` when given)."""
        n = len(self.row_fact) if rows is None else len(rows)
        if n == 0 or not query.strip():
            return {}
        ids, scores = self._fact_index.search(query, k=n, allowed=rows)
        return {int(i): float(s) for i, s in zip(ids, scores, strict=True) if s > 0}

    def topic_scores(self, query: str) -> dict[TopicPath, float]:
        if not self.topics or not query.strip():
            return {}
        ids, scores = self._topic_index.search(query, k=len(self.topics))
        return {self.row_topic[int(i)]: float(s) for i, s in zip(ids, scores, strict=True) if s > 0}

    # ---- apply ----------------------------------------------------------------------
    def apply(self, op: Op) -> None:
        if type(op) is not ops.CuratedEvent:
            return
        handler = getattr(self, f"_on_{op.event}", None)
        try:
            done = handler is not None and handler(op)
        except ChittaError:  # a key or path that does not parse: another writer's mistake
            done = False
        if not done:
            self.ignored += 1

    def _topic_doc(self, path: TopicPath) -> str:
        return " ".join(
            [path.domain, self.domains[path.domain], str(path.topic), self.topics[path]]
        )

    def _on_declare(self, op: ops.CuratedEvent) -> bool:
        path, text = parse(op.key), op.text or ""
        if path.topic is None:
            if path.domain in self.domains or len(self.domains) >= self.limits.max_domains:
                return False
            self.domains[path.domain] = text
            return True
        if path.domain not in self.domains or path in self.topics:
            return False
        if sum(p.domain == path.domain for p in self.topics) >= self.limits.max_topics_per_domain:
            return False
        row = len(self.topic_rows)
        self.topics[path] = text
        self.topic_rows[path], self.row_topic[row] = row, path
        self._topic_index.add([row], [self._topic_doc(path)])
        return True

    def _on_amend(self, op: ops.CuratedEvent) -> bool:
        path, text = parse(op.key), op.text or ""
        if path.topic is None:
            if path.domain not in self.domains:
                return False
            self.domains[path.domain] = text
            changed = [p for p in self.topics if p.domain == path.domain]
        else:
            if path not in self.topics:
                return False
            self.topics[path] = text
            changed = [path]
        for p in changed:
            self._topic_index.remove([self.topic_rows[p]])
            self._topic_index.add([self.topic_rows[p]], [self._topic_doc(p)])
        return True

    def _on_limits(self, op: ops.CuratedEvent) -> bool:
        self.limits = Limits.from_fields(op.fields or {})
        return True

    def _on_capture(self, op: ops.CuratedEvent) -> bool:
        if op.key in self.captures or op.kind is None or op.scope is None:
            return False
        self.captures[op.key] = Capture(
            op.key,
            op.kind,
            op.text or "",
            {str(k): str(v) for k, v in (op.fields or {}).items()},
            op.scope,
            tuple(op.paths),
            tuple(op.refs),
            op.provenance or "machine",
            op.at_ms,
        )
        return True

    def _on_file(self, op: ops.CuratedEvent) -> bool:
        if not op.refs or op.refs[0] in self.filed or op.key in self.facts or not op.paths:
            return False
        if op.kind is None or op.scope is None or op.scope not in F.SCOPE_TIERS:
            return False
        fields = {str(k): str(v) for k, v in (op.fields or {}).items()}
        digest = F.payload_hash(op.kind, op.text or "", fields)
        paths = tuple(parse(p) for p in op.paths)
        if any(p not in self.topics for p in paths):
            return False
        holder = self.by_hash.get(digest)
        if holder is not None:  # a duplicate, unless this filing supersedes the holder
            cap = self.captures.get(op.refs[0])
            if cap is None or f"supersedes:{holder}" not in cap.refs:
                return False
        row = len(self.row_fact)
        fact = F.Fact(
            op.key,
            op.kind,
            op.text or "",
            fields,
            op.scope,
            digest,
            paths,
            op.provenance or "machine",
            op.refs[0],
            op.at_ms,
            row,
        )
        self.facts[fact.id], self.row_fact[row] = fact, fact.id
        self.filed[fact.capture] = fact.id
        self.by_hash[digest] = fact.id
        for p in paths:
            self.by_path.setdefault(p, {})[fact.id] = None
        self._fact_index.add([row], [fact_text(fact)])
        self._changed(fact)
        return True

    def _changed(self, fact: F.Fact | None = None) -> None:
        self.version += 1
        if fact is not None:
            fact.rendered = F.block(
                fact.id, fact.kind, fact.scope, fact.primary, fact.body, fact.fields
            )
            self.min_block = min(self.min_block, len(fact.rendered))

    def _retire(self, fact: F.Fact, by: str) -> None:
        self._changed()
        fact.superseded_by = by
        if self.by_hash.get(fact.hash) == fact.id:
            del self.by_hash[fact.hash]
        for p in fact.paths:
            self.by_path[p].pop(fact.id, None)
        self._fact_index.remove([fact.row])
        partner = self.disputes.pop(fact.id, None)
        if partner is not None:
            self.disputes.pop(partner, None)

    def _on_supersede(self, op: ops.CuratedEvent) -> bool:
        old = self.live(op.key)
        if old is None or not op.refs or op.refs[0] not in self.facts or op.refs[0] == op.key:
            return False
        self._retire(old, op.refs[0])
        return True

    def _on_dispute(self, op: ops.CuratedEvent) -> bool:
        a, b = op.key, op.refs[0] if op.refs else ""
        if (
            a == b
            or not (self.live(a) and self.live(b))
            or a in self.disputes
            or b in self.disputes
        ):
            return False
        self.disputes[a], self.disputes[b] = b, a
        self._changed()
        return True

    def _on_resolve(self, op: ops.CuratedEvent) -> bool:
        a, b = op.key, op.refs[0] if op.refs else ""
        if self.disputes.get(a) != b:
            return False
        if op.outcome == a:
            self._retire(self.facts[b], a)
        elif op.outcome == b:
            self._retire(self.facts[a], b)
        elif op.outcome == "both":
            del self.disputes[a], self.disputes[b]
            self._changed()
        else:
            return False
        return True

    def _on_pin(self, op: ops.CuratedEvent) -> bool:
        if op.key in self.pins or op.blob is None:
            return False
        self.pins[op.key] = (tuple(op.refs), bytes(op.blob), op.at_ms)
        return True

    def _on_audit_open(self, op: ops.CuratedEvent) -> bool:
        if op.key in self.audits:
            return False
        self.audits[op.key] = {
            "id": op.key,
            "state": "open",
            "opened_ms": op.at_ms,
            "closed_ms": None,
            "subject": op.refs[0] if op.refs else None,
            "classifier": op.text,
            "call": op.outcome,
            "answer": [],
            "error": None,
        }
        return True

    def _on_audit_close(self, op: ops.CuratedEvent) -> bool:
        audit = self.audits.get(op.key)
        if (
            audit is None
            or audit["state"] != "open"
            or op.outcome not in ("ok", "error", "abandoned")
        ):
            return False
        audit.update(state=op.outcome, closed_ms=op.at_ms, answer=list(op.paths), error=op.text)
        return True

    # ---- checkpoints (chitta/organs/curated_checkpoint.py) ---------------------------
    def snapshot(self, ctx: SnapshotContext) -> dict[str, Any]:
        rows = curated_checkpoint.rows(self)
        ctx.write_records(SIDECAR, MAGIC, VERSION, rows)
        return {"facts": len(self.facts), "rows": len(rows), "ignored": self.ignored}

    def restore(self, state: dict[str, Any], ctx: RestoreContext) -> None:
        rows = ctx.read_records(SIDECAR, MAGIC, VERSION)
        curated_checkpoint.load(self, rows)
        self.ignored = int(state["ignored"])
        if len(rows) != int(state["rows"]) or len(self.facts) != int(state["facts"]):
            raise ValueError("curated: the sidecar and the state disagree")
        topics = sorted(self.topics, key=self.topic_rows.__getitem__)
        if topics:
            docs = [self._topic_doc(p) for p in topics]
            self._topic_index.add([self.topic_rows[p] for p in topics], docs)
        live = [f for f in self.facts.values() if f.live]
        if live:
            self._fact_index.add([f.row for f in live], [fact_text(f) for f in live])

    def restored(self, fact: F.Fact) -> None:
        """Index a fact read from a checkpoint (curated_checkpoint.load)."""
        self.facts[fact.id], self.row_fact[fact.row] = fact, fact.id
        self.filed[fact.capture] = fact.id
        if fact.live:
            self._changed(fact)
            self.by_hash[fact.hash] = fact.id
            for p in fact.paths:
                self.by_path.setdefault(p, {})[fact.id] = None

    def stats(self) -> dict[str, Any]:
        return {
            "domains": len(self.domains),
            "topics": len(self.topics),
            "facts": sum(f.live for f in self.facts.values()),
            "open_captures": len(self.captures) - len(self.filed),
            "open_disputes": len(self.disputes) // 2,
            "pins": len(self.pins),
            "ignored": self.ignored,
        }
