"""Undo a run (all but its purges), from the snapshots its record kept.

Promoted facts are withdrawn, superseded, obsoleted, confirmed, demoted and
decayed facts get their earlier state back, aged-out entries return (re-
embedded), closed loops reopen, and the entries a run consumed count as
evidence again. Purges are irreversible by design: the record says so.

Any applied run can be reverted unless a later applied run built on it: a
later run that changed a record this one made or changed (a fact it
promoted, superseded or confirmed, an entry it consumed or hid, a loop it
closed) would see its own change undone beneath it, or left dangling. Such a
revert is refused, naming the later run (revert that one first). A later
run's purges do not count: a purge scrubs every earlier run's snapshot of
what it removes, so a revert skips those actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from halls.errors import Conflict
from halls.models import Edge, LongFact, OpenLoop, Run, ShortEntry, to_datetime
from halls.store import changes as ch
from halls.store.base import Store

IRREVERSIBLE = "purges are irreversible by design: {n} purge(s) stay purged"


def _added_edges(inputs: list[str], old: LongFact, undo: dict[str, Any]) -> tuple[Edge, ...]:
    """The derived_from edges a confirm (or obsolete) added to ``old``."""
    if "added_edges" in undo:
        return tuple(Edge(*e) for e in undo["added_edges"])
    # A record from before runs kept their edges: the sources the fact lacked.
    return tuple(Edge(old.id, s, "derived_from", 0.0) for s in inputs if s not in old.derived_from)


def records(run: Run, *, purges: bool = True) -> set[str]:
    """The ids of the records ``run`` made or changed."""
    out: set[str] = set()
    for a in run.actions:
        if a.kind == "purge" and not purges:
            continue
        undo = a.undo or {}
        out.add(a.target_id)
        out.update(undo.get("members", ()), undo.get("hidden", ()))
        if undo.get("new_fact"):
            out.add(undo["new_fact"])
        if a.after and a.after.get("id"):
            out.add(a.after["id"])
    return out


def revert_changes(run: Run, embed: Callable[[list[str]], np.ndarray]) -> list[ch.Change]:
    out: list[ch.Change] = []
    restore: list[tuple[ShortEntry, str | None]] = []
    for action in reversed(run.actions):
        undo = action.undo or {}
        if action.kind == "purge" or not undo:
            continue  # purged, or its snapshot was scrubbed by a later purge
        members = tuple(undo.get("members", ()))
        if members:
            out.append(ch.MarkShort(members, None))
        if undo.get("hidden"):
            out.append(ch.HideShort(tuple(undo["hidden"]), False))
        if "new_fact" in undo:
            out.append(ch.DeleteFact(undo["new_fact"]))
        if "fact" in undo:
            old = LongFact.model_validate(undo["fact"])
            out.append(ch.SetFact(old))
            if action.kind in ("confirm", "obsolete"):
                out.append(ch.RemoveEdges(_added_edges(action.inputs, old, undo)))
        if undo.get("removed_edges"):
            out.append(ch.AddEdges(tuple(Edge(*e) for e in undo["removed_edges"])))
        if "loop" in undo:
            out.append(ch.SetLoop(OpenLoop.model_validate(undo["loop"])))
        for flag in undo.get("flags", ()):
            out.append(ch.SetFlag(flag, "pending"))
        if "entry" in undo:
            entry = ShortEntry.model_validate(undo["entry"])
            restore.append((entry, undo.get("consolidated_into")))
    if restore:
        vectors = embed([e.content for e, _ in restore])
        out += [ch.RestoreShort(e, v, into) for (e, into), v in zip(restore, vectors, strict=True)]
    return out


def revert(store: Store, run: Run, embed: Callable[[list[str]], np.ndarray], now: float) -> Run:
    """Revert ``run`` (the caller holds the store's consolidation lock)."""
    if run.status == "reverted":
        raise Conflict(f"run {run.id} was already reverted")
    if run.status != "done":
        raise Conflict(f"run {run.id} is {run.status}: only a completed run can be reverted")
    if run.engine == "operator":
        raise Conflict(f"run {run.id} is an operator purge: {IRREVERSIBLE.format(n=1)}")
    mine = records(run)
    for later_id in store.runs_after(run):
        later = store.get_run(later_id)
        shared = sorted(mine & records(later, purges=False)) if later else []
        if shared:
            raise Conflict(
                f"run {later_id} built on run {run.id} (it changed {shared[0]}, which run "
                f"{run.id} made or changed); revert run {later_id} first"
            )
    changes = revert_changes(run, embed)
    purges = sum(1 for a in run.actions if a.kind == "purge")
    reverted = run.model_copy(
        update={
            "status": "reverted",
            "reverted_at": to_datetime(now),
            "notes": run.notes + ([IRREVERSIBLE.format(n=purges)] if purges else []),
        }
    )
    store.apply_changes(changes, reverted)
    return reverted
