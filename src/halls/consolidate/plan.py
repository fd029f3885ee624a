"""The plan every engine shares: the walk over one snapshot of a store.

``build_plan`` takes forget flags first (a flagged fact takes no part in
reconciliation), then the candidates (``candidates.find_candidates``),
reconciled in the order they were last said against the active facts as the
plan changes them (``_Pool``); changes without the evidence wait, and are
read together at the end (with a retraction of the same fact, one change);
then it ages out expired entries and closes open loops. Two decisions are
delegated to a ``Decider``: how a candidate reconciles (and the text of the
fact it yields), and which class a forget flag is; a flag that would purge
demotes unless an admin made it (``_authorised``). The heuristic decider
(``heuristic``) answers from ``consensus`` and ``pii``; the LLM engine asks a
model and falls back to these answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from halls.consolidate import briefs as briefs_mod
from halls.consolidate import dates, progress
from halls.consolidate.candidates import Candidate, find_candidates
from halls.consolidate.engine import Inputs, Plan, Proposal
from halls.consolidate.evidence import evidence_count, evidence_score
from halls.consolidate.judge import Judge, Judgement, Pair, restates_change, same_change
from halls.consolidate.pii import detect
from halls.consolidate.reconcile import MAJORITY, Decision, Known
from halls.importance import highest
from halls.models import ForgetFlag, LongFact, new_id
from halls.redact import redact
from halls.scopes import common_scope

NEAREST = 5
_STRENGTH = {"purge": 3, "demote": 2, "decay": 1}


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    text: str
    note: str | None = None


class Decider(Protocol):
    judge: Judge  # same / update / retract / unrelated, for clustering and reconciliation

    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict: ...
    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]: ...


class _Pool:
    """The active facts as the plan changes them, for nearest-fact lookups."""

    def __init__(self, facts: list[LongFact], vectors: np.ndarray, dim: int) -> None:
        self.ids = [f.id for f in facts]
        self.row = {f.id: n for n, f in enumerate(facts)}
        self.texts = {f.id: f.content for f in facts}
        # Grown by doubling: a run may add thousands of facts one by one.
        given = vectors.reshape(-1, dim).astype(np.float32)
        self.matrix = np.zeros((max(2 * len(given), 64), dim), dtype=np.float32)
        self.matrix[: len(given)] = given
        self.alive = np.zeros(len(self.matrix), dtype=bool)
        self.alive[: len(given)] = True

    def nearest(self, vector: np.ndarray, n: int) -> list[Known]:
        size = len(self.ids)
        if not size:
            return []
        sims = np.where(self.alive[:size], self.matrix[:size] @ vector, -2.0)
        top = np.argpartition(-sims, n)[:n] if size > n else np.arange(size)
        order = top[np.argsort(-sims[top], kind="stable")]
        return [
            Known(self.ids[i], self.texts[self.ids[i]], float(sims[i]), self.matrix[i])
            for i in order.tolist()
            if self.alive[i]
        ]

    def add(self, id: str, text: str, vector: np.ndarray) -> None:
        n = len(self.ids)
        if n == len(self.matrix):
            self.matrix = np.vstack([self.matrix, np.zeros_like(self.matrix)])
            self.alive = np.concatenate([self.alive, np.zeros(n, dtype=bool)])
        self.ids.append(id)
        self.row[id] = n
        self.texts[id] = text
        self.matrix[n] = vector
        self.alive[n] = True

    def remove(self, id: str) -> None:
        self.alive[self.row[id]] = False

    def restore(self, id: str) -> None:
        """``id`` active again (a retraction this run turned into a change)."""
        self.alive[self.row[id]] = True

    def vector(self, id: str) -> np.ndarray:
        return self.matrix[self.row[id]]

    def holds(self, id: str) -> bool:
        """Whether ``id`` is an active fact of the pool (not changed or retired this run)."""
        return id in self.row and bool(self.alive[self.row[id]])


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
    pinned = {f.id for f in inputs.facts if f.pinned}  # (those made this run: ``made.pinned``)
    waiting: dict[str, list[Candidate]] = {}  # implicit changes without the evidence, by fact
    successor: dict[str, str] = {}  # a fact changed this run -> the fact that replaced it
    replaced: dict[str, str] = {}  # the other way: a fact made this run -> the one it changed
    alone: list[Candidate] = []  # new statements without the evidence, in the order read
    pointing: set[int] = set()  # candidates kept from a fact: none of them stands alone
    ended: dict[str, tuple[Proposal, Candidate]] = {}  # a fact retracted this run -> how
    related = inputs.settings.related_threshold

    def apply(cand: Candidate, verdict: Verdict, d: Decision) -> None:
        if d.kind == "ADD" and not cand.standalone:
            # No new fact of statements that point outside themselves: the
            # entries wait, or age out. (A change to a known fact still
            # applies: the fact it changes is what its pronoun points at, and
            # a stale fact left standing would be worse.)
            pointing.add(id(cand))
            return
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
            pinned=any(u.pinned for u in cand.entries),
            importance=highest(u.importance for u in cand.entries),
            scope=common_scope(u.scope for u in cand.entries),
        )
        if d.kind == "NONE" and d.target_id in created:
            merged = created[d.target_id]  # a second cluster restating a fact made this run
            merged.members += cand.ids
            merged.journal += cand.journal
            merged.evidence += evidence_count(cand.score)
            merged.pinned |= base["pinned"]
            merged.importance = highest((merged.importance, base["importance"]))
        elif d.kind == "NONE" and d.target_id:
            plan.proposals.append(Proposal("confirm", why, d.target_id, **base))
        elif d.kind == "ADD":
            fid = new_id("long")
            text = _worded(verdict.text, cand)
            vector = cand.vector if text == cand.text else None
            p = Proposal("promote", why, fid, text=text, vector=vector, **base)
            plan.proposals.append(p)
            created[fid] = p
            pool.add(fid, text, cand.vector)
        elif d.kind == "UPDATE" and d.target_id:
            fid = new_id("long")
            text = _worded(verdict.text, cand)
            vector = cand.vector if text == cand.text else None
            p = Proposal(
                "supersede", why, d.target_id, new_id=fid, text=text, vector=vector, **base
            )
            plan.proposals.append(p)
            created[fid] = p
            successor.setdefault(d.target_id, fid)
            replaced[fid] = d.target_id
            pool.remove(d.target_id)
            pool.add(fid, text, cand.vector)
        elif d.kind == "DELETE" and d.target_id:
            ended[d.target_id] = (Proposal("obsolete", why, d.target_id, **base), cand)
            plan.proposals.append(ended[d.target_id][0])
            pool.remove(d.target_id)
        else:
            return
        consumed.update(cand.ids)

    found = sorted(find_candidates(inputs, plan, decider.judge), key=lambda c: c.last_seen)
    for n, cand in enumerate(found):
        progress.report("reconciling", n, len(found))
        verdict = decider.reconcile(cand, pool.nearest(cand.vector, NEAREST), pool.texts)
        d = verdict.decision
        made = created.get(d.target_id or "")
        if d.kind in ("UPDATE", "DELETE") and made and (made.last_seen or 0) >= cand.first_seen:
            # A change comes after what it changes: statements made at the
            # same time (pinned notes written together) are different facts,
            # and so are two said in turn ("Ana's birthday is June 3", "Ana's
            # husband's birthday is June 30", and each again): what is still
            # said after the other was first said has not been replaced by it.
            d = Decision("ADD", None, f"{d.reason}, but it was said again since; a separate fact")
        elif (
            d.kind in ("UPDATE", "DELETE")
            and made is not None
            and d.target_id in replaced
            and restates_change(
                *_changes(
                    decider.judge,
                    pool,
                    replaced[d.target_id],
                    [_made(pool, made), (cand.text, cand.vector)],
                )
            )
        ):
            # The run has just made this fact by changing an older one, and the
            # candidate gives the older one the same new value: the same change
            # said again ("Tomas left Bolt and joined Wolt" after "Tomas switched
            # jobs, he's at Wolt now" replaced "Tomas works at Bolt"), which
            # reads as a change or retraction of the new fact.
            old = replaced[d.target_id]
            d = Decision("NONE", d.target_id, f"gives {old} the same new value as {d.target_id}")
        elif (
            d.kind in ("UPDATE", "DELETE")
            and (d.target_id in pinned or (made is not None and made.pinned))
            and not d.explicit
        ):
            # What the user pinned is retired by a statement that says it
            # changed ("now", "switched", "no longer"), not by an inference.
            d = Decision("ADD", None, f"{d.reason}, but it is pinned and nothing says it changed")
        if cand.gate is None and not (d.kind == "NONE" or d.explicit):
            if d.kind == "UPDATE" and d.target_id:
                waiting.setdefault(d.target_id, []).append(cand)
            elif d.kind == "ADD":
                alone.append(cand)
            continue  # not enough evidence yet: the entries wait, or age out
        apply(cand, verdict, d)
    # Candidates go in the order they were last said, so a statement said once
    # between the statements of a cluster comes before the fact they make (a
    # third phrasing said between the other two): read again beside the facts
    # the run made, it is one more statement of one of them, or it waits.
    for cand in progress.each("reading again", alone, 32):
        known = pool.nearest(cand.vector, NEAREST)
        # Only facts first said before it (what was said before a fact was
        # first said may be the value it replaced, read as the same), and
        # only when the nearest of all is one of them (it was read beside the
        # others already, and it is cheap: a run of notes leaves thousands of
        # such statements). Nor a pair that names another person or number.
        after = [
            k
            for k in known
            if k.id in created
            and k.similarity >= related
            and cand.first_seen >= (created[k.id].first_seen or 0)
        ]
        if not after or after[0] is not known[0]:
            continue
        (pair,) = decider.judge.judge(
            [Pair(after[0].text, cand.text, after[0].vector, cand.vector)]
        )
        if pair.values_differ:
            continue
        verdict = decider.reconcile(cand, after, pool.texts)
        d = verdict.decision
        if d.kind == "NONE" and d.target_id:
            apply(cand, verdict, d)
    # A fact retracted this run whose new value was said apart ("new place is in
    # portobello, no longer in leith" beside "we moved to Portobello last
    # weekend"; "Sold the Civic" beside "switched to a Model 3"): alone, the new
    # value lacked the evidence of a change, or found no fact once the
    # retraction was read first. Together they are one change, as when one
    # cluster's phrasings end a fact and give what holds instead (``consensus``):
    # the retraction becomes a supersession by the latest such statement.
    for target, (retraction, retracting) in ended.items():
        unread = [c for c in [*waiting.get(target, []), *alone] if not consumed & set(c.ids)]
        # Near the fact or its retraction (which may name the new value too).
        anchors = (pool.vector(target), retracting.vector)
        near = [c for c in unread if max(float(c.vector @ v) for v in anchors) >= related]
        readings = _changes(decider.judge, pool, target, [(c.text, c.vector) for c in near])
        news = [
            c
            for c, j in zip(near, readings, strict=True)
            # (Not one that ends something and names nothing new: "No
            # antihistamines for Oluwaseun these days" is the retraction again.)
            if j.label == "update"
            and j.confidence >= MAJORITY
            and (j.new_values or not j.ends)
            and c.standalone
        ]
        if not news:
            continue
        cand = max(news, key=lambda c: c.last_seen)
        # By identity: a proposal's fields hold arrays, which ``==`` cannot compare.
        plan.proposals = [p for p in plan.proposals if p is not retraction]
        pool.restore(target)
        why = f"{retraction.reason}; {cand.text[:60]!r} says what holds instead"
        instead = Decision("UPDATE", target, why)
        apply(cand, Verdict(instead, cand.text), instead)
        made = created[successor[target]]
        made.members += [m for m in retraction.members if m not in made.members]
        made.journal += [j for j in retraction.journal if j not in made.journal]
        made.evidence += retraction.evidence
    for target, pending in waiting.items():
        if target in successor:
            # The run changed this fact: a waiting change to the same new value
            # says that change again ("Spotify price went up to £13 a month"
            # beside "The Spotify plan now costs thirteen pounds a month").
            new = successor[target]
            for cand in pending:
                said = [_made(pool, created[new]), (cand.text, cand.vector)]
                if same_change(*_changes(decider.judge, pool, target, said)):
                    d = Decision("NONE", new, f"gives {target} the same new value as {new}")
                    apply(cand, Verdict(d, cand.text), d)
        elif len(pending) > 1 and pool.holds(target):
            change = _one_change(inputs, decider.judge, pool, target, pending)
            if change is not None:
                apply(change[0], Verdict(change[1], change[0].text), change[1])
    if pointing:
        plan.notes.append(
            f"{len(pointing)} cluster(s) of statements that point at what they do not name "
            "(halls.consolidate.standalone) made no new fact"
        )
    _age_out(inputs, consumed, plan)
    _loops(inputs, plan)
    return plan


def _worded(text: str, cand: Candidate) -> str:
    """A new fact's text: screened, its relative times made dates from when it was
    said (``dates``: "yesterday" is false the day after)."""
    return dates.dated(_screened(text), cand.said_at)


def _screened(text: str) -> str:
    """A new fact's text, redacted as every write is (``halls.redact``).

    What users write is redacted before it is stored, so this finds nothing,
    unless a record predates that (an old store, an imported archive) or a
    model wrote the text: a long-term fact never carries a secret either way.
    """
    return redact(text)[0]


def _changes(
    judge: Judge, pool: _Pool, fact: str, said: list[tuple[str, np.ndarray]]
) -> list[Judgement]:
    """The judge's readings of statements that may each change the pool's ``fact``."""
    v = pool.vector(fact)
    return judge.judge([Pair(pool.texts[fact], t, v, u) for t, u in said])


def _made(pool: _Pool, made: Proposal) -> tuple[str, np.ndarray]:
    fid = made.new_id or made.target_id
    return made.text or "", pool.vector(fid)


def _one_change(
    inputs: Inputs, judge: Judge, pool: _Pool, target: str, pending: list[Candidate]
) -> tuple[Candidate, Decision] | None:
    """Implicit changes of one fact that each lacked the evidence to retire it, read
    together: statements that give the fact the same new value on different days
    are one change said twice ("We release once a month", "Releases ship monthly"
    after "We release every two weeks"), also where the judge does not read them as
    paraphrases of each other. One candidate of them all, or None."""
    cfg = inputs.settings
    # One reading of each change against the fact, compared pairwise below.
    got = _changes(judge, pool, target, [(c.text, c.vector) for c in pending])
    for n in sorted(range(len(pending)), key=lambda i: -pending[i].score):
        seed, mine = pending[n], got[n]
        group = [c for c, j in zip(pending, got, strict=True) if c is seed or same_change(mine, j)]
        if len(group) < 2:
            continue
        entries = [u for c in group for u in c.entries]
        score = evidence_score((u.occurred_at.timestamp() for u in entries), cfg.burst_seconds)
        if score < cfg.promote_min_evidence:
            continue
        latest = max(group, key=lambda c: c.last_seen)
        vectors = [c.vectors for c in group if c.vectors is not None]
        merged = Candidate(
            entries=entries,
            text=latest.text,
            vector=latest.vector,
            topic=next((c.topic for c in group if c.topic), None),
            score=score,
            gate=f"evidence {score:g} >= {cfg.promote_min_evidence:g}",
            journal=list(dict.fromkeys(j for c in group for j in c.journal)),
            vectors=np.concatenate(vectors) if len(vectors) == len(group) else None,
        )
        why = f"changes {target}: {len(group)} statements give it the same new value"
        return merged, Decision("UPDATE", target, why)
    return None


def _flag_proposals(inputs: Inputs, decider: Decider, plan: Plan) -> set[str]:
    by_fact: dict[str, list[ForgetFlag]] = {}
    for flag in inputs.flags:
        if flag.fact_id in inputs.flagged:
            by_fact.setdefault(flag.fact_id, []).append(flag)
    for fact_id, flags in by_fact.items():
        fact = inputs.flagged[fact_id]
        verdicts = [(_authorised(decider.forget(f, fact), f), f) for f in flags]
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


_Verdict = tuple[str, str, str | None]  # (purge | demote | decay, why, engine note)


def _authorised(verdict: _Verdict, flag: ForgetFlag) -> _Verdict:
    """A purge is deletion for good: only an admin's flag may ask for one."""
    kind, why, note = verdict
    if kind != "purge" or flag.admin:
        return verdict
    # Demoted, not left as it was: it sinks below every active fact in
    # recall at once, and an admin can still purge it (DELETE /long/{id}).
    return "demote", f"{why}; a purge needs an admin's flag, so it is demoted", note


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
