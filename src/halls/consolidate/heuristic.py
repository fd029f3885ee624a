"""The heuristic engine (default; no LLM), and the plan every engine shares.

``build_plan`` walks one snapshot of a store: forget flags first (a flagged
fact takes no part in reconciliation), then clusters of unconsolidated
short-term entries, reconciled oldest first against the active facts as the
plan changes them, then ages out expired entries and closes open loops. Two
decisions are delegated to a ``Decider``: how a candidate reconciles (and
the text of the fact it yields), and which class a forget flag is. The
heuristic decider answers from ``reconcile`` and ``pii``; the LLM engine
asks a model and falls back to these answers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from halls.consolidate import briefs as briefs_mod
from halls.consolidate.cluster import cluster, medoid
from halls.consolidate.distill import Unit
from halls.consolidate.engine import Inputs, Plan, Proposal
from halls.consolidate.evidence import evidence_count, evidence_score
from halls.consolidate.pii import detect, forget_class
from halls.consolidate.reconcile import Decision, Features, Known, decide, features
from halls.models import ForgetFlag, LongFact, new_id

NEAREST = 5
_FEATURES = lru_cache(maxsize=65536)(features)
_STRENGTH = {"purge": 3, "demote": 2, "decay": 1}


@dataclass
class Candidate:
    """A cluster of statements (``halls.consolidate.distill.Unit``) that say one thing."""

    entries: list[Unit]  # the statements, each with its sources and time
    text: str
    vector: np.ndarray
    topic: str | None
    score: float
    gate: str | None  # why it may be promoted (evidence, hint, pin), or None
    journal: list[str] = field(default_factory=list)
    brief_id: str | None = None

    @property
    def ids(self) -> list[str]:
        """The short-term entries the statements came from."""
        return list(dict.fromkeys(i for u in self.entries for i in u.entries))

    @property
    def first_seen(self) -> float:
        return min(e.occurred_at.timestamp() for e in self.entries)

    @property
    def last_seen(self) -> float:
        return max(e.occurred_at.timestamp() for e in self.entries)


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    text: str
    note: str | None = None


class Decider(Protocol):
    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict: ...
    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]: ...


class HeuristicDecider:
    def __init__(self, inputs: Inputs) -> None:
        self.cfg = inputs.settings

    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict:
        d = decide(
            cand.text,
            known,
            match_threshold=self.cfg.cluster_threshold,
            related_threshold=self.cfg.related_threshold,
            cand=_FEATURES(cand.text),
        )
        return Verdict(d, cand.text)

    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]:
        kind, why = forget_class(flag.reason, fact.content)
        return kind, why, None


class HeuristicEngine:
    name = "heuristic"

    def plan(self, inputs: Inputs) -> Plan:
        return build_plan(inputs, HeuristicDecider(inputs))


class _Pool:
    """The active facts as the plan changes them, for nearest-fact lookups."""

    def __init__(self, facts: list[LongFact], vectors: np.ndarray, dim: int) -> None:
        self.ids = [f.id for f in facts]
        self.texts = {f.id: f.content for f in facts}
        self.matrix = vectors.reshape(-1, dim).astype(np.float32)
        self.alive = np.ones(len(self.ids), dtype=bool)

    def nearest(self, vector: np.ndarray, n: int) -> list[Known]:
        if not self.ids:
            return []
        sims = self.matrix @ vector
        sims = np.where(self.alive, sims, -2.0)
        order = np.argsort(-sims)[:n]
        return [
            Known(self.ids[i], self.texts[self.ids[i]], float(sims[i]))
            for i in order
            if self.alive[i]
        ]

    def add(self, id: str, text: str, vector: np.ndarray) -> None:
        self.ids.append(id)
        self.texts[id] = text
        self.matrix = np.vstack([self.matrix, vector[None, :]])
        self.alive = np.append(self.alive, True)

    def remove(self, id: str) -> None:
        self.alive[self.ids.index(id)] = False


def build_plan(inputs: Inputs, decider: Decider) -> Plan:
    plan = Plan(proposals=[])
    flagged = _flag_proposals(inputs, decider, plan)
    dim = 0
    for m in (inputs.unit_vectors, inputs.vectors):
        if not dim and m.ndim == 2 and len(m):
            dim = m.shape[1]
    if not dim and len(inputs.fact_vectors):
        dim = inputs.fact_vectors.shape[-1]
    keep = [n for n, f in enumerate(inputs.facts) if f.id not in flagged]
    pool = _Pool([inputs.facts[n] for n in keep], inputs.fact_vectors[keep], dim or 1)
    consumed: set[str] = set()
    created: dict[str, Proposal] = {}
    for cand in sorted(_candidates(inputs, plan), key=lambda c: c.last_seen):
        verdict = decider.reconcile(cand, pool.nearest(cand.vector, NEAREST), pool.texts)
        d = verdict.decision
        if cand.gate is None and not (d.kind == "NONE" or d.explicit):
            continue  # not enough evidence yet: the entries wait, or age out
        why = d.reason if cand.gate is None else f"{d.reason}; promoted by {cand.gate}"
        base: dict[str, Any] = dict(
            members=cand.ids,
            topic=cand.topic,
            evidence=evidence_count(cand.score),
            first_seen=cand.first_seen,
            last_seen=cand.last_seen,
            journal=cand.journal,
            brief_id=cand.brief_id,
            note=verdict.note,
        )
        if d.kind == "NONE" and d.target_id in created:
            merged = created[d.target_id]  # a second cluster restating a fact made this run
            merged.members += cand.ids
            merged.journal += cand.journal
            merged.evidence += evidence_count(cand.score)
        elif d.kind == "NONE" and d.target_id:
            plan.proposals.append(Proposal("confirm", why, d.target_id, **base))
        elif d.kind == "ADD":
            fid = new_id("long")
            vector = cand.vector if verdict.text == cand.text else None
            p = Proposal("promote", why, fid, text=verdict.text, vector=vector, **base)
            plan.proposals.append(p)
            created[fid] = p
            pool.add(fid, verdict.text, cand.vector)
        elif d.kind == "UPDATE" and d.target_id:
            fid = new_id("long")
            vector = cand.vector if verdict.text == cand.text else None
            p = Proposal(
                "supersede", why, d.target_id, new_id=fid, text=verdict.text, vector=vector, **base
            )
            plan.proposals.append(p)
            created[fid] = p
            pool.remove(d.target_id)
            pool.add(fid, verdict.text, cand.vector)
        elif d.kind == "DELETE" and d.target_id:
            plan.proposals.append(Proposal("obsolete", why, d.target_id, **base))
            pool.remove(d.target_id)
        else:
            continue
        consumed.update(cand.ids)
    _age_out(inputs, consumed, plan)
    _loops(inputs, plan)
    return plan


def _flag_proposals(inputs: Inputs, decider: Decider, plan: Plan) -> set[str]:
    by_fact: dict[str, list[ForgetFlag]] = {}
    for flag in inputs.flags:
        if flag.fact_id in inputs.flagged:
            by_fact.setdefault(flag.fact_id, []).append(flag)
    for fact_id, flags in by_fact.items():
        fact = inputs.flagged[fact_id]
        verdicts = [(decider.forget(f, fact), f) for f in flags]
        (kind, why, note), strongest = max(verdicts, key=lambda v: _STRENGTH[v[0][0]])
        values = [f.value for f in detect(fact.content)] if kind == "purge" else []
        if kind == "purge":
            values += [f.value for f in detect(strongest.reason)]
        plan.proposals.append(
            Proposal(
                kind,  # type: ignore[arg-type]  # the decider answers purge, demote or decay
                f"forget flag {strongest.id}: {why}",
                fact_id,
                members=[i for i in fact.derived_from if i.startswith("s_")],
                journal=[i for i in fact.derived_from if i.startswith("j_")],
                values=sorted(set(values), key=len, reverse=True),
                flags=[f.id for f in flags],
                note=note,
            )
        )
    return set(by_fact)


def _candidates(inputs: Inputs, plan: Plan) -> list[Candidate]:
    cfg = inputs.settings
    units = inputs.units
    if not units:
        return []
    vectors = inputs.unit_vectors
    feats: list[Features] = [_FEATURES(u.content) for u in units]

    def joins(seed: int, other: int) -> bool:
        sim = float(vectors[seed] @ vectors[other])
        known = [Known(str(seed), units[seed].content, sim)]
        d = decide(
            units[other].content,
            known,
            match_threshold=cfg.cluster_threshold,
            related_threshold=cfg.related_threshold,
            cand=feats[other],
        )
        return d.kind == "NONE"

    hints, noise = [], []
    for brief in inputs.briefs:
        for text in brief.promote_hints:
            hints.append(briefs_mod.Phrase(text, inputs.phrase_vectors[text], brief.id))
        for text in getattr(brief, "noise", []):
            noise.append(briefs_mod.Phrase(text, inputs.phrase_vectors[text], brief.id))

    out: list[Candidate] = []
    skipped = 0
    for members in cluster(vectors, cfg.cluster_threshold, joins):
        group = [units[i] for i in members]
        texts = [u.content for u in group]
        topics = [u.topic for u in group]
        if noise and briefs_mod.any_match(
            noise, texts, topics, vectors[members], cfg.cluster_threshold
        ):
            skipped += 1
            continue
        rep = medoid(vectors, members)
        score = evidence_score((u.occurred_at.timestamp() for u in group), cfg.burst_seconds)
        hint = (
            briefs_mod.any_match(hints, texts, topics, vectors[members], cfg.cluster_threshold)
            if hints
            else None
        )
        gate = None
        if any(u.pinned for u in group):
            gate = "a pinned entry"
        elif hint is not None:
            gate = f"brief {hint.source} hint '{hint.text[:60]}'"
        elif score >= cfg.promote_min_evidence:
            gate = f"evidence {score:g} >= {cfg.promote_min_evidence:g}"
        named = Counter(t for t in topics if t)
        out.append(
            Candidate(
                entries=group,
                text=units[rep].content,
                vector=vectors[rep],
                topic=named.most_common(1)[0][0] if named else None,
                score=score,
                gate=gate,
                journal=list(dict.fromkeys(j for u in group for j in u.journal)),
                brief_id=hint.source if hint else None,
            )
        )
    if skipped:
        plan.notes.append(f"{skipped} cluster(s) matched a brief's noise and were not promoted")
    return out


def _age_out(inputs: Inputs, consumed: set[str], plan: Plan) -> None:
    for entry, into in zip(inputs.entries, inputs.consolidated, strict=True):
        if entry.pinned or entry.expires_at is None or entry.id in consumed:
            continue
        if entry.expires_at.timestamp() > inputs.now:
            continue
        why = f"past its TTL ({entry.expires_at.isoformat()})"
        if into:
            why += f"; its content lives on in {into}"
        else:
            why += "; never promoted"
        plan.proposals.append(Proposal("age_out", why, entry.id))


def _loops(inputs: Inputs, plan: Plan) -> None:
    intents = [
        briefs_mod.Phrase(text, inputs.phrase_vectors[text], brief.id)
        for brief in inputs.briefs
        for text in brief.completed_intents
    ]
    loops = inputs.loops
    closed = briefs_mod.completed(
        intents,
        [loop.id for loop in loops],
        [loop.intent for loop in loops],
        inputs.loop_vectors,
        inputs.settings.cluster_threshold,
    )
    for n, loop in enumerate(loops):
        if n in closed:
            intent = closed[n]
            plan.proposals.append(
                Proposal(
                    "complete",
                    f"brief {intent.source} names it completed ('{intent.text[:80]}')",
                    loop.id,
                    brief_id=intent.source,
                )
            )
        elif loop.expires_at is not None and loop.expires_at.timestamp() <= inputs.now:
            plan.proposals.append(
                Proposal("expire", f"past its expiry ({loop.expires_at.isoformat()})", loop.id)
            )
