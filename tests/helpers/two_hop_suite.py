"""A two-hop recall suite (issue 18): "A rel B" and "B rel C" as two memories and two
facts; the question names A and asks for C, sharing no name with the second memory.

Names are made from syllables (no real entity), 60 cases over five relation chains;
every chain's second memories share the question's content words, so keywords
alone cannot tell the right one from the other cases'.
"""

from __future__ import annotations

import dataclasses
from typing import Any

SYL = ["ka", "lo", "mi", "ren", "tu", "sa", "vo", "ne", "dri", "pel", "qua", "zo"]

CHAINS = [
    # (fact 1 text, predicate 1, fact 2 text, predicate 2, question)
    ("{a} works at {b}.", "works at", "{b} is headquartered in {c}.", "headquartered in",
     "In which city is the employer of {a} headquartered?"),
    ("{a} uses {b} every day.", "uses", "{b} runs on {c}.", "runs on",
     "What platform does the tool {a} uses run on?"),
    ("{a} lives in {b}.", "lives in", "{b} is located in {c}.", "located in",
     "Which country is the home town of {a} located in?"),
    ("{a} owns {b}.", "owns", "{b} was built by {c}.", "built by",
     "Who built the thing that {a} owns?"),
    ("{a} depends on {b}.", "depends on", "{b} is written in {c}.", "written in",
     "What language is the dependency of {a} written in?"),
]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Case:
    a: str
    b: str
    c: str
    chain: int
    question: str


def _name(i: int, kind: int) -> str:
    s = SYL
    return (s[(i + kind) % 12] + s[(i // 12 + 3 * kind) % 12] + s[(i * 7 + kind) % 12]).title()


def cases(n: int = 60) -> list[Case]:
    out, seen = [], set()
    i = 0
    while len(out) < n:
        a, b, c = _name(i, 0), _name(i, 1) + "x", _name(i, 2) + "ia"
        i += 1
        if {a, b, c} & seen or len({a, b, c}) < 3:
            continue
        seen |= {a, b, c}
        chain = len(out) % len(CHAINS)
        out.append(Case(a, b, c, chain, CHAINS[chain][4].format(a=a)))
    return out


def load(field: Any, suite: list[Case]) -> list[tuple[int, int]]:
    """Write each case's two memories and two facts; (memory 1, memory 2) per case."""
    ids = []
    for case in suite:
        t1, p1, t2, p2, _ = CHAINS[case.chain]
        m1 = field.remember(t1.format(a=case.a, b=case.b))
        m2 = field.remember(t2.format(b=case.b, c=case.c))
        field.call("kg_add", subject=case.a, predicate=p1, object=case.b, source_memory_id=m1)
        field.call("kg_add", subject=case.b, predicate=p2, object=case.c, source_memory_id=m2)
        ids.append((m1, m2))
    for i in range(40):  # notes that share the questions' words and name no entity
        field.remember(f"Note {i}: which city, platform, country or language the team used.")
    return ids


def recall_at(
    field: Any, suite: list[Case], ids: list[tuple[int, int]], k: int, **kw: Any
) -> float:
    """Share of cases whose second memory (the answer, C) is in the top k."""
    hit = 0
    for case, (_, m2) in zip(suite, ids):
        got = [h.id for h in field.recall(case.question, k=k, touch=False, **kw)]
        hit += m2 in got
    return hit / len(suite)
