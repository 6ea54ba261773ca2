"""Second-stage variants for locomo_quality.py (issue 17 item 1 / issue 18 multi-hop). Research only.

- ``cover{g}``: recall a pool of 50, then pick greedily by normalised score plus ``g`` x the share
  of the question's content words the hit adds to those already covered by the picked hits.
- ``decomp{w}``: question decomposition without a model: sub-queries from splitting on
  conjunctions/commas and one per capitalised entity; each sub-query's keyword text is recalled
  with the question's vector, the lists fused by RRF (main list weight 1, sub-lists ``w``).
"""

from __future__ import annotations

import re
from typing import Any

from locomo_quality import variant

from chitta.recall.engine import RecallEngine

STOP = {
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "with",
    "from",
    "by",
    "about",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "do",
    "does",
    "did",
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "that",
    "this",
    "these",
    "those",
    "it",
    "its",
    "he",
    "she",
    "they",
    "them",
    "his",
    "her",
    "their",
    "we",
    "you",
    "i",
    "me",
    "my",
    "your",
    "our",
    "has",
    "have",
    "had",
    "would",
    "could",
    "should",
    "will",
    "can",
    "may",
    "might",
    "not",
    "no",
    "yes",
    "so",
    "if",
    "than",
    "then",
    "there",
    "here",
    "any",
    "some",
    "all",
    "also",
    "just",
    "more",
    "most",
    "other",
    "such",
    "into",
    "over",
    "after",
    "before",
    "during",
    "like",
    "ever",
}
WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")


def content(text: str) -> set[str]:
    return {
        w.lower().strip("'") for w in WORD.findall(text) if w.lower() not in STOP and len(w) > 2
    }


def _engine(cls: type) -> Any:
    def fn(e: Any) -> Any:
        c = e._copy(e.settings)
        c.__class__ = cls
        return c

    return fn


def _cover(gamma: float, depth: int = 50) -> Any:
    class Cover(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c = super()._copy(settings)
            c.__class__ = Cover
            return c

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            pool = super().recall(text=text, vector=vector, k=max(k, depth), **kw)
            words = content(text or "")
            if not pool or not words:
                return pool[:k]
            top = max(h.score for h in pool) or 1.0
            cov = [content(h.text) & words for h in pool]
            seen: set[str] = set()
            left = list(range(len(pool)))
            out = []
            while left and len(out) < k:
                best = max(
                    left,
                    key=lambda i: pool[i].score / top + gamma * len(cov[i] - seen) / len(words),
                )
                left.remove(best)
                out.append(pool[best])
                seen |= cov[best]
            return out

    return _engine(Cover)


for _g in (0.05, 0.1, 0.2, 0.4):
    variant(f"cover{_g}")(_cover(_g))

SPLIT = re.compile(r",|;|\band\b|\bor\b|\bboth\b", re.IGNORECASE)
ENT = re.compile(r"\b[A-Z][a-z]{2,}\b")


def subqueries(q: str) -> list[str]:
    parts = [p.strip() for p in SPLIT.split(q) if len(content(p)) >= 1]
    subs = parts if len(parts) > 1 else []
    first = q.split()[0] if q.split() else ""
    ents = [e for e in dict.fromkeys(ENT.findall(q)) if e != first and e.lower() not in STOP]
    rest = " ".join(sorted(content(q) - {e.lower() for e in ents}))
    if len(ents) > 1 and rest:
        subs += [f"{e} {rest}" for e in ents]
    return subs


def _decomp(w: float, c: int = 60) -> Any:
    class Decomp(RecallEngine):
        def _copy(self, settings: Any) -> Any:
            c2 = super()._copy(settings)
            c2.__class__ = Decomp
            return c2

        def recall(self, *, text: Any, vector: Any, k: int, **kw: Any) -> Any:  # type: ignore[override]
            main = super().recall(text=text, vector=vector, k=max(k, 25), **kw)
            subs = subqueries(text or "")
            if not subs:
                return main[:k]
            score: dict[int, float] = {}
            hit: dict[int, Any] = {}
            for h_list, wt in [(main, 1.0)] + [
                (super(Decomp, self).recall(text=s, vector=vector, k=max(k, 25), **kw), w)
                for s in subs
            ]:
                for r, h in enumerate(h_list):
                    score[h.id] = score.get(h.id, 0.0) + wt / (c + r + 1)
                    hit.setdefault(h.id, h)
            order = sorted(score, key=lambda i: (-score[i], i))[:k]
            return [hit[i] for i in order]

    return _engine(Decomp)


for _w in (0.2, 0.4, 0.7):
    variant(f"decomp{_w}")(_decomp(_w))
