"""A plan turned into a run's actions and store changes (pure).

``materialise`` applies the proposals in order, one small function per
proposal kind (``_APPLY``), each adding its action to the run record and its
changes to the run's transaction; the facts a proposal changes are updated
as it goes, so a later proposal sees them. It reads nothing: the runner
passes the edges an age-out deletes, so that a revert can put them back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from halls.consolidate.category import categorize
from halls.consolidate.decay import decayed_evidence
from halls.consolidate.engine import Inputs, Proposal
from halls.importance import highest
from halls.models import Action, Edge, LongFact, OpenLoop, ShortEntry
from halls.recall.entities import mentions
from halls.store import changes as ch


def materialise(
    proposals: list[Proposal],
    inputs: Inputs,
    now: float,
    aged_edges: dict[str, list[Edge]],
    check: Callable[[Applied, int], None] | None = None,
) -> tuple[list[Action], list[ch.Change], dict[str, list[str]]]:
    """The actions, the changes and the purge of ``proposals``; ``aged_edges``: the
    edges touching each entry an age-out deletes. ``check`` sees the records as
    the proposals before the ``n``-th leave them, and may refuse it (raise)."""
    plan = Applied.start(inputs, now, aged_edges)
    for n, p in enumerate(proposals):
        if check is not None:
            check(plan, n)
        _APPLY[p.kind](plan, p)
    if plan.aged:
        plan.changes.append(ch.DeleteShort(tuple(plan.aged)))
    return plan.actions, plan.changes, plan.purge


def fact_view(f: LongFact) -> dict[str, Any]:
    return {
        "id": f.id,
        "content": f.content,
        "topic": f.topic,
        "category": f.category,
        "status": f.status,
        "evidence_count": f.evidence_count,
        "last_confirmed": f.last_confirmed.isoformat(),
        "supersedes": f.supersedes,
        "superseded_by": f.superseded_by,
    }


def loop_view(loop: OpenLoop) -> dict[str, Any]:
    closed = loop.closed_at.isoformat() if loop.closed_at else None
    return {"id": loop.id, "intent": loop.intent, "status": loop.status, "closed_at": closed}


def short_view(e: ShortEntry) -> dict[str, Any]:
    return {
        "id": e.id,
        "content": e.content,
        "topic": e.topic,
        "occurred_at": e.occurred_at.isoformat(),
    }


def _at(ts: float) -> datetime:
    """A time that is never None (``to_datetime`` is Optional for nullable columns)."""
    return datetime.fromtimestamp(ts, tz=UTC)


def _edge_json(edges: list[Edge]) -> list[list[Any]]:
    """Edges as a run record's undo keeps them (JSON)."""
    return [[e.src, e.dst, e.kind, e.created_at] for e in edges]


@dataclass
class Applied:
    """A run's plan so far: its actions and changes, and the records as they now stand.

    Each proposal kind has one function below that adds its action and changes;
    the facts it changes are updated here, so a later proposal sees them.
    """

    now: float
    when: datetime
    facts: dict[str, LongFact]
    loops: dict[str, OpenLoop]
    # Each unconsolidated entry with the fact it was consolidated into, if any.
    entries: dict[str, tuple[ShortEntry, str | None]]
    aged_edges: dict[str, list[Edge]]
    actions: list[Action] = field(default_factory=list)
    changes: list[ch.Change] = field(default_factory=list)
    aged: list[str] = field(default_factory=list)
    purge: dict[str, list[str]] = field(
        default_factory=lambda: {"facts": [], "short": [], "journal": [], "values": [], "flags": []}
    )

    @classmethod
    def start(cls, inputs: Inputs, now: float, aged_edges: dict[str, list[Edge]]) -> Applied:
        facts: dict[str, LongFact] = {f.id: f for f in inputs.facts}
        facts.update(inputs.flagged)
        pairs = zip(inputs.entries, inputs.consolidated, strict=True)
        entries = {e.id: (e, into) for e, into in pairs}
        loops = {loop.id: loop for loop in inputs.loops}
        return cls(now, _at(now), facts, loops, entries, aged_edges)


