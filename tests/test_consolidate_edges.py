"""A fact's sources and its edges cannot disagree: runs, reverts and age-outs on a real store.

A scripted engine proposes exactly the decisions under test; the runner,
revert and a SQLite store do the rest.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from halls.config import ConsolidatorSettings
from halls.consolidate.engine import Inputs, Plan, Proposal
from halls.consolidate.revert import revert
from halls.consolidate.runner import Runner
from halls.models import LongFact, Run, ShortEntry, new_id, to_datetime
from halls.store.sqlite import SQLiteStore

T0 = 1_780_000_000.0
DIM = 8


class Scripted:
    name = "scripted"

    def __init__(self, proposals: list[Proposal]) -> None:
        self.proposals = proposals

    def plan(self, inputs: Inputs) -> Plan:
        return Plan(self.proposals)


def embed(texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    out[:, 0] = 1.0
    return out


def entries(store: SQLiteStore, n: int) -> list[ShortEntry]:
    made = [
        ShortEntry(
            id=new_id("short"),
            content=f"entry {i}",
            created_at=to_datetime(T0),  # type: ignore[arg-type]
            occurred_at=to_datetime(T0),  # type: ignore[arg-type]
        )
        for i in range(n)
    ]
    store.add_short(made, embed([e.content for e in made]))
    return made


def a_fact(store: SQLiteStore, sources: list[str]) -> LongFact:
    f = LongFact(
        id=new_id("long"),
        content="a fact",
        first_seen=to_datetime(T0),  # type: ignore[arg-type]
        last_confirmed=to_datetime(T0),  # type: ignore[arg-type]
        created_at=to_datetime(T0),  # type: ignore[arg-type]
        occurred_at=to_datetime(T0),  # type: ignore[arg-type]
        derived_from=sources,
    )
    store.add_fact(f, embed([f.content])[0])
    return f


def run(store: SQLiteStore, proposals: list[Proposal], at: float) -> Run:
    return Runner(store, Scripted(proposals), ConsolidatorSettings(), embed, lambda: at).run()


def sources(store: SQLiteStore, fact_id: str) -> tuple[list[str], set[str]]:
    fact = store.get_fact(fact_id)
    assert fact is not None
    edges = {e.dst for e in store.edges([fact_id], ["derived_from"]) if e.src == fact_id}
    return fact.derived_from, edges


def test_reverting_a_confirm_removes_the_edges_it_added(tmp_path: Path) -> None:
    """Confirm adds 2 sources to 3; revert leaves 3 in derived_from and 3 edges (was 5 edges)."""
    store = SQLiteStore(tmp_path / "s.sqlite3", "s")
    e = entries(store, 5)
    f = a_fact(store, [x.id for x in e[:3]])
    done = run(
        store, [Proposal("confirm", "seen again", f.id, members=[e[3].id, e[4].id])], T0 + 60
    )
    listed, edges = sources(store, f.id)
    assert listed == [x.id for x in e] and edges == set(listed)
    assert {x.created_at for x in store.edges([e[4].id])} == {T0 + 60}, "the service clock"
    revert(store, done, embed, T0 + 120)
    listed, edges = sources(store, f.id)
    assert listed == [x.id for x in e[:3]] and edges == set(listed)
    store.close()


def test_age_out_takes_the_edges_and_revert_brings_them_back(tmp_path: Path) -> None:
    """An aged-out source leaves the fact's sources and edges; reverting restores both."""
    store = SQLiteStore(tmp_path / "s.sqlite3", "s")
    e = entries(store, 2)
    f = a_fact(store, [e[0].id, e[1].id])
    done = run(store, [Proposal("age_out", "expired", e[0].id)], T0 + 60)
    assert store.get_short(e[0].id) is None
    assert store.edges([e[0].id]) == []
    assert sources(store, f.id) == ([e[1].id], {e[1].id})
    revert(store, done, embed, T0 + 120)
    listed, edges = sources(store, f.id)
    assert set(listed) == {e[0].id, e[1].id} and edges == set(listed)
    assert {x.created_at for x in store.edges([e[0].id])} == {T0}, "its first time kept"
    store.close()
