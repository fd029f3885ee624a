"""Decay of a fact flagged as stale (pure).

A stale fact is not deleted or demoted: it keeps its history but loses
half its evidence per stale flag (never below 1), so recall's evidence
multiplier and recency curve let it sink over time unless it is confirmed
again.
"""

from __future__ import annotations


def decayed_evidence(evidence_count: int) -> int:
    return max(1, evidence_count // 2)
