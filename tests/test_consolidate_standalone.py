"""Statements that stand on their own (halls.consolidate.standalone), with the real spaCy model."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from halls.consolidate import standalone
from halls.consolidate.candidates import Candidate
from halls.consolidate.cluster import medoid
from halls.consolidate.distill import Unit

SAID = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    "said",
    [
        "Check out this piece Caroline made.",
        "Their inclusivity and support really spoke to Caroline.",
        "Caroline tried to apologize to them.",
        "Caroline loves it.",
        "That was a great experience for Caroline.",
        "Caroline met friends there.",
        # A request for something now points at its moment.
        "Run the tests again.",
        "Fix the build.",
    ],
)
def test_a_subject_or_object_pointing_outside_the_statement_is_unresolved(said: str) -> None:
    [reading] = standalone.read([said])
    assert reading.unresolved


@pytest.mark.parametrize(
    "said",
    [
        "Melanie took her kids to a park.",  # "her": Melanie, before it
        "Melanie has two kids, and they love the beach.",  # "they": the kids
        "Caroline bought a guitar and plays it every day.",  # "it": the guitar
        "Caroline and others love camping; they go every summer.",  # a coordination
        "Caroline made a painting that shows a sunset.",  # relative "that"
        "Melanie signed up for a pottery class this year.",  # "this" of a date
        "Caroline's sister lives in Leeds; she works at a hospital.",
        "The user prefers tabs.",
        # A request that forbids or holds from now on is a standing rule.
        "Never force-push to release branches.",
        "Don't touch anything under vendor/.",
        "Always add type hints to new functions.",
    ],
)
def test_a_statement_with_its_antecedents_stands_alone(said: str) -> None:
    [reading] = standalone.read([said])
    assert not reading.unresolved


def _unit(text: str, pinned: bool = False) -> Unit:
    return Unit(content=text, occurred_at=SAID, entries=["s_1"], pinned=pinned)


def _candidate(*units: Unit) -> Candidate:
    return Candidate(list(units), units[0].content, np.zeros(2), None, 3.0, "evidence 3 >= 2")


def test_a_cluster_stands_when_one_of_its_statements_does() -> None:
    """Only pointing statements: no new fact; one that stands alone, or a pinned one: it stands."""
    them = _unit("Caroline tried to apologize to them.")
    assert not _candidate(them, them).standalone
    assert _candidate(them, _unit("Caroline apologized to Melanie's parents.")).standalone
    assert _candidate(_unit("Caroline tried to apologize to them.", pinned=True)).standalone


def test_medoid_among_picks_the_central_standalone_member() -> None:
    """The representative is the member nearest the others, chosen only among those allowed."""
    angles = np.radians([0.0, 20.0, 40.0, 90.0])  # unit vectors; 40 degrees is the centre
    v = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    assert medoid(v, [0, 1, 2, 3]) == 2
    assert medoid(v, [0, 1, 2, 3], among=[0, 3]) == 0
    assert medoid(v, [0, 3], among=[3]) == 3
