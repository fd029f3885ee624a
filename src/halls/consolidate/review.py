"""A dry run's plan, reviewed: each planned action approved or rejected, then applied.

A dry run keeps its plan as a run record of status ``planned``: each action
with the proposal it came from and its review (``pending``, ``approved`` or
``rejected``), both in the action's ``undo`` (which a run record shows only
as ``review``). ``set_reviews`` marks actions; ``apply_plan`` applies the
approved ones, in plan order, as one run: the planned record becomes that
run (same id, started when applied), its actions those applied. The actions
not approved (rejected or still pending) are discarded with the plan and
named in the run's notes; their inputs stay as they were, so a later run
may plan them again.

Before anything is written, each approved action is checked against the
store as it stands now, and as the approved actions before it leave it: the
record it changes must be as the plan saw it, the fact it creates must not
exist, the entries it consumes must still be unconsolidated. One that no
longer applies refuses the whole apply (``Conflict`` naming it) and nothing
is written; the changes of those that apply land in one transaction.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from halls.config import ConsolidatorSettings
from halls.consolidate import apply
from halls.consolidate.engine import Inputs, Proposal
from halls.errors import Conflict, InvalidInput, NotFound
from halls.models import (
    ACTION_KINDS,
    Action,
    Edge,
    LongFact,
    Run,
    count_actions,
    to_datetime,
)
from halls.store.base import Store

# The kinds that change an existing fact (``target_id``).
_ON_FACT = frozenset({"supersede", "confirm", "obsolete", "demote", "decay", "retire", "purge"})
# What a fact's snapshot may differ in when an earlier action of this apply
# changed it: the time it stamps is the apply's, not the plan's.
_STAMPED = ("last_confirmed",)


def aged_edges(store: Store, proposals: list[Proposal]) -> dict[str, list[Edge]]:
    """The edges an age-out deletes with its entries, so that a revert can put
    them back: one read for the whole run (or applied plan; the runner's too)."""
    aging = [p.target_id for p in proposals if p.kind == "age_out" and p.target_id]
    out: dict[str, list[Edge]] = {}
    for edge in store.edges(aging) if aging else []:
        for end in (edge.src, edge.dst):
            out.setdefault(end, []).append(edge)
    return out


def keep_plan(run: Run, proposals: list[Proposal]) -> None:
    """Give each of a dry run's actions its proposal and a pending review (one each, in order)."""
    for action, p in zip(run.actions, proposals, strict=True):
        action.undo = {"review": "pending", "proposal": _proposal_json(p)}


def _proposal_json(p: Proposal) -> dict[str, Any]:
    out = dataclasses.asdict(dataclasses.replace(p, vector=None))
    out["vector"] = None if p.vector is None else [float(x) for x in p.vector]
    return out


def _proposal_of(data: dict[str, Any]) -> Proposal:
    fields = dict(data)
    vector = fields.pop("vector", None)
    return Proposal(**fields, vector=None if vector is None else np.asarray(vector, np.float32))


def _planned(run: Run, verb: str) -> None:
    if run.status != "planned":
        raise Conflict(
            f"run {run.id} is {run.status}: only a dry run's plan (status planned) can be {verb}"
        )


def set_reviews(run: Run, approve: list[int], reject: list[int]) -> Run:
    """``run`` with actions ``approve`` approved and ``reject`` rejected (numbers from 1)."""
    both = sorted(set(approve) & set(reject))
    if both:
        raise InvalidInput(f"action {both[0]} is both approved and rejected")
    _planned(run, "reviewed")
    actions = [a.model_copy(deep=True) for a in run.actions]
    for n in [*approve, *reject]:
        if not 1 <= n <= len(actions):
            raise NotFound(f"run {run.id} has no action {n} (it has {len(actions)})")
    for n, verdict in [*((n, "approved") for n in approve), *((n, "rejected") for n in reject)]:
        undo = actions[n - 1].undo
        if not undo or "proposal" not in undo:
            if verdict == "approved":
                raise Conflict(
                    f"action {n} of run {run.id} cannot be approved: a purge since the plan "
                    "removed what it names"
                )
            actions[n - 1].undo = {"review": verdict}
            continue
        undo["review"] = verdict
    return run.model_copy(update={"actions": actions})


def apply_plan(store: Store, run: Run, now: float) -> tuple[Run, dict[str, list[str]]]:
    """Apply ``run``'s approved actions as one run (the caller holds the consolidation lock).

    Returns the run as saved, and what it purges (for the caller, after the
    transaction, as a run does).
    """
    _planned(run, "applied")
    chosen = [(n, a) for n, a in enumerate(run.actions, 1) if a.review == "approved"]
    if not chosen:
        raise Conflict(f"run {run.id} has no approved action: approve some before applying it")
    proposals = [_proposal_of((a.undo or {})["proposal"]) for _, a in chosen]
    inputs, existing = _inputs(store, proposals)
    guard = _Guard(run, chosen, proposals, existing, inputs)
    actions, changes, purge = apply.materialise(
        proposals, inputs, now, aged_edges(store, proposals), guard.check
    )
    for n, action in enumerate(actions, 1):
        action.id = n
    engine_counts = {k: v for k, v in run.counts.items() if k not in ACTION_KINDS}
    applied = run.model_copy(
        update={
            "status": "done",
            "dry_run": False,
            "started_at": to_datetime(now),
            "finished_at": to_datetime(now),
            "actions": actions,
            "counts": count_actions(actions) | engine_counts,
            "notes": [*run.notes, _account(run, [n for n, _ in chosen])],
        }
    )
    store.apply_changes(changes, applied)
    return applied, purge


def _account(run: Run, chosen: list[int]) -> str:
    """The note that says which planned actions the run applied, and which it dropped."""
    left = [
        f"{n} ({a.review or 'pending'}: {a.kind} {a.target_id})"
        for n, a in enumerate(run.actions, 1)
        if n not in chosen
    ]
    said = f"applied planned actions {', '.join(map(str, chosen))}"
    return said + (f"; not applied: {', '.join(left)}" if left else "")


def _inputs(store: Store, proposals: list[Proposal]) -> tuple[Inputs, set[str]]:
    """The records the proposals act on, as they stand now; and which new ids exist."""
    targets = [p.target_id for p in proposals if p.kind in _ON_FACT]
    new = [p.target_id if p.kind == "promote" else p.new_id for p in proposals]
    new = [i for i in new if i]
    found = store.get_records(list(dict.fromkeys([*targets, *new])))
    facts = [f for i in dict.fromkeys(targets) if isinstance(f := found.get(i), LongFact)]
    entries, consolidated, _ = store.short_for_consolidation()
    loops, _ = store.open_loops_with_vectors()
    empty = np.zeros((0, 0), np.float32)
    inputs = Inputs(
        now=0.0,
        entries=entries,
        consolidated=consolidated,
        vectors=empty,
        facts=facts,
        fact_vectors=empty,
        loops=loops,
        loop_vectors=empty,
        briefs=[],
        phrase_vectors={},
        flags=[],
        flagged={},
        journal=[],
        settings=ConsolidatorSettings(),
    )
    return inputs, {i for i in new if i in found}


class _Guard:
    """Refuses an approved action that no longer applies, before anything is written."""

    def __init__(
        self,
        run: Run,
        chosen: list[tuple[int, Action]],
        proposals: list[Proposal],
        existing: set[str],
        inputs: Inputs,
    ) -> None:
        self.run, self.chosen, self.proposals, self.existing = run, chosen, proposals, existing
        pairs = zip(inputs.entries, inputs.consolidated, strict=True)
        self.free = {e.id for e, into in pairs if into is None}
        self.touched: set[str] = set()  # facts an earlier action of this apply changed

    def check(self, plan: apply.Applied, k: int) -> None:
        n, planned = self.chosen[k]
        p = self.proposals[k]
        why = self._why(plan, p, planned)
        if why is not None:
            raise Conflict(
                f"action {n} of run {self.run.id} ({p.kind} {p.target_id}) no longer applies: "
                f"{why}{self._after(n, p)}; nothing was applied"
            )
        self.free -= set(p.members)
        self.touched |= {p.target_id, p.new_id}

    def _why(self, plan: apply.Applied, p: Proposal, planned: Action) -> str | None:
        made = p.target_id if p.kind == "promote" else p.new_id
        if made and made in self.existing:
            return f"{made} exists already"
        if p.kind in _ON_FACT:
            fact = plan.facts.get(p.target_id)
            if fact is None:
                return f"{p.target_id} is gone"
            before = planned.before or {}
            if p.kind == "purge":
                now = {"id": fact.id, "status": fact.status}
            else:
                now = apply.fact_view(fact)
            if not self._same(now, before, p.target_id in self.touched):
                return f"{p.target_id} changed since the plan"
        elif p.kind == "age_out":
            entry = plan.entries.get(p.target_id)
            if entry is None:
                return f"{p.target_id} is gone"
            if apply.short_view(entry[0]) != planned.before:
                return f"{p.target_id} changed since the plan"
        elif p.kind in ("expire", "complete"):
            loop = plan.loops.get(p.target_id)
            if loop is None or apply.loop_view(loop) != planned.before:
                return f"{p.target_id} is no longer open as planned"
        # The kinds that consume their entries as evidence (MarkShort).
        consumes = p.kind in ("promote", "supersede", "confirm", "obsolete")
        used = [m for m in p.members if m not in self.free] if consumes else []
        if used:
            return f"entry {used[0]} is gone or was consolidated since the plan"
        return None

    @staticmethod
    def _same(now: dict[str, Any], before: dict[str, Any], stamped: bool) -> bool:
        if stamped:
            now = {k: v for k, v in now.items() if k not in _STAMPED}
            before = {k: v for k, v in before.items() if k not in _STAMPED}
        return now == before

    def _after(self, n: int, p: Proposal) -> str:
        """Which earlier planned action, not approved, it followed (if any)."""
        for m, a in enumerate(self.run.actions[: n - 1], 1):
            if a.review != "approved" and p.target_id in {a.target_id, (a.after or {}).get("id")}:
                return f" (it follows planned action {m}, which is {a.review or 'pending'})"
        return ""