def _sources(p: Proposal) -> list[str]:
    return [*p.members, *p.journal]


def _short_sources(f: LongFact) -> list[str]:
    """The short-term entries a fact came from: what it said, out of search once
    it is superseded or obsolete (the fact that replaces it speaks now)."""
    return [s for s in f.derived_from if s.startswith("s_")]


def _fact_action(
    plan: Applied, p: Proposal, old: LongFact | None, new: LongFact, undo: dict[str, Any]
) -> None:
    """The action of a change to a fact (``p.target_id``): the fact before and after."""
    plan.actions.append(
        Action(
            kind=p.kind,
            target_id=p.target_id,
            reason=p.reason,
            inputs=_sources(p),
            before=fact_view(old) if old else None,
            after=fact_view(new),
            undo=undo,
            engine_note=p.note,
        )
    )


def _new_fact(plan: Applied, p: Proposal) -> None:
    """promote: a new fact; supersede: a new fact that retires the one it replaces."""
    now, when, sources = plan.now, plan.when, _sources(p)
    fid = p.target_id if p.kind == "promote" else p.new_id
    old = plan.facts.get(p.target_id) if p.kind == "supersede" else None
    new = LongFact(
        id=fid,
        content=p.text or "",
        topic=p.topic,
        category=p.category or categorize(p.text or ""),
        evidence_count=max(p.evidence, 1),
        first_seen=_at(p.first_seen or now),
        last_confirmed=when,
        status="active",
        supersedes=old.id if old else None,
        pinned=p.pinned,
        importance=highest((old.importance if old else None, p.importance)),
        # A changed fact stays in its scope unless its sources name one.
        scope=p.scope or (old.scope if old else None),
        derived_from=sources,
        created_at=when,
        occurred_at=_at(p.last_seen or now),
    )
    assert p.vector is not None
    hidden: list[str] = []
    if old is not None:
        retired = old.model_copy(update={"status": "superseded", "superseded_by": fid})
        plan.facts[old.id] = retired
        hidden = _short_sources(old)
        plan.changes += [ch.SetFact(retired), ch.HideShort(tuple(hidden), True)]
    # AddFact makes the new fact's derived_from edges (stamped created_at =
    # now), and its supersedes link is its supersedes edge; withdrawing it on
    # revert removes every edge.
    plan.changes += [
        ch.AddFact(new, np.asarray(p.vector, dtype=np.float32)),
        ch.MarkShort(tuple(p.members), fid),
    ]
    # The names it mentions link it in the association graph; a revert
    # withdraws the fact and with it every edge touching it.
    named = tuple(mentions(fid, new.content, now))
    if named:
        plan.changes.append(ch.AddEdges(named))
    plan.facts[fid] = new
    undo: dict[str, Any] = {"members": p.members, "new_fact": fid}
    if old is not None:
        undo["fact"] = old.model_dump(mode="json")
        undo["hidden"] = hidden
    _fact_action(plan, p, old, new, undo)


def _restate(plan: Applied, p: Proposal) -> None:
    """confirm: a fact said again; obsolete: a fact no longer true. Both add its sources."""
    old = plan.facts[p.target_id]
    hidden: list[str] = []
    if p.kind == "confirm":
        upd: dict[str, Any] = {
            "evidence_count": old.evidence_count + max(p.evidence, 1),
            "last_confirmed": plan.when,
            # Facts from before categories get theirs when confirmed.
            "category": old.category or categorize(old.content),
            # A pinned entry that restates a fact pins the fact.
            "pinned": old.pinned or p.pinned,
            # What its writer said matters keeps mattering once restated.
            "importance": highest((old.importance, p.importance)),
            # Said again for another scope, it belongs to the work that said it last.
            "scope": p.scope or old.scope,
        }
    else:
        upd = {"status": "superseded", "superseded_by": None}
        hidden = _short_sources(old)
    # Only the edges this run makes are its to undo.
    added = [
        Edge(old.id, s, "derived_from", plan.now)
        for s in dict.fromkeys(_sources(p))
        if s not in old.derived_from
    ]
    upd["derived_from"] = [*old.derived_from, *(e.dst for e in added)]
    new = old.model_copy(update=upd)
    plan.facts[old.id] = new
    plan.changes += [ch.SetFact(new), ch.MarkShort(tuple(p.members), old.id)]
    if added:
        plan.changes.append(ch.AddEdges(tuple(added)))
    if hidden:
        plan.changes.append(ch.HideShort(tuple(hidden), True))
    undo = {"fact": old.model_dump(mode="json"), "members": p.members, "hidden": hidden}
    _fact_action(plan, p, old, new, {**undo, "added_edges": _edge_json(added)})


