"""The wisdom lifecycle: when a recurring pattern is promoted, trusted or demoted.

Stages (the seed's FSM): candidate -> provisional -> trusted -> demoted. A
candidate is *promotable* with support >= 4, >= 2 distinct sessions, score >=
0.72 and zero contradictions (the seed's gate); promotion writes a memory of kind
``wisdom`` and moves it to provisional. A provisional candidate becomes trusted
when it is promotable with twice the support (>= 8) across >= 3 sessions
(chitta's choice: the seed names the stage, not its gate). A provisional or
trusted candidate with a contradiction is demoted. A contradiction blocks
promotion until it is cleared by hand (``wisdom_clear``): that resets the count
and moves a demoted candidate back to candidate. No other move is legal.
"""

from __future__ import annotations

PROMOTE_SUPPORT = 4
PROMOTE_SESSIONS = 2
PROMOTE_SCORE = 0.72
TRUST_SUPPORT = 8
TRUST_SESSIONS = 3

LEGAL: frozenset[tuple[str, str]] = frozenset(
    {
        ("candidate", "provisional"),
        ("provisional", "trusted"),
        ("provisional", "demoted"),
        ("trusted", "demoted"),
        ("demoted", "candidate"),
    }
)


def promotable(support: int, sessions: int, score: float, contradictions: int) -> bool:
    return (
        support >= PROMOTE_SUPPORT
        and sessions >= PROMOTE_SESSIONS
        and score >= PROMOTE_SCORE
        and contradictions == 0
    )


def trustable(support: int, sessions: int, score: float, contradictions: int) -> bool:
    return (
        promotable(support, sessions, score, contradictions)
        and support >= TRUST_SUPPORT
        and sessions >= TRUST_SESSIONS
    )


def next_stage(
    stage: str, support: int, sessions: int, score: float, contradictions: int
) -> tuple[str, str] | None:
    """``(stage, reason)`` the automatic pass moves a candidate to, or None. (The
    move demoted -> candidate is only made by clearing contradictions by hand.)"""
    if stage == "candidate" and promotable(support, sessions, score, contradictions):
        return "provisional", "promoted: support, sessions and score met, no contradiction"
    if stage in ("provisional", "trusted") and contradictions > 0:
        return "demoted", f"demoted: {contradictions} contradiction(s)"
    if stage == "provisional" and trustable(support, sessions, score, contradictions):
        return "trusted", "trusted: support and sessions doubled the promotion gate"
    return None


def legal(src: str, dst: str) -> bool:
    return (src, dst) in LEGAL
