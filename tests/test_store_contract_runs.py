"""The Store contract, consolidation side: locks, run records, changes, purge,
edges, write order, and the backend itself. Every backend must pass it.

The last test keeps the suite complete: every method of the ``Store``
protocol must be called by some contract test.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from halls.errors import AlreadyExists, InvalidInput, StoreNotFound
from halls.models import Action, Brief, Edge, ForgetFlag, Run, SearchFilter, new_id, new_run_id
from halls.store import Store
from halls.store import base as protocols
from halls.store import changes as ch
from store_contract import (
    ALL,
    T0,
    WITH_HIDDEN,
    Opened,
    at,
    axis,
    fact,
    journal,
    loop,
    opened,
    short,
    store,
    text_ids,
    vec_ids,
)

__all__ = ["opened", "store"]  # fixtures, imported for pytest


def run(
    offset: float = 0.0,
    status: str = "done",
    engine: str = "heuristic",
    name: str = "s",
    **kw: object,
) -> Run:
    """A run record; ``name`` is the store's (a run read back carries its store's name)."""
    return Run(
        id=new_run_id(),
        store=name,
        started_at=at(offset),
        engine=engine,
        status=status,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


# -- write order: vectors and neighbours --


def test_vectors_in_write_order_missing_ids_absent(store: Store) -> None:
    """vectors() returns stored vectors keyed in write order, whatever the order asked."""
    a, b = short("a"), short("b")
    store.add_short([a, b], np.stack([axis(0), axis(1)]))
    f = fact("f")
    store.add_fact(f, axis(2))
    got = store.vectors([f.id, "s_missing", b.id, a.id])
    assert list(got) == [a.id, b.id, f.id]
    assert np.allclose(got[f.id], axis(2))
    assert store.vectors([]) == {}


def test_neighbours_count_places_on_the_write_sequence_with_gaps(store: Store) -> None:
    """neighbours(): records within radius places of each id, gaps of deleted rows counted."""
    entries = [short(f"turn {i}", topic="t" if i != 3 else "u") for i in range(7)]
    store.add_short(entries, np.stack([axis(i) for i in range(7)]))
    ids = [e.id for e in entries]
    found = store.neighbours([ids[3]], 1, ALL)
    assert sorted(w.id for w in found) == ids[2:5]
    seqs = {w.id: w.seq for w in found}
    assert seqs[ids[2]] < seqs[ids[3]] < seqs[ids[4]]
    assert all(np.allclose(w.vector, axis(ids.index(w.id))) for w in found)
    # A deleted neighbour leaves a gap: it is not replaced by the next one out.
    assert store.delete_short(ids[4])
    assert sorted(w.id for w in store.neighbours([ids[3]], 1, ALL)) == ids[2:4]
    # Every record returned passes the filter, the anchors included.
    assert sorted(w.id for w in store.neighbours([ids[3]], 2, SearchFilter(topic="t"))) == [
        ids[1],
        ids[2],
        ids[5],
    ]
    assert store.neighbours([], 3, ALL) == []


# -- edges and a fact's sources --


def test_add_fact_makes_its_sources_edges_stamped_with_its_creation(store: Store) -> None:
    """A fact's derived_from become derived_from edges at created_at; edges() finds both ends."""
    s1, s2 = short("one"), short("two")
    store.add_short([s1, s2], np.stack([axis(0), axis(1)]))
    f = fact("f", when=5).model_copy(update={"derived_from": [s1.id, s2.id]})
    store.add_fact(f, axis(2))
    assert store.get_fact(f.id).derived_from == [s1.id, s2.id]  # type: ignore[union-attr]
    want = [Edge(f.id, s1.id, "derived_from", at(5).timestamp())]
    assert store.edges([s1.id]) == want
    assert len(store.edges([f.id])) == 2
    assert store.edges([f.id], ["supersedes"]) == []
    assert store.edges([]) == []


