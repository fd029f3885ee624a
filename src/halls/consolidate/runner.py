"""One consolidation run: read through the Store, ask the engine, apply, record.

The engine decides; the runner applies. Every non-purge change of a run,
and its run record, land in one store transaction: a run happens whole or
not at all, so a crash or a failing engine never half-applies a plan. A
dry run builds the same record and applies nothing. Purges follow in their
own transaction and vacuum (they are irreversible by design).

Applying a plan is one small function per proposal kind (``_APPLY``), each
adding its action to the run record and its changes to the transaction.

The module passes 500 lines and stays one concept: the run, from the
snapshot it reads to the record it writes, whose every part serves that one
transaction. (Applying a plan, ``_Applied`` on, is pure but for the one read
of the edges an age-out deletes, and is the seam if it grows.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from halls.config import ConsolidatorSettings, RecallSettings
from halls.consolidate import distill
from halls.consolidate.category import categorize
from halls.consolidate.decay import decayed_evidence
from halls.consolidate.distill import Extractor, LocalExtractor
from halls.consolidate.engine import Engine, EngineUnavailable, Inputs, Proposal
from halls.consolidate.retire import retirements
from halls.errors import Conflict, ConsolidationFailed
from halls.models import (
    Action,
    Brief,
    Edge,
    JournalEvent,
    LongFact,
    OpenLoop,
    Run,
    ShortEntry,
    count_actions,
    new_run_id,
    to_datetime,
)
from halls.recall.entities import mentions
from halls.store import changes as ch
from halls.store.base import Store

log = logging.getLogger("halls.consolidate")
Embed = Callable[[list[str]], np.ndarray]


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


class Runner:
    def __init__(
        self,
        store: Store,
        engine: Engine,
        settings: ConsolidatorSettings,
        embed: Embed,
        clock: Callable[[], float],
        recall: RecallSettings | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.store = store
        self.engine = engine
        self.cfg = settings
        self.embed = embed
        self.clock = clock
        # How strength decays (for retiring faded facts): recall's own curve.
        self.recall = recall or RecallSettings()
        self.extractor: Extractor = extractor or LocalExtractor()

    def run(self, *, dry_run: bool = False) -> Run:
        if not self.store.try_lock_consolidation():
            raise Conflict(f"a consolidation run for store '{self.store.name}' is in progress")
        try:
            return self._run(dry_run)
        finally:
            self.store.unlock_consolidation()

    def _run(self, dry_run: bool) -> Run:
        now = self.clock()
        self.store.fail_stale_runs(now)
        last = self.store.last_applied_run()
        since = last.started_at.timestamp() if last else None
        run = Run(
            id=new_run_id(),
            store=self.store.name,
            started_at=to_datetime(now),  # type: ignore[arg-type]
            engine=self.engine.name,
            dry_run=dry_run,
            status="running",
            since=to_datetime(since),
        )
        if not dry_run:
            self.store.save_run(run)
        try:
            inputs = self.read(now, since)
            plan = self.engine.plan(inputs)
            plan.proposals += retirements(
                inputs.facts,
                plan.proposals,
                self.store.retention([f.id for f in inputs.facts]),
                now,
                self.recall,
                self.cfg.retire_below,
            )
            self._embed_missing(plan.proposals)
            actions, changes, purge = self.materialise(plan.proposals, inputs, now)
        except EngineUnavailable as exc:
            return self._fail(run, dry_run, f"the {self.engine.name} engine is unavailable: {exc}")
        except Exception:
            log.exception("consolidation run %s failed", run.id)
            self._fail(run, dry_run, "internal error while planning; nothing was changed", False)
            raise
        finished = self.clock()
        run.actions, run.notes = actions, plan.notes
        run.counts = count_actions(actions)
        run.finished_at = to_datetime(finished)
        if dry_run:
            run.status = "planned"
            return run
        run.status = "done"
        self.store.apply_changes(changes, run)
        if purge["facts"]:
            try:
                self.store.purge(**purge)
            except Exception as exc:
                log.exception("purge in run %s failed", run.id)
                run.status = "failed"
                run.error = f"purge failed ({type(exc).__name__}); retried next run"
                self.store.save_run(run)
                raise ConsolidationFailed(f"run {run.id}: {run.error}") from None
        return run

    def _fail(self, run: Run, dry_run: bool, message: str, raise_: bool = True) -> Run:
        run.status, run.error = "failed", message
        run.finished_at = to_datetime(self.clock())
        if not dry_run:
            self.store.save_run(run)
        if raise_:
            raise ConsolidationFailed(f"run {run.id} aborted, nothing changed: {message}")
        return run

    # -- inputs --

    def read(self, now: float, since: float | None) -> Inputs:
        s = self.store
        entries, consolidated, vectors = s.short_for_consolidation()
        facts, fact_vectors = s.facts_with_vectors("active")
        loops, loop_vectors = s.open_loops_with_vectors()
        briefs = s.briefs_since(since)
        flags = s.list_flags("pending")
        flagged = s.get_records([f.fact_id for f in flags])
        phrases = sorted(
            {t for b in briefs for t in (*b.promote_hints, *b.completed_intents, *b.noise)}
        )
        phrase_vectors = dict(zip(phrases, self.embed(phrases), strict=True)) if phrases else {}
        journal, summaries = self._window(now)
        rows = [n for n, c in enumerate(consolidated) if c is None]
        units = [
            *distill.from_entries(entries, rows, self.extractor),
            *distill.from_journal(journal, self.extractor),
            *distill.from_briefs(summaries, self.extractor),
        ]
        return Inputs(
            now=now,
            entries=entries,
            consolidated=consolidated,
            vectors=vectors,
            facts=facts,
            fact_vectors=fact_vectors,
            loops=loops,
            loop_vectors=loop_vectors,
            briefs=briefs,
            phrase_vectors=phrase_vectors,
            flags=flags,
            flagged={k: v for k, v in flagged.items() if isinstance(v, LongFact)},
            journal=journal,
            settings=self.cfg,
            units=units,
            unit_vectors=self._unit_vectors(units, vectors),
        )

    def _window(self, now: float) -> tuple[list[JournalEvent], list[Brief]]:
        """The journal events and briefs of the window that no fact derives from yet."""
        start = now - self.cfg.journal_window_seconds
        events = self.store.journal_since(start)
        briefs = [b for b in self.store.briefs_since(start) if b.summary.strip()]
        ids = [e.id for e in events] + [b.id for b in briefs]
        used = {e.dst for e in self.store.edges(ids, ["derived_from"])} if ids else set()
        return [e for e in events if e.id not in used], [b for b in briefs if b.id not in used]

    def _unit_vectors(self, units: list[distill.Unit], vectors: np.ndarray) -> np.ndarray:
        """A vector per unit: the entry's stored one when the text is the entry's, else embedded."""
        dim = vectors.shape[1] if vectors.ndim == 2 and len(vectors) else 0
        todo = [n for n, u in enumerate(units) if u.row is None]
        fresh = self.embed([units[n].content for n in todo]) if todo else None
        if fresh is not None and len(fresh):
            dim = fresh.shape[1]
        out = np.zeros((len(units), dim), dtype=np.float32)
        for n, u in enumerate(units):
            if u.row is not None:
                out[n] = vectors[u.row]
        if fresh is not None:
            out[todo] = fresh
        return out

    def _embed_missing(self, proposals: list[Proposal]) -> None:
        todo = [p for p in proposals if p.text is not None and p.vector is None]
        if todo:
            for p, v in zip(todo, self.embed([p.text for p in todo]), strict=True):  # type: ignore[misc]
                p.vector = v

    # -- plan -> actions and changes --

    def materialise(
        self, proposals: list[Proposal], inputs: Inputs, now: float
    ) -> tuple[list[Action], list[ch.Change], dict[str, list[str]]]:
        # The edges an age-out deletes with its entries, so that a revert can
        # put them back: one read for the whole run.
        aging = [p.target_id for p in proposals if p.kind == "age_out" and p.target_id]
        aged_edges: dict[str, list[Edge]] = {}
        for edge in self.store.edges(aging) if aging else []:
            for end in (edge.src, edge.dst):
                aged_edges.setdefault(end, []).append(edge)
        plan = _Applied.start(inputs, now, aged_edges)
        for p in proposals:
            _APPLY[p.kind](plan, p)
        if plan.aged:
            plan.changes.append(ch.DeleteShort(tuple(plan.aged)))
        return plan.actions, plan.changes, plan.purge


@dataclass
class _Applied:
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
    def start(cls, inputs: Inputs, now: float, aged_edges: dict[str, list[Edge]]) -> _Applied:
        facts: dict[str, LongFact] = {f.id: f for f in inputs.facts}
        facts.update(inputs.flagged)
        pairs = zip(inputs.entries, inputs.consolidated, strict=True)
        entries = {e.id: (e, into) for e, into in pairs}
        loops = {loop.id: loop for loop in inputs.loops}
        return cls(now, _at(now), facts, loops, entries, aged_edges)


def _sources(p: Proposal) -> list[str]:
    return [*p.members, *p.journal]


def _fact_action(
    plan: _Applied, p: Proposal, old: LongFact | None, new: LongFact, undo: dict[str, Any]
) -> None:
    """The action of a change to a fact (``p.target_id``): the fact before and after."""
    plan.actions.append(
        Action(
            kind=p.kind,
            target_id=p.target_id,  # type: ignore[arg-type]
            reason=p.reason,
            inputs=_sources(p),
            before=fact_view(old) if old else None,
            after=fact_view(new),
            undo=undo,
            engine_note=p.note,
        )
    )


def _new_fact(plan: _Applied, p: Proposal) -> None:
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
        derived_from=sources,
        created_at=when,
        occurred_at=_at(p.last_seen or now),
    )
    assert p.vector is not None
    if old is not None:
        retired = old.model_copy(update={"status": "superseded", "superseded_by": fid})
        plan.facts[old.id] = retired
        plan.changes.append(ch.SetFact(retired))
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
    _fact_action(plan, p, old, new, undo)


def _restate(plan: _Applied, p: Proposal) -> None:
    """confirm: a fact said again; obsolete: a fact no longer true. Both add its sources."""
    old = plan.facts[p.target_id]
    if p.kind == "confirm":
        upd: dict[str, Any] = {
            "evidence_count": old.evidence_count + max(p.evidence, 1),
            "last_confirmed": plan.when,
            # Facts from before categories get theirs when confirmed.
            "category": old.category or categorize(old.content),
            # A pinned entry that restates a fact pins the fact.
            "pinned": old.pinned or p.pinned,
        }
    else:
        upd = {"status": "superseded", "superseded_by": None}
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
    undo = {"fact": old.model_dump(mode="json"), "members": p.members}
    _fact_action(plan, p, old, new, {**undo, "added_edges": _edge_json(added)})


def _lower(plan: _Applied, p: Proposal) -> None:
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


def _purge(plan: _Applied, p: Proposal) -> None:
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


def _age_out(plan: _Applied, p: Proposal) -> None:
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


def _close_loop(plan: _Applied, p: Proposal) -> None:
    """expire: an open loop past its time; complete: one a brief says was settled."""
    loop = plan.loops[p.target_id]
    status = "expired" if p.kind == "expire" else "done"
    new_loop = loop.model_copy(update={"status": status, "closed_at": plan.when})
    plan.changes.append(ch.SetLoop(new_loop))
    plan.actions.append(
        Action(
            kind=p.kind,
            target_id=loop.id,  # type: ignore[arg-type]
            reason=p.reason,
            inputs=[p.brief_id] if p.brief_id else [],
            before=loop_view(loop),
            after=loop_view(new_loop),
            undo={"loop": loop.model_dump(mode="json")},
        )
    )


# One function per proposal kind (every ActionKind).
_APPLY: dict[str, Callable[[_Applied, Proposal], None]] = {
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


def operator_purge(store: Store, fact: LongFact, now: float) -> Run:
    """Purge one fact outside any engine (``halls purge``), recorded as a run."""
    from halls.consolidate.pii import detect

    if not store.try_lock_consolidation():
        raise Conflict(f"a consolidation run for store '{store.name}' is in progress")
    try:
        sources = list(fact.derived_from)
        flags = [f.id for f in store.list_flags("pending") if f.fact_id == fact.id]
        action = Action(
            kind="purge",
            target_id=fact.id,
            reason="operator purge (halls purge)",
            inputs=sources,
            before={"id": fact.id, "status": fact.status},
        )
        run = Run(
            id=new_run_id(),
            store=store.name,
            started_at=to_datetime(now),  # type: ignore[arg-type]
            finished_at=to_datetime(now),
            engine="operator",
            status="done",
            actions=[action],
            counts=count_actions([action]),
        )
        store.apply_changes([], run)
        store.purge(
            facts=[fact.id],
            short=[i for i in sources if i.startswith("s_")],
            journal=[i for i in sources if i.startswith("j_")],
            values=[f.value for f in detect(fact.content)],
            flags=flags,
        )
        return run
    finally:
        store.unlock_consolidation()
