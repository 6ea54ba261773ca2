"""The admission predicate, exhaustively on small cases, against a brute-force
restatement: among every subset of the candidate paths, the filing is the
largest admissible one (at most the cap, every member legal, not full, and
classified or over both floors) whose members rank best (classified first, in
their order, then by relevance, then by rendered path); its best member is the
one primary."""

from __future__ import annotations

import itertools

import pytest

from chitta.curated.admission import Rules, admit
from chitta.curated.paths import TopicPath

PATHS = [TopicPath("d", t) for t in ("a", "b", "c")]
SCORES = (0.0, 0.4, 1.0, 2.0)


def _oracle(nominated, classified, legal, full, rules):  # type: ignore[no-untyped-def]
    score = dict(nominated)
    best = max(score.values(), default=0.0)
    order = list(dict.fromkeys(classified))

    def eligible(p: TopicPath) -> bool:
        if p not in legal or p in full:
            return False
        if p in order:
            return True
        return p in score and score[p] >= rules.floor_score and score[p] >= rules.floor_ratio * best

    def priority(p: TopicPath) -> tuple[int, float, str]:
        if p in order:
            return (0, order.index(p), "")
        return (1, -score[p], p.render())

    candidates = sorted(set(score) | set(order), key=lambda p: p.render())
    best_set: tuple[TopicPath, ...] = ()
    for n in range(len(candidates) + 1):
        for subset in itertools.combinations(candidates, n):
            if len(subset) > rules.filing_cap or not all(map(eligible, subset)):
                continue
            ranked = tuple(sorted(subset, key=priority))
            if len(ranked) > len(best_set) or (
                len(ranked) == len(best_set)
                and [priority(p) for p in ranked] < [priority(p) for p in best_set]
            ):
                best_set = ranked
    return best_set


def _cases():  # type: ignore[no-untyped-def]
    for scores in itertools.product((None, *SCORES), repeat=len(PATHS)):
        nominated = [(p, s) for p, s in zip(PATHS, scores, strict=True) if s is not None]
        for classified in ((), (PATHS[2],), (PATHS[1], PATHS[0]), (PATHS[0], PATHS[0])):
            for legal_mask in ((1, 1, 1), (1, 0, 1), (0, 1, 1)):
                legal = {p for p, ok in zip(PATHS, legal_mask, strict=True) if ok}
                for full in (set(), {PATHS[2]}):
                    yield nominated, classified, legal, full


@pytest.mark.parametrize(
    "rules", [Rules(0.5, 0.5, 1), Rules(0.5, 0.5, 2), Rules(0.0, 0.0, 3), Rules(1.0, 0.9, 2)]
)
def test_admission_matches_the_brute_force_restatement(rules: Rules) -> None:
    n = 0
    for nominated, classified, legal, full in _cases():
        got = admit(nominated, classified, legal, full, rules)
        want = _oracle(nominated, classified, legal, full, rules)
        assert got.paths == want, (nominated, classified, legal, full)
        assert (got.primary is None) == (not want)  # exactly one primary, or no filing
        assert len(got.paths) <= rules.filing_cap and len(set(got.paths)) == len(got.paths)
        refused = {p for p, _ in got.refused}
        assert not refused & set(got.paths)
        n += 1
    assert n == 5**3 * 4 * 3 * 2


def test_refusal_reasons_name_the_rule() -> None:
    a, b, c = PATHS
    got = admit([(a, 2.0), (b, 0.1)], [TopicPath("d", "zz"), c], {a, b, c}, {c}, Rules(0.5, 0.5, 3))
    assert got.paths == (a,)
    assert dict(got.refused) == {TopicPath("d", "zz"): "illegal", c: "full", b: "floor"}
    capped = admit([(a, 2.0), (b, 1.9), (c, 1.8)], [], {a, b, c}, set(), Rules(0.5, 0.5, 2))
    assert capped.paths == (a, b) and capped.refused == ((c, "cap"),)