def test_update_fact_leaves_sources_to_the_edges(store: Store) -> None:
    """update_fact ignores derived_from: the edges are the one truth of a fact's sources."""
    f = fact("f").model_copy(update={"derived_from": ["j_1"]})
    store.add_fact(f, axis(0))
    store.update_fact(f.model_copy(update={"derived_from": ["j_2"], "evidence_count": 4}))
    got = store.get_fact(f.id)
    assert got is not None and got.derived_from == ["j_1"] and got.evidence_count == 4


def test_deleting_a_record_deletes_its_edges(store: Store) -> None:
    """delete_short, delete_loop, DeleteShort and DeleteFact take the edges touching them."""
    a, b = short("a"), short("b")
    store.add_short([a, b], np.stack([axis(0), axis(1)]))
    lp = loop("l")
    store.add_loop(lp, axis(2))
    f = fact("f").model_copy(update={"derived_from": [a.id, b.id, lp.id]})
    g = fact("g").model_copy(update={"derived_from": [f.id]})
    store.add_fact(f, axis(3))
    store.add_fact(g, axis(4))
    assert store.delete_short(a.id)
    assert store.delete_loop(lp.id)
    assert store.get_fact(f.id).derived_from == [b.id]  # type: ignore[union-attr]
    store.apply_changes([ch.DeleteShort((b.id,)), ch.DeleteFact(f.id)], run())
    assert store.edges([a.id, b.id, lp.id, f.id]) == []
    assert store.get_fact(g.id).derived_from == []  # type: ignore[union-attr]


def test_supersedes_edges_are_the_facts_links(store: Store) -> None:
    """edges() reads supersedes from the facts; adding one as an edge is refused;
    deleting the newer fact takes the link with it."""
    old = fact("v1", status="superseded")
    new = fact("v2", when=30).model_copy(update={"supersedes": old.id})
    old = old.model_copy(update={"superseded_by": new.id})
    store.add_fact(old, axis(0))
    store.add_fact(new, axis(1))
    assert store.edges([old.id]) == [Edge(new.id, old.id, "supersedes", at(30).timestamp())]
    with pytest.raises(InvalidInput):
        store.apply_changes([ch.AddEdges((Edge(new.id, old.id, "supersedes", 1.0),))], run())
    store.apply_changes([ch.DeleteFact(new.id)], run())
    assert store.edges([old.id]) == []
    assert store.get_fact(old.id).superseded_by is None  # type: ignore[union-attr]


def test_add_short_writes_its_edges_in_the_same_transaction(store: Store) -> None:
    """add_short's edges land with the entries; a refused batch writes neither."""
    a, b = short("Oliver chewed a shoe"), short("Oliver at the vet")
    name = "e_0123456789abcdef0123"
    edges = [Edge(a.id, name, "mentions", T0), Edge(b.id, name, "mentions", T0 + 1)]
    store.add_short([a, b], np.stack([axis(0), axis(1)]), edges)
    assert store.edges([name]) == edges
    c = short("Oliver again")
    with pytest.raises(AlreadyExists):
        store.add_short([c, a], np.stack([axis(2), axis(0)]), [Edge(c.id, name, "mentions", T0)])
    assert store.get_short(c.id) is None
    assert store.edges([c.id]) == []
    with pytest.raises(InvalidInput):
        store.add_short([c], np.stack([axis(2)]), [Edge(c.id, a.id, "supersedes", T0)])
    assert store.get_short(c.id) is None
    assert store.delete_short(a.id)
    assert store.edges([name]) == [edges[1]]


