"""The primitive changes a consolidation run (or its revert) applies.

The runner turns an engine's decisions into these; a store applies a list
of them, together with the run record, in one transaction, so a run lands
whole or not at all. Purges are not here: they are irreversible and run in
their own transaction followed by a vacuum (``Store.purge``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from halls.models import LongFact, OpenLoop, ShortEntry


@dataclass(frozen=True, slots=True)
class AddFact:
    fact: LongFact
    vector: np.ndarray


@dataclass(frozen=True, slots=True)
class SetFact:
    """Overwrite a fact's mutable fields (status, evidence, links, ...)."""

    fact: LongFact


@dataclass(frozen=True, slots=True)
class DeleteFact:
    """Withdraw a fact a reverted run had created (not a purge: no vacuum)."""

    id: str


@dataclass(frozen=True, slots=True)
class MarkShort:
    """Record that entries were consolidated into a fact (None: not any more).

    Consolidated entries stay in short-term memory until their TTL but leave
    default search, where the fact now speaks for them.
    """

    ids: tuple[str, ...]
    fact_id: str | None


@dataclass(frozen=True, slots=True)
class DeleteShort:
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
    """(src, dst, kind) association edges, e.g. a fact derived from an entry."""

    edges: tuple[tuple[str, str, str], ...]


Change = (
    AddFact
    | SetFact
    | DeleteFact
    | MarkShort
    | DeleteShort
    | RestoreShort
    | SetLoop
    | SetFlag
    | AddEdges
)
