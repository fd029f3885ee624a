"""Reconciliation (pure): is a candidate new, a confirmation, or a change?

Given a candidate and the known facts nearest to it, with the judge's
readings of each pair (``judge.Judgement``), decide

- ``NONE``: it restates a fact (a confirmation);
- ``UPDATE``: it changes a fact; the old one is superseded by the new text;
- ``DELETE``: it retracts a fact ("no longer uses Vim") with nothing new;
- ``ADD``: nothing known is about the same thing.

It reads judgements only, never the words: whether a statement marks a
change is one of the pair facts the judge gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from halls.consolidate.judge import Judgement


@dataclass(frozen=True, slots=True)
class Known:
    id: str
    text: str
    similarity: float
    vector: Any = None  # the fact's embedding (np.ndarray), for the pair judge


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str  # ADD, NONE, UPDATE or DELETE
    target_id: str | None
    reason: str
    explicit: bool = False  # an explicit change ("now", "no longer"): needs no repetition


_KIND = {"same": "NONE", "update": "UPDATE", "retract": "DELETE"}
EXPLICIT = 0.5  # an update or retraction judged this sure needs no repetition
# An implicit change (no word of change) retires a fact on the judge's word
# alone, so that word must be more likely than not: over a cluster's
# readings, the change's summed confidence is at least half the readings.
MAJORITY = 0.5


def decide(
    known: Sequence[Known],
    judged: Sequence[tuple[Known, Judgement]],
    marked: bool = True,
) -> Decision:
    """Reconcile a candidate from the judge's answers about it and known facts.

    ``known`` are the nearest facts, ``judged`` those the judge was asked
    about with its answers, ``marked`` whether the candidate says it is a
    change ("now", "switched", "no longer"; a pair fact of the judge). The
    most confident answer other than ``unrelated``, weighed by nearness,
    names the fact the candidate confirms, changes or retracts; none: ``ADD``.
    An implicit change (not ``marked``) waits for evidence like any
    statement, so a one-off remark never replaces a fact on its own.
    """
    best: tuple[float, Known, Judgement] | None = None
    for k, j in judged:
        if j.label == "unrelated":
            continue
        if j.label != "same" and not marked and j.confidence < MAJORITY:
            continue  # a change most readings do not see: another fact
        score = j.confidence * k.similarity
        if best is None or score > best[0]:
            best = (score, k, j)
    if best is None:
        if not known:
            return Decision("ADD", None, "no long-term fact is about this yet")
        near = max(known, key=lambda k: k.similarity)
        return Decision(
            "ADD",
            None,
            f"nearest fact {near.id} is about something else (cosine {near.similarity:.2f})",
        )
    _, k, j = best
    kind = _KIND[j.label]
    how = {"NONE": "restates", "UPDATE": "changes", "DELETE": "retracts"}[kind]
    why = f"{how} {k.id} (judge {j.by}: {j.label} {j.confidence:.2f}, cosine {k.similarity:.2f})"
    explicit = kind != "NONE" and j.confidence >= EXPLICIT and marked
    return Decision(kind, k.id, why, explicit=explicit)