def test_adjacent_gives_the_edges_of_nodes_within_the_limit(store: Store) -> None:
    """adjacent(): both directions, each edge once, kinds filtered; an (id, kind) with
    more than limit edges gives none, others all; supersedes refused."""
    hub, other = "e_hub", "e_other"
    entries = [short(f"m{n}") for n in range(6)]
    store.add_short(entries, np.stack([axis(n) for n in range(6)]))
    mention = [Edge(e.id, hub, "mentions", T0 + n) for n, e in enumerate(entries)]
    pair = Edge(entries[0].id, entries[1].id, "co_recall", T0)
    store.apply_changes(
        [ch.AddEdges((*mention, Edge(entries[0].id, other, "mentions", T0), pair))], None
    )
    assert store.adjacent([hub], ["mentions"], 5) == []
    assert sorted(store.adjacent([hub], ["mentions"], 6), key=lambda e: e.src) == mention
    first = entries[0].id
    assert set(store.adjacent([first, hub], ["mentions", "co_recall"], 2)) == {
        mention[0],
        Edge(first, other, "mentions", T0),
        pair,
    }
    # From the other end of a directed edge, and once when both ends are asked.
    assert store.adjacent([entries[1].id], ["co_recall"], 10) == [pair]
    assert store.adjacent([first, entries[1].id], ["co_recall"], 10) == [pair]
    # Per kind: a full kind does not hide another.
    assert store.adjacent([first], ["mentions", "co_recall"], 1) == [pair]
    assert store.adjacent([hub], ["derived_from"], 10) == []
    assert store.adjacent([], ["mentions"], 10) == []
    with pytest.raises(InvalidInput):
        store.adjacent([first], ["supersedes"], 10)


def test_fact_chain_follows_supersession_both_ways(store: Store) -> None:
    """fact_chain(id): the whole chain through id, oldest first; empty for no such fact."""
    a = fact("v1", status="superseded")
    b = fact("v2", status="superseded")
    c = fact("v3")
    a = a.model_copy(update={"superseded_by": b.id})
    b = b.model_copy(update={"supersedes": a.id, "superseded_by": c.id})
    c = c.model_copy(update={"supersedes": b.id, "derived_from": ["j_x"]})
    for f, v in ((a, axis(0)), (b, axis(1)), (c, axis(2))):
        store.add_fact(f, v)
    for middle in (a.id, b.id, c.id):
        assert [f.id for f in store.fact_chain(middle)] == [a.id, b.id, c.id]
    assert store.fact_chain(c.id)[-1].derived_from == ["j_x"]
    lone = fact("alone")
    store.add_fact(lone, axis(3))
    assert store.fact_chain(lone.id) == [lone]
    assert store.fact_chain("l_missing") == []


# -- changes: each type, and all or nothing --


def test_each_change_type_applies(store: Store) -> None:
    """AddFact, SetFact, MarkShort, HideShort, SetLoop, SetFlag, AddEdges, RemoveEdges,
    RestoreShort. An entry folded into a fact stays in search (ranked below the
    fact by recall); HideShort takes it out and puts it back."""
    e1, e2 = short("entry one"), short("entry two")
    store.add_short([e1, e2], np.stack([axis(0), axis(1)]))
    lp = loop("call back")
    store.add_loop(lp, axis(2))
    flag = ForgetFlag(id=new_id("flag"), fact_id="l_x", reason="r", created_at=at(0))
    store.add_flag(flag)
    f = fact("promoted").model_copy(update={"derived_from": [e1.id]})
    r = run(name=store.name)
    store.apply_changes(
        [
            ch.AddFact(f, axis(3)),
            ch.MarkShort((e1.id,), f.id),
            ch.SetLoop(lp.model_copy(update={"status": "done", "closed_at": at(9)})),
            ch.SetFlag(flag.id, "done"),
            ch.AddEdges((Edge(f.id, e2.id, "derived_from", at(50).timestamp()),)),
        ],
        r,
    )
    assert store.get_fact(f.id).derived_from == [e1.id, e2.id]  # type: ignore[union-attr]
    assert e1.id in vec_ids(store, axis(0)), "folded: still findable"
    store.apply_changes([ch.HideShort((e1.id,), True)], run(3))
    assert e1.id not in vec_ids(store, axis(0)) and e1.id in vec_ids(store, axis(0), WITH_HIDDEN)
    store.apply_changes([ch.HideShort((e1.id,), False)], run(4))
    assert e1.id in vec_ids(store, axis(0))
    assert store.get_loop(lp.id).status == "done"  # type: ignore[union-attr]
    assert lp.id not in vec_ids(store, axis(2))
    assert store.list_flags("done") == [flag.model_copy(update={"status": "done"})]
    assert store.get_run(r.id) == r

    store.apply_changes(
        [
            ch.SetFact(f.model_copy(update={"status": "superseded"})),
            ch.RemoveEdges((Edge(f.id, e2.id, "derived_from", 0.0),)),
            ch.MarkShort((e1.id,), None),
            ch.DeleteShort((e2.id,)),
        ],
        run(1),
    )
    assert store.get_fact(f.id).status == "superseded"  # type: ignore[union-attr]
    assert f.id not in vec_ids(store, axis(3)) and f.id in vec_ids(store, axis(3), WITH_HIDDEN)
    assert store.edges([e2.id]) == [] and store.get_short(e2.id) is None
    assert vec_ids(store, axis(0), limit=1) == [e1.id]

    store.apply_changes(
        [ch.RestoreShort(e2, axis(1), f.id), ch.RestoreShort(e2, axis(1), None)], run(2)
    )
    assert store.get_short(e2.id) == e2
    assert e2.id in vec_ids(store, axis(1)), "restored as consolidated: findable"
    assert e2.id in text_ids(store, ["two"])


