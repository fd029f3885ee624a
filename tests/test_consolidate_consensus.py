"""A cluster's statements are each asked about the fact they may change, and agree.

Reconciliation asks the judge about every distinct statement of a cluster,
not about its representative alone (``consensus._consensus``): one phrasing
may say a fact ended and another what holds instead, which together is a
change. A brief's hint that gates a cluster is one more reading of it. And
an unsure reading never merges statements that claim different numbers. With
the real embedder and judge.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import numpy as np

from halls.config import ConsolidatorSettings
from halls.consolidate.briefs import Phrase
from halls.consolidate.candidates import Candidate
from halls.consolidate.consensus import READINGS, _consensus, _statements
from halls.consolidate.distill import Unit
from halls.consolidate.heuristic import HeuristicDecider
from halls.consolidate.judge import Judgement
from halls.consolidate.reconcile import Known, decide

WHEN = datetime(2026, 11, 20, tzinfo=UTC)


def _candidate(said: list[str], vectors: np.ndarray, **more: object) -> Candidate:
    """A cluster of ``said`` (vectors as rows), the first its representative."""
    fields: dict[str, object] = {"score": 2.0, "gate": "evidence", **more}
    return Candidate(
        entries=[Unit(t, WHEN, entries=["s_1"]) for t in said],
        text=said[0],
        vector=vectors[0],
        topic=None,
        vectors=vectors,
        **fields,  # type: ignore[arg-type]
    )


def _reconcile(
    cand: Candidate, fact: str, fact_vec: np.ndarray, cfg: ConsolidatorSettings | None = None
) -> tuple[HeuristicDecider, list[Known]]:
    """The heuristic decider and the one known fact ``l_1``, near the representative."""
    known = [Known("l_1", fact, float(fact_vec @ cand.vector), fact_vec)]
    settings = SimpleNamespace(settings=cfg or ConsolidatorSettings(), flag_classes={})
    return HeuristicDecider(settings), known  # type: ignore[arg-type]


def test_an_ended_fact_and_what_holds_instead_supersede_it(embedder) -> None:
    """The statement that ends the old fact alone retracts it; with the statement of
    what holds instead, the cluster changes it, and says so without repetition."""
    fact = "Mira drinks black coffee in the morning"
    said = [
        "Mira no longer drinks black coffee",  # the representative
        "she has matcha in the morning instead",
    ]
    v = embedder.embed([fact, *said])
    cand = _candidate(said, v[1:])
    decider, known = _reconcile(cand, fact, v[0])
    got = decider.reconcile(cand, known, {"l_1": fact}).decision
    assert (got.kind, got.target_id, got.explicit) == ("UPDATE", "l_1", True), got
    alone = replace(cand, entries=cand.entries[:1], vectors=v[1:2])
    assert decider.reconcile(alone, known, {"l_1": fact}).decision.kind == "DELETE"


def test_a_briefs_hint_is_read_beside_the_statements_it_gates(embedder) -> None:
    """The hint names the change in words near the old fact; the statement alone
    is too far from it (cosine under the related threshold, here 0.4: the
    default 0.3 reads this statement too) to be judged."""
    fact, said, hint = (
        "The team chats on Slack",
        "We switched our chat to Zulip",
        "Team chat happens on Zulip",
    )
    v = embedder.embed([fact, said, hint])
    cfg = ConsolidatorSettings(related_threshold=0.4)
    assert float(v[0] @ v[1]) < cfg.related_threshold <= float(v[0] @ v[2])
    cand = _candidate(
        [said], v[1:2], score=1.0, gate="brief b_1 hint", hint=Phrase(hint, v[2], "b_1")
    )
    decider, known = _reconcile(cand, fact, v[0], cfg)
    got = decider.reconcile(cand, known, {"l_1": fact}).decision
    assert (got.kind, got.target_id) == ("UPDATE", "l_1"), got
    assert decider.reconcile(replace(cand, hint=None), known, {}).decision.kind == "ADD"


def test_a_change_in_other_words_under_0_4_is_read_at_the_default(embedder) -> None:
    """At the default related threshold (0.3) a new value said in words that sit
    under 0.4 from the fact it replaces is judged, and read as its change."""
    fact, said = "The team chats on Slack", "We switched our chat to Zulip"
    v = embedder.embed([fact, said])
    cfg = ConsolidatorSettings()
    assert cfg.related_threshold <= float(v[0] @ v[1]) < 0.4
    cand = _candidate([said], v[1:2])
    decider, known = _reconcile(cand, fact, v[0], cfg)
    got = decider.reconcile(cand, known, {"l_1": fact}).decision
    assert (got.kind, got.target_id) == ("UPDATE", "l_1"), got


def test_a_cluster_is_read_once_per_distinct_statement_at_most_readings() -> None:
    """The representative first, then the hint, then each other text once, up to READINGS."""
    when = datetime(2026, 11, 20, tzinfo=UTC)
    texts = ["rep", "rep", "b", "b", *[f"s{n}" for n in range(20)]]
    v = np.eye(len(texts), dtype=np.float32)
    cand = Candidate(
        entries=[Unit(t, when, entries=[f"s_{n}"]) for n, t in enumerate(texts)],
        text="rep",
        vector=v[0],
        topic=None,
        score=2.0,
        gate="evidence",
        vectors=v,
        hint=Phrase("hint", v[1], "b_1"),
    )
    got = [t for t, _ in _statements(cand)]
    assert got == ["rep", "hint", "b", "s0", "s1", "s2", "s3", "s4"]
    assert len(got) == READINGS


def j(label: str, confidence: float) -> Judgement:
    return Judgement(label, confidence, "local")  # type: ignore[arg-type]


def test_consensus_of_one_statement_is_its_answer() -> None:
    assert _consensus([j("update", 0.6)]) == j("update", 0.6)


def test_consensus_sums_the_confidence_of_each_reading() -> None:
    got = _consensus([j("same", 0.6), j("update", 0.7), j("same", 0.8)])
    assert got.label == "same" and abs(got.confidence - 1.4 / 3) < 1e-9


def test_a_retraction_beside_something_new_is_a_change() -> None:
    got = _consensus([j("unrelated", 0.98), j("retract", 0.9)])
    assert got == j("update", 0.9)
    # Only retractions: the fact ended, nothing new was said.
    assert _consensus([j("retract", 0.9), j("retract", 0.7)]).label == "retract"
    # A restatement among them: no change is read from the retraction.
    assert _consensus([j("retract", 0.6), j("same", 0.9), j("unrelated", 0.3)]).label == "same"


def test_an_implicit_change_most_readings_do_not_see_is_another_fact() -> None:
    """With no word of change in any phrasing, a change retires a fact only when the
    readings lean to it (mean confidence >= 0.5); a phrasing that says "now" marks
    the whole cluster, and then its reading stands (waiting for evidence when unsure)."""
    fact = Known("l_1", "Jon is looking for a spot for his dance studio", 0.7)
    # "Jon is getting ready for a dance competition", "Jon rehearses every night"
    plain = False
    assert decide([fact], [(fact, j("update", 0.45))], plain).kind == "ADD"
    assert decide([fact], [(fact, j("retract", 0.45))], plain).kind == "ADD"
    leaning = decide([fact], [(fact, j("update", 0.55))], plain)
    assert (leaning.kind, leaning.explicit) == ("UPDATE", False)
    # A restatement needs no majority: an unsure "same" still confirms.
    assert decide([fact], [(fact, j("same", 0.3))], plain).kind == "NONE"
    marked = True  # ... and "Jon now rents a studio downtown"
    unsure = decide([fact], [(fact, j("update", 0.45))], marked)
    assert (unsure.kind, unsure.explicit) == ("UPDATE", False)
    sure = decide([fact], [(fact, j("update", 0.6))], marked)
    assert (sure.kind, sure.explicit) == ("UPDATE", True)


def test_statements_claiming_different_numbers_never_make_one_fact(memory) -> None:
    """Close (cosine > 0.75) and judged only unsurely apart, yet each claims a number the
    other lacks: two days of them are two statements, not the evidence of one fact."""
    now = datetime.now(UTC)
    memory.remember("We release every two weeks", store="n", occurred_at=now - timedelta(days=2))
    memory.remember("We release once a month", store="n", occurred_at=now - timedelta(days=1))
    run = memory.consolidate(store="n")
    assert [a.kind for a in run.actions if a.kind in ("promote", "supersede")] == []
    assert memory.list_long(store="n") == []


def test_a_fact_is_never_confirmed_by_an_unsure_reading_with_other_numbers(embedder) -> None:
    """Above the cluster threshold an unsure "unrelated" confirms a fact, but not a
    statement that claims a number the fact lacks and lacks the fact's."""
    fact, said = "We release every two weeks", "We release once a month"
    v = embedder.embed([fact, said])
    assert float(v[0] @ v[1]) >= ConsolidatorSettings().cluster_threshold
    cand = _candidate([said], v[1:])
    decider, known = _reconcile(cand, fact, v[0])
    got = decider.reconcile(cand, known, {"l_1": fact}).decision
    assert got.kind != "NONE", got
