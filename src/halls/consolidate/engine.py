"""The Engine protocol: what a run asks an engine, and what it answers.

An engine reads one snapshot of a store (``Inputs``) and answers a plan: a
list of ``Proposal`` s. It changes nothing; the runner applies the plan, so a
dry run is the same plan, not applied. An engine that cannot work at all
(its endpoint is down) raises ``EngineUnavailable`` and the run aborts with
nothing changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from halls.config import ConsolidatorSettings
from halls.consolidate.distill import Unit
from halls.models import (
    ActionKind,
    Brief,
    ForgetFlag,
    JournalEvent,
    LongFact,
    OpenLoop,
    ShortEntry,
)


class EngineUnavailable(Exception):
    """The engine cannot produce a plan (e.g. its model endpoint is down)."""


@dataclass
class Inputs:
    now: float
    entries: list[ShortEntry]  # oldest first
    consolidated: list[str | None]  # per entry: the fact it was consolidated into
    vectors: np.ndarray
    facts: list[LongFact]  # active
    fact_vectors: np.ndarray
    loops: list[OpenLoop]  # open
    loop_vectors: np.ndarray
    briefs: list[Brief]  # since the last run
    phrase_vectors: dict[str, np.ndarray]  # every hint, noise item and intent text
    flags: list[ForgetFlag]  # pending
    flagged: dict[str, LongFact]  # the facts the flags name
    journal: list[JournalEvent]  # the window's events not yet consumed by a fact
    settings: ConsolidatorSettings
    # What is clustered: the statements of the unconsolidated entries, the
    # journal window and briefs' summaries (halls.consolidate.distill), and
    # one unit-length vector per unit.
    units: list[Unit] = field(default_factory=list)
    unit_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    # Per pending flag id: its reason's class read by meaning (consolidate.reasons).
    flag_classes: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Proposal:
    """One decision; the runner turns it into an action and store changes.

    ``target_id`` is the existing record acted on (for promote: the new
    fact's id); ``new_id`` is the fact a supersede creates. ``members`` are
    the short-term entries that are the evidence.
    """

    kind: ActionKind
    reason: str
    target_id: str
    new_id: str = ""
    members: list[str] = field(default_factory=list)
    text: str | None = None
    vector: np.ndarray | None = None
    topic: str | None = None
    evidence: int = 0
    first_seen: float | None = None
    last_seen: float | None = None
    journal: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)  # PII to scrub, for purge
    flags: list[str] = field(default_factory=list)  # the forget flags it settles
    brief_id: str | None = None
    note: str | None = None
    # The new fact's category when the engine names one (else decided by form).
    category: str | None = None
    # The new fact comes from a pinned entry: it is pinned too (never fades,
    # and only a statement that says it changed retires it).
    pinned: bool = False
    # The highest importance of its entries: the new (or confirmed) fact's.
    importance: float | None = None
    # The work scope most of its entries were written for (halls.scopes).
    scope: str | None = None


@dataclass
class Plan:
    proposals: list[Proposal]
    notes: list[str] = field(default_factory=list)
    # The engine's own tallies, added to the run record's counts (llm: calls, fallbacks).
    counts: dict[str, int] = field(default_factory=dict)


class Engine(Protocol):
    name: str

    def plan(self, inputs: Inputs) -> Plan: ...