def test_changes_without_a_run_write_no_run_record(store: Store) -> None:
    """apply_changes(changes, None) (an import) applies them and records no run;
    a failure still rolls back every change."""
    e = short("imported entry")
    f = fact("imported fact")
    store.apply_changes(
        [
            ch.RestoreShort(e, axis(0), f.id),
            ch.AddFact(f, axis(1)),
            ch.AddEdges((Edge(f.id, e.id, "derived_from", at(5).timestamp()),)),
        ],
        None,
    )
    assert store.list_runs(10, 0) == []
    assert store.get_short(e.id) == e and store.get_fact(f.id).derived_from == [e.id]  # type: ignore[union-attr]
    assert store.edges([e.id]) == [Edge(f.id, e.id, "derived_from", at(5).timestamp())]
    assert e.id in vec_ids(store, axis(0)), "imported as consolidated: findable"
    with pytest.raises(AlreadyExists):
        store.apply_changes([ch.AddFact(fact("other"), axis(2)), ch.AddFact(f, axis(3))], None)
    assert store.counts()["long"] == 1 and store.list_runs(10, 0) == []


def test_a_failing_change_rolls_back_every_change_and_the_run(store: Store) -> None:
    """apply_changes is one transaction: a failure leaves no change and no run record."""
    e = short("entry")
    store.add_short([e], np.stack([axis(0)]))
    taken = fact("taken")
    store.add_fact(taken, axis(1))
    new = fact("new one")
    r = run()
    with pytest.raises(AlreadyExists):
        store.apply_changes(
            [
                ch.AddFact(new, axis(2)),
                ch.MarkShort((e.id,), new.id),
                ch.AddEdges((Edge(new.id, e.id, "derived_from", 1.0),)),
                ch.DeleteShort((e.id,)),
                ch.AddFact(taken, axis(3)),  # a duplicate id: fails
            ],
            r,
        )
    assert store.get_fact(new.id) is None and store.get_run(r.id) is None
    assert store.get_short(e.id) == e and store.edges([e.id]) == []
    assert vec_ids(store, axis(0), limit=1) == [e.id]
    assert store.counts()["long"] == 1


# -- run records --


def test_run_records_save_get_list_and_overwrite(store: Store) -> None:
    """save_run upserts a run with its actions (numbered from 1 as read, their undo kept);
    list_runs is newest first."""
    act = Action(id=1, kind="promote", target_id="l_1", reason="seen twice", inputs=["s_1"])
    old, new = run(0, name=store.name, actions=[act]), run(10, name=store.name)
    store.save_run(old)
    store.save_run(new)
    assert store.get_run(old.id) == old and store.get_run("r_missing") is None
    assert [r.id for r in store.list_runs(10, 0)] == [new.id, old.id]
    assert [r.id for r in store.list_runs(1, 1)] == [old.id]
    changed = old.model_copy(update={"status": "reverted", "reverted_at": at(20), "actions": []})
    store.save_run(changed)
    assert store.get_run(old.id) == changed


