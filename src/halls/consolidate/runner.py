"""One consolidation run: read through the Store, ask the engine, apply, record.

The engine decides; the runner applies. Every non-purge change of a run,
and its run record, land in one store transaction: a run happens whole or
not at all, so a crash or a failing engine never half-applies a plan. A
dry run builds the same record and applies nothing. Purges follow in their
own transaction and vacuum (they are irreversible by design).

Turning a plan into the run's actions and store changes is ``apply`` (pure);
the runner reads its inputs, and the edges an age-out deletes, for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import overload

import numpy as np

from halls.config import ConsolidatorSettings, RecallSettings
from halls.consolidate import apply, caches, distill, progress, reasons, review
from halls.consolidate.distill import Extractor, LocalExtractor
from halls.consolidate.engine import Engine, EngineUnavailable, Inputs, Proposal
from halls.consolidate.retire import retirements
from halls.errors import Conflict, ConsolidationFailed
from halls.models import (
    Action,
    Brief,
    JournalEvent,
    LongFact,
    Run,
    count_actions,
    new_run_id,
    to_datetime,
)
from halls.store import changes as ch
from halls.store.base import Store

log = logging.getLogger("halls.consolidate")
Embed = Callable[[list[str]], np.ndarray]
EMBED_BLOCK = 256  # texts embedded between two progress reports (~0.5 s on two cores)


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
        progress: progress.Reporter | None = None,
    ) -> None:
        self.store = store
        self.engine = engine
        self.cfg = settings
        self.embed = embed
        self.clock = clock
        # How strength decays (for retiring faded facts): recall's own curve.
        self.recall = recall or RecallSettings()
        self.extractor: Extractor = extractor or LocalExtractor()
        # Told the stage and its done / total counts as the run goes (``progress``).
        self.progress = progress

    def run(self, *, dry_run: bool = False) -> Run:
        if not self.store.try_lock_consolidation():
            raise Conflict(f"a consolidation run for store '{self.store.name}' is in progress")
        caches.IDLE.start()
        try:
            with progress.watching(self.progress):
                return self._run(dry_run)
        finally:
            self.store.unlock_consolidation()
            caches.release()
            caches.IDLE.end(self.cfg.models_idle_seconds)

    def _run(self, dry_run: bool) -> Run:
        progress.report("reading", 0, 1)
        now = self.clock()
        self.store.fail_stale_runs(now)
        last = self.store.last_applied_run()
        since = last.started_at.timestamp() if last else None
        run = Run(
            id=new_run_id(),
            store=self.store.name,
            started_at=to_datetime(now),
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
            progress.report("retiring", 0, len(inputs.facts))
            plan.proposals += retirements(
                inputs.facts,
                plan.proposals,
                self.store.retention([f.id for f in inputs.facts]),
                now,
                self.recall,
                self.cfg.retire_below,
            )
            self._embed_missing(plan.proposals)
            progress.report("materialising", 0, len(plan.proposals))
            actions, changes, purge = self.materialise(plan.proposals, inputs, now)
        except EngineUnavailable as exc:
            return self._fail(run, dry_run, f"the {self.engine.name} engine is unavailable: {exc}")
        except Exception:
            log.exception("consolidation run %s failed", run.id)
            self._fail(run, dry_run, "internal error while planning; nothing was changed", False)
            raise
        finished = self.clock()
        for n, action in enumerate(actions, 1):
            action.id = n
        run.actions, run.notes = actions, plan.notes
        run.counts = count_actions(actions) | plan.counts
        run.finished_at = to_datetime(finished)
        if dry_run:
            # The plan is kept for review: each action with its proposal, so
            # that the approved ones can be applied later (review.apply_plan).
            run.status = "planned"
            review.keep_plan(run, plan.proposals)
            self.store.save_run(run)
            return run
        run.status = "done"
        # Reported as the store walks the changes, within its one transaction.
        self.store.apply_changes(_Counted(changes, "applying"), run)
        progress.report("applying", len(changes), len(changes))
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
            flag_classes=dict(
                zip(
                    [f.id for f in flags],
                    reasons.classify([f.reason for f in flags], self.embed),
                    strict=True,
                )
            ),
        )

    def _window(self, now: float) -> tuple[list[JournalEvent], list[Brief]]:
        """The journal events and briefs of the window that no fact derives from yet."""
        start = now - self.cfg.journal_window_seconds
        # Only full events are distilled: a fact drawn from a summary or private
        # one would show in search what its visibility keeps out of it.
        events = [e for e in self.store.journal_since(start) if e.visibility == "full"]
        briefs = [b for b in self.store.briefs_since(start) if b.summary.strip()]
        ids = [e.id for e in events] + [b.id for b in briefs]
        used = {e.dst for e in self.store.edges(ids, ["derived_from"])} if ids else set()
        return [e for e in events if e.id not in used], [b for b in briefs if b.id not in used]

    def _unit_vectors(self, units: list[distill.Unit], vectors: np.ndarray) -> np.ndarray:
        """A vector per unit: the entry's stored one when the text is the entry's, else embedded."""
        dim = vectors.shape[1] if vectors.ndim == 2 and len(vectors) else 0
        todo = [n for n, u in enumerate(units) if u.row is None]
        fresh = self._embed_counted([units[n].content for n in todo]) if todo else None
        if fresh is not None and len(fresh):
            dim = fresh.shape[1]
        out = np.zeros((len(units), dim), dtype=np.float32)
        for n, u in enumerate(units):
            if u.row is not None:
                out[n] = vectors[u.row]
        if fresh is not None:
            out[todo] = fresh
        return out

    def _embed_counted(self, texts: list[str]) -> np.ndarray:
        """``embed(texts)`` in blocks, reporting each: a backlog of rewritten statements
        takes seconds to embed. (The default ONNX embedder embeds one text at a time,
        so blocks give the same vectors.)"""
        parts = []
        for start in range(0, len(texts), EMBED_BLOCK):
            progress.report("embedding", start, len(texts))
            parts.append(self.embed(texts[start : start + EMBED_BLOCK]))
        progress.report("embedding", len(texts), len(texts))
        return np.concatenate(parts)

    def _embed_missing(self, proposals: list[Proposal]) -> None:
        todo = [p for p in proposals if p.text is not None and p.vector is None]
        if todo:
            for p, v in zip(todo, self._embed_counted([p.text for p in todo]), strict=True):  # type: ignore[misc]
                p.vector = v

    # -- plan -> actions and changes --

    def materialise(
        self, proposals: list[Proposal], inputs: Inputs, now: float
    ) -> tuple[list[Action], list[ch.Change], dict[str, list[str]]]:
        return apply.materialise(proposals, inputs, now, review.aged_edges(self.store, proposals))


class _Counted(Sequence[ch.Change]):
    """A run's changes, reporting every 100th as the store walks them."""

    def __init__(self, changes: list[ch.Change], stage: str) -> None:
        self._changes, self._stage = changes, stage

    def __len__(self) -> int:
        return len(self._changes)

    @overload
    def __getitem__(self, i: int) -> ch.Change: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[ch.Change]: ...
    def __getitem__(self, i: int | slice) -> ch.Change | Sequence[ch.Change]:
        return self._changes[i]

    def __iter__(self) -> Iterator[ch.Change]:
        return progress.each(self._stage, self._changes, 100)


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
            started_at=to_datetime(now),
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