def _lower(plan: Applied, p: Proposal) -> None:
    """demote (a forget flag), decay (less evidence), retire (faded): the fact stays as history."""
    old = plan.facts[p.target_id]
    upd: dict[str, Any]
    if p.kind == "demote":
        status = "superseded" if old.status == "superseded" else "demoted"
        upd = {"status": status, "evidence_count": 0}
    elif p.kind == "retire":
        upd = {"status": "retired"}
    else:
        upd = {
            "evidence_count": decayed_evidence(old.evidence_count),
            "metadata": {**old.metadata, "decayed_at": plan.when.isoformat()},
        }
    new = old.model_copy(update=upd)
    plan.facts[old.id] = new
    plan.changes.append(ch.SetFact(new))
    plan.changes += [ch.SetFlag(f, "done") for f in p.flags]
    _fact_action(plan, p, old, new, {"fact": old.model_dump(mode="json"), "flags": p.flags})


def _purge(plan: Applied, p: Proposal) -> None:
    """A fact and what it came from, gone for good after the run's transaction."""
    old = plan.facts[p.target_id]
    plan.purge["facts"].append(old.id)
    plan.purge["short"] += p.members
    plan.purge["journal"] += p.journal
    plan.purge["values"] += p.values
    plan.purge["flags"] += p.flags
    # Ids only: a run record must not keep what a purge removes.
    plan.actions.append(
        Action(
            kind="purge",
            target_id=old.id,
            reason=p.reason,
            inputs=_sources(p),
            before={"id": old.id, "status": old.status},
            after=None,
            engine_note=p.note,
        )
    )


def _age_out(plan: Applied, p: Proposal) -> None:
    """A stale short-term entry deleted (all of a run's at once, after its other changes)."""
    entry, into = plan.entries[p.target_id]
    plan.aged.append(entry.id)
    plan.actions.append(
        Action(
            kind="age_out",
            target_id=entry.id,
            reason=p.reason,
            before=short_view(entry),
            after=None,
            undo={
                "entry": entry.model_dump(mode="json"),
                "consolidated_into": into,
                "removed_edges": _edge_json(plan.aged_edges.get(entry.id, [])),
            },
        )
    )


def _close_loop(plan: Applied, p: Proposal) -> None:
    """expire: an open loop past its time; complete: one a brief says was settled."""
    loop = plan.loops[p.target_id]
    status = "expired" if p.kind == "expire" else "done"
    new_loop = loop.model_copy(update={"status": status, "closed_at": plan.when})
    plan.changes.append(ch.SetLoop(new_loop))
    plan.actions.append(
        Action(
            kind=p.kind,
            target_id=loop.id,
            reason=p.reason,
            inputs=[p.brief_id] if p.brief_id else [],
            before=loop_view(loop),
            after=loop_view(new_loop),
            undo={"loop": loop.model_dump(mode="json")},
        )
    )


# One function per proposal kind (every ActionKind).
_APPLY: dict[str, Callable[[Applied, Proposal], None]] = {
    "promote": _new_fact,
    "supersede": _new_fact,
    "confirm": _restate,
    "obsolete": _restate,
    "demote": _lower,
    "decay": _lower,
    "retire": _lower,
    "purge": _purge,
    "age_out": _age_out,
    "expire": _close_loop,
    "complete": _close_loop,
}