def test_a_plan_is_kept_reviewed_and_applied_in_place(store: Store) -> None:
    """A dry run's plan reads back as a dry run with each action's review; saved again as
    applied, it starts when applied (runs are ordered by it)."""
    acts = [
        Action(id=n, kind="promote", target_id=f"l_{n}", reason="seen twice", undo={"review": r})
        for n, r in ((1, "approved"), (2, "rejected"))
    ]
    plan = run(0, status="planned", name=store.name, actions=acts)
    plan.dry_run = True
    later = run(5, name=store.name)
    store.save_run(plan)
    store.save_run(later)
    got = store.get_run(plan.id)
    assert got == plan and [a.review for a in got.actions] == ["approved", "rejected"]
    applied = plan.model_copy(
        update={"status": "done", "dry_run": False, "started_at": at(9), "actions": acts[:1]}
    )
    store.save_run(applied)
    assert store.get_run(plan.id) == applied
    assert [r.id for r in store.list_runs(10, 0)] == [plan.id, later.id]
    assert store.runs_after(later) == [plan.id]


def test_last_applied_and_runs_after_skip_operator_and_unfinished(store: Store) -> None:
    """last_applied_run / runs_after count done, non-operator runs only."""
    first, op, failed, second = (
        run(0, name=store.name),
        run(5, engine="operator", name=store.name),
        run(6, status="failed", name=store.name),
        run(8, name=store.name),
    )
    for r in (first, op, failed, second):
        store.save_run(r)
    assert store.last_applied_run() == second
    assert store.runs_after(first) == [second.id]
    assert store.runs_after(second) == []


def test_fail_stale_runs_marks_running_as_failed(store: Store) -> None:
    """fail_stale_runs turns runs left 'running' into failed ones at now."""
    stale, done = run(0, status="running", name=store.name), run(1, name=store.name)
    store.save_run(stale)
    store.save_run(done)
    assert store.fail_stale_runs(1_800_000_000.0) == 1
    got = store.get_run(stale.id)
    assert got is not None and got.status == "failed" and got.finished_at == at(100_000_000)
    assert store.get_run(done.id) == done
    assert store.fail_stale_runs(1_800_000_001.0) == 0


# -- consolidation inputs --


def test_consolidation_inputs(store: Store) -> None:
    """short_for_consolidation, facts/loops with vectors, journal/briefs since."""
    late, early = short("late", when=20), short("early", when=10)
    store.add_short([late, early], np.stack([axis(0), axis(1)]))
    f = fact("f")
    store.add_fact(f, axis(2))
    store.apply_changes([ch.MarkShort((late.id,), f.id)], run())
    entries, into, vectors = store.short_for_consolidation()
    assert [e.id for e in entries] == [early.id, late.id] and into == [None, f.id]
    assert np.allclose(vectors, np.stack([axis(1), axis(0)]))
    facts, fv = store.facts_with_vectors("active")
    assert facts == [f] and np.allclose(fv, [axis(2)])
    assert store.facts_with_vectors("demoted")[0] == []
    lp, closed = loop("open"), loop("closed")
    store.add_loop(lp, axis(3))
    store.add_loop(closed.model_copy(update={"status": "done"}), axis(4))
    loops, lv = store.open_loops_with_vectors()
    assert loops == [lp] and np.allclose(lv, [axis(3)])
    j1, j2 = journal("j1", when=1), journal("j2", when=5)
    store.add_journal([j1, j2])
    assert store.journal_since(None) == [j1, j2]
    assert store.journal_since(at(5).timestamp()) == [j2]
    b1 = Brief(id=new_id("brief"), summary="b1", created_at=at(1))
    b2 = Brief(id=new_id("brief"), summary="b2", created_at=at(5))
    store.add_brief(b1)
    store.add_brief(b2)
    assert store.briefs_since(at(5).timestamp()) == [b2]
    assert store.briefs_since(None) == [b1, b2]


# -- the consolidation lock --


