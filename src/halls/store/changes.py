"""The primitive changes a consolidation run (or its revert) applies.

The runner turns an engine's decisions into these; a store applies a list
of them, together with the run record, in one transaction, so a run lands
whole or not at all. Purges are not here: they are irreversible and run in
their own transaction followed by a vacuum (``Store.purge``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from halls.models import Edge, LongFact, OpenLoop, ShortEntry


@dataclass(frozen=True, slots=True)
class AddFact:
    """Store a new fact; its ``derived_from`` become edges stamped ``fact.created_at``."""

    fact: LongFact
    vector: np.ndarray


@dataclass(frozen=True, slots=True)
class SetFact:
    """Overwrite a fact's mutable fields (status, evidence, links, ...).

    Not its sources: ``derived_from`` is read from the edges, which change
    through ``AddEdges`` / ``RemoveEdges`` only.
    """

    fact: LongFact


@dataclass(frozen=True, slots=True)
class DeleteFact:
    """Withdraw a fact a reverted run had created, and its edges (not a purge: no vacuum)."""

    id: str


@dataclass(frozen=True, slots=True)
class HideShort:
    """Take entries out of search (``hidden``) or put them back: the sources
    of a fact that was superseded or made obsolete say what is no longer true."""

    ids: tuple[str, ...]
    hidden: bool


@dataclass(frozen=True, slots=True)
class MarkShort:
    """Record that entries were consolidated into a fact (None: not any more).

    Consolidated entries stay in short-term memory, and in search, until
    their TTL; recall ranks them below their fact.
    """

    ids: tuple[str, ...]
    fact_id: str | None


@dataclass(frozen=True, slots=True)
class DeleteShort:
    """Delete entries (age-out) and every edge touching them."""

    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RestoreShort:
    entry: ShortEntry
    vector: np.ndarray
    consolidated_into: str | None


@dataclass(frozen=True, slots=True)
class SetLoop:
    loop: OpenLoop


@dataclass(frozen=True, slots=True)
class SetFlag:
    id: str
    status: str


@dataclass(frozen=True, slots=True)
class AddEdges:
    """Association edges, stamped by the runner; an edge already there keeps its time.

    Not ``supersedes`` edges (``InvalidInput``): those are the facts' links.
    """

    edges: tuple[Edge, ...]


@dataclass(frozen=True, slots=True)
class RemoveEdges:
    """Remove edges by (src, dst, kind); their ``created_at`` is not compared."""

    edges: tuple[Edge, ...]


Change = (
    AddFact
    | SetFact
    | DeleteFact
    | MarkShort
    | HideShort
    | DeleteShort
    | RestoreShort
    | SetLoop
    | SetFlag
    | AddEdges
    | RemoveEdges
)