def test_lock_excludes_a_second_handle_until_released(opened: Opened, store: Store) -> None:
    """One holder at a time across handles (as across processes); all see it held."""
    other = opened.open()
    assert not store.consolidation_locked()
    assert store.try_lock_consolidation()
    assert not store.try_lock_consolidation(), "not re-entrant"
    assert not other.try_lock_consolidation()
    assert other.consolidation_locked() and store.consolidation_locked()
    store.unlock_consolidation()
    assert not other.consolidation_locked()
    assert other.try_lock_consolidation()
    assert not store.try_lock_consolidation()
    other.unlock_consolidation()


# -- purge --


def test_purge_scrubs_rows_copies_edges_runs_and_bytes(store: Store) -> None:
    """purge: rows, index rows, edges, other copies, flag and run text go; holds() proves it."""
    secret = "SSN 078-05-1120"
    src = short(f"my {secret} is here")
    copy = short(f"again {secret}")
    keep = short("unrelated and kept")
    store.add_short([src, copy, keep], np.stack([axis(0), axis(1), axis(2)]))
    lp = loop(f"mail {secret}")
    store.add_loop(lp, axis(3))
    j = journal(f"said {secret}")
    store.add_journal([j])
    f = fact(f"user {secret}").model_copy(update={"derived_from": [src.id, j.id]})
    flag = ForgetFlag(id=new_id("flag"), fact_id=f.id, reason=f"pii: {secret}", created_at=at(0))
    store.add_flag(flag)
    store.add_brief(Brief(id=new_id("brief"), summary=f"about {secret}", created_at=at(0)))
    act = Action(kind="promote", target_id=f.id, reason="r", after={"id": f.id, "c": secret})
    store.apply_changes([ch.AddFact(f, axis(4))], run(actions=[act]))
    assert store.holds(secret)

    store.purge([f.id], [src.id], [j.id], [secret], [flag.id])
    assert store.get_fact(f.id) is None and store.get_short(src.id) is None
    assert store.get_short(copy.id) is None and store.get_loop(lp.id) is None
    assert store.list_journal(10, 0) == [] and store.edges([f.id, src.id, j.id]) == []
    assert store.get_short(keep.id) == keep
    assert text_ids(store, ["ssn"], WITH_HIDDEN) == []
    assert vec_ids(store, axis(4), WITH_HIDDEN) == [keep.id]
    assert store.list_flags("done")[0].reason == "pii: [purged]"
    assert secret not in store.list_runs(1, 0)[0].model_dump_json()
    assert not store.holds(secret)
    assert not store.holds("078-05-1120")
    assert store.holds("unrelated and kept")


# -- the backend --


def test_backend_open_exists_names_delete(opened: Opened, store: Store) -> None:
    """A Backend lists, finds, refuses a missing store without create, and deletes for real."""
    backend = opened.backend()
    assert backend.exists(opened.name) and opened.name in backend.names()
    assert not backend.exists("c-missing")
    with pytest.raises(StoreNotFound):
        backend.open("c-missing", False)
    store.add_short([short("kept until deleted")], np.stack([axis(0)]))
    opened.close(store)
    assert backend.delete(opened.name)
    assert not backend.exists(opened.name) and opened.name not in backend.names()
    assert not backend.delete(opened.name)
    again = opened.open()
    assert again.counts()["short"] == 0


# -- completeness --


def _protocol_methods() -> set[str]:
    names: set[str] = set()
    for part in (
        protocols.Records,
        protocols.SearchIndex,
        protocols.RunLog,
        protocols.Consolidation,
        protocols.Maintenance,
    ):
        names |= {n for n, v in vars(part).items() if inspect.isfunction(v)}
    return {n for n in names if not n.startswith("_")}


def test_every_protocol_method_has_a_contract_test() -> None:
    """Every Store method is called by a test of the contract suite (these three modules)."""
    called: set[str] = set()
    here = Path(__file__).parent
    for module in (
        "test_store_contract.py",
        "test_store_contract_runs.py",
        "test_store_contract_journal.py",
    ):
        tree = ast.parse((here / module).read_text())
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_"):
                called |= {
                    n.func.attr
                    for n in ast.walk(fn)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                }
    methods = _protocol_methods()
    assert len(methods) > 45
    assert sorted(methods - called) == []
