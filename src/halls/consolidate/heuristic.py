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
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from halls.consolidate import briefs as briefs_mod
from halls.consolidate.cluster import ALIKE, APART, JOIN, cluster, medoid
from halls.consolidate.distill import Unit
from halls.consolidate.engine import Inputs, Plan, Proposal
from halls.consolidate.evidence import evidence_count, evidence_score
from halls.consolidate.judge import (
    LABELS,
    RETRACT,
    SAME,
    UNRELATED,
    UPDATE,
    Judge,
    Judgement,
    Label,
    Pair,
    default_judge,
    read,
    restates_change,
    same_change,
)
from halls.consolidate.pii import detect, forget_class
from halls.consolidate.reconcile import Decision, Known, decide
from halls.models import ForgetFlag, LongFact, new_id

NEAREST = 5
UNSURE = 0.8  # an "unrelated" or "update" this unsure does not keep two close statements apart
READINGS = 8  # distinct statements of a cluster the judge reads against each fact
LINK_MARGIN = 0.15  # clustering asks the judge about pairs down to cluster_threshold - this
# ... and, below that, down to cluster_threshold - REACH_MARGIN, where a pair
# joins only on a sure "same" (``REACH_SURE``): "User is vegetarian" / "I don't eat
# meat, haven't for years" sit at 0.47-0.55, "preferred_editor=neovim" / "does
# all their coding in Neovim" at 0.49, "from now on reply in German" / "User's
# preferred reply language is ... German" at 0.45, and most pairs there are two
# statements about one person, not one statement. (0.40 at the defaults, the
# related threshold; going there from 0.45 gained 2 blind scenarios, lost none.)
REACH_MARGIN = 0.35
# Below the link threshold, down to the reach, a pair joins on a "same" this
# sure: of the pairs there the judge reads as the same at 0.6-0.8, in the read
# blind sets, 16 restate one fact and 2 are two facts ("The cat eats Purina dry
# food" / "dog's food: Purina canned"); at 0.8, as before session 24, the
# unread blind sets 18-20 lose 2 scenarios and LoCoMo's dev split 12 facts.
REACH_SURE = 0.6
# Above the link threshold, the judge's probability of ``same`` under which a
# pair does not join: one in ten. Higher, rewordings read as a change or
# another fact, but not surely, stay apart (the blind scenarios lose 15 of
# 448); lower, turns of a conversation that only share a topic join (LoCoMo's
# dev split: 170 facts at 0, 218 at 0.1; docs/benchmarks.md, session 24).
JOIN_FLOOR = 0.1
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
    # The statements' own embeddings (rows as ``entries``): reconciliation
    # asks the judge about each, not the representative alone.
    vectors: np.ndarray | None = None
    # The brief's hint that gates it, if any: the session's own words for
    # what the statements say, read beside them.
    hint: briefs_mod.Phrase | None = None

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
    judge: Judge  # same / update / retract / unrelated, for clustering and reconciliation

    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict: ...
    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]: ...


class HeuristicDecider:
    """The default: the local pair judge decides; the candidate's text is the fact."""

    def __init__(self, inputs: Inputs, judge: Judge | None = None) -> None:
        self.cfg = inputs.settings
        self.judge = judge or default_judge(self.cfg.cross_pairs)

    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict:
        said = _statements(cand)
        # A fact is related when any reading is near it, not the representative alone.
        near = [(k, [_near(k, v) for _, v in said]) for k in known]
        related = [(k, sims) for k, sims in near if max(sims) >= self.cfg.related_threshold]
        got = self.judge.judge([Pair(k.text, t, k.vector, v) for k, _ in related for t, v in said])
        # Which phrasings say a word of addition ("too", "besides") and nothing
        # ended, and whether any says a change: pair facts the judge read.
        adds = [j.marks_addition for j in got[: len(said)]]
        judged = []
        for n, (k, sims) in enumerate(related):
            part = got[n * len(said) : (n + 1) * len(said)]
            close = [
                _close(j, sim, self.cfg.cluster_threshold, j.values_differ)
                for j, sim in zip(part, sims, strict=True)
            ]
            judged.append((k, _consensus(close, adds)))
        marked = any(j.marks_change for j in got)
        return Verdict(decide(known, judged, marked), cand.text)

    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]:
        kind, why = forget_class(flag.reason, fact.content)
        return kind, why, None


def _near(k: Known, v: np.ndarray) -> float:
    """The cosine of a fact and a reading (the fact's nearness to the representative
    when its vector is not at hand)."""
    return float(k.vector @ v) if k.vector is not None else k.similarity


def _statements(cand: Candidate) -> list[tuple[str, np.ndarray]]:
    """The cluster's distinct statements with their vectors, the representative first;
    at most ``READINGS`` (a statement repeated a hundred times is read once)."""
    out = [(cand.text, cand.vector)]
    if cand.hint is not None and cand.hint.text != cand.text:
        out.append((cand.hint.text, cand.hint.vector))
    if cand.vectors is not None:
        seen = {t for t, _ in out}
        for u, v in zip(cand.entries, cand.vectors, strict=True):
            if len(out) == READINGS:
                break
            if u.content not in seen:
                seen.add(u.content)
                out.append((u.content, v))
    return out


def _consensus(judged: list[Judgement], adds: list[bool] | None = None) -> Judgement:
    """One answer from the answers about each statement of a cluster.

    The statements of a cluster say one thing in several phrasings, so each
    answer is a reading of the same claim. When the judge gives each reading's
    probabilities (the local one), they are averaged (without the readings
    that see no relation, when another surely reads a change) and the likeliest
    label wins with its mean probability; otherwise (a judge that gives only labels)
    the label with the largest summed confidence wins, and its confidence is
    that sum over the statements. ``adds`` says which statements mark an
    addition: one of them read as another fact decides.
    """
    if len(judged) == 1:
        return judged[0]
    # A phrasing that says a word of addition and reads as another fact tells
    # what the claim is: one more beside the fact, however another phrasing
    # reads ("we got a puppy too, he's called Bruno" / "Bruno the puppy is our
    # new pet", after "We have a cat named Miso").
    added = [j for j, a in zip(judged, adds or [], strict=False) if a and j.label == "unrelated"]
    if added:
        return max(added, key=lambda j: j.confidence)
    labels = {j.label for j in judged}
    if "retract" in labels and labels & {"update", "unrelated"} and "same" not in labels:
        # One phrasing ends the fact ("no longer drinks green tea"), another
        # says what holds instead ("he has rooibos"): together, a change.
        sure = max(j.confidence for j in judged if j.label == "retract")
        return replace(judged[0], label="update", confidence=sure, probabilities=())
    if all(j.probabilities for j in judged):
        # Each reading's whole distribution counts: a change one phrasing reads
        # at 0.92 and another at 0.32 (its second choice) is likelier than not.
        # A phrasing that sees no relation to the fact abstains when another
        # surely reads a change of it: the phrasings are one claim, and the one
        # that ties it to the fact knows more ("I weigh 77 kilos as of this
        # morning's weigh-in" reads as another fact beside "User weighs 82 kg",
        # "weight: 77 kg" as its change). (Not for a sure "same": chatty
        # statements would gather into one fact.)
        seen = [j for j in judged if j.label in ("update", "retract")]
        if seen and max(j.confidence for j in seen) >= UNSURE:
            judged = seen
        mean = np.mean([j.probabilities for j in judged], axis=0)
        k = int(mean.argmax())
        p = tuple(mean.tolist())
        return replace(judged[0], label=LABELS[k], confidence=float(mean[k]), probabilities=p)
    total: dict[Label, float] = {}
    for j in judged:
        total[j.label] = total.get(j.label, 0.0) + j.confidence
    label = max(total, key=lambda k: total[k])
    conf = total[label] / len(judged)
    return replace(judged[0], label=label, confidence=conf, probabilities=())


def _close(j: Judgement, similarity: float, threshold: float, differ: bool = False) -> Judgement:
    """As in clustering: above the cluster threshold an unsure "unrelated" is the same,
    unless the two ``differ`` in the numbers they claim (with probabilities, the
    "unrelated" share moves to "same")."""
    if j.label == "unrelated" and j.confidence < UNSURE and similarity >= threshold and not differ:
        if j.probabilities:
            p = list(j.probabilities)
            p[SAME] += p[UNRELATED]
            p[UNRELATED] = 0.0
            return replace(j, label="same", confidence=p[SAME], probabilities=tuple(p))
        return replace(j, label="same", confidence=1.0 - j.confidence)
    return j


class HeuristicEngine:
    name = "heuristic"

    def plan(self, inputs: Inputs) -> Plan:
        return build_plan(inputs, HeuristicDecider(inputs))


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
    related = inputs.settings.related_threshold

    def apply(cand: Candidate, verdict: Verdict, d: Decision) -> None:
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
        )
        if d.kind == "NONE" and d.target_id in created:
            merged = created[d.target_id]  # a second cluster restating a fact made this run
            merged.members += cand.ids
            merged.journal += cand.journal
            merged.evidence += evidence_count(cand.score)
            merged.pinned |= base["pinned"]
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
            successor.setdefault(d.target_id, fid)
            replaced[fid] = d.target_id
            pool.remove(d.target_id)
            pool.add(fid, verdict.text, cand.vector)
        elif d.kind == "DELETE" and d.target_id:
            plan.proposals.append(Proposal("obsolete", why, d.target_id, **base))
            pool.remove(d.target_id)
        else:
            return
        consumed.update(cand.ids)

    for cand in sorted(_candidates(inputs, plan, decider.judge), key=lambda c: c.last_seen):
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
    for cand in alone:
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
    _age_out(inputs, consumed, plan)
    _loops(inputs, plan)
    return plan


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
    for seed in sorted(pending, key=lambda c: -c.score):
        got = _changes(judge, pool, target, [(c.text, c.vector) for c in pending])
        mine = got[pending.index(seed)]
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


def _candidates(inputs: Inputs, plan: Plan, judge: Judge) -> list[Candidate]:
    cfg = inputs.settings
    units = inputs.units
    if not units:
        return []
    vectors = inputs.unit_vectors

    when = np.array([u.occurred_at.timestamp() for u in units])
    texts = [u.content for u in units]

    # Pairs this close are the judge's to decide: paraphrases with contrast
    # words sit around 0.6-0.75; lower, the pairs grow quadratically (10,000
    # entries of one person's notes: ~100 neighbours each at 0.6, ~1,000 at 0.4;
    # ``cluster`` judges a row's ``CAP`` nearest only).
    link = max(cfg.related_threshold, cfg.cluster_threshold - LINK_MARGIN)
    reach = max(cfg.related_threshold, cfg.cluster_threshold - REACH_MARGIN)

    def joins(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # The judge reads a pair earlier statement first (a < b on ties).
        first = when[a] <= when[b]
        early, late = np.where(first, a, b), np.where(first, b, a)
        sims = np.einsum("ij,ij->i", vectors[a], vectors[b])
        high = sims >= cfg.cluster_threshold
        r = read(judge, texts, vectors, early, late)
        labels, conf, p_same = r.labels, r.confidence, r.p_same
        # A neighbour joins when the judge reads the same statement
        # (below the link threshold, surely: ``REACH_MARGIN``); above the
        # cluster threshold also when it is unsure whether the two differ
        # (a retraction, or a change, another subject or a second value
        # read with confidence never joins, nor do two that each
        # claim a number or a name the other lacks: "every two weeks" /
        # "once a month", "the London office" / "the Berlin office"). An
        # unsure change this close is a detail more ("frontend: eslint
        # for lint checks" after "The frontend repo uses ESLint for
        # linting", 0.80, "update" at 0.65).
        swapped = r.values_differ
        unsure = np.isin(labels, (UNRELATED, UPDATE)) & (conf < UNSURE) & high & ~swapped
        # Read apart: a sure "unrelated" (another subject, another
        # person) or other numbers; no cluster holds both, not even
        # through a seed each is like. (A change read between two
        # restatements of one seed is no such sign: contrast words.)
        sure = (labels == UNRELATED) & (conf >= UNSURE)
        apart = np.where(sure | swapped, APART, 0)
        same = (labels == SAME) & ((conf >= REACH_SURE) | (sims >= link))
        # Above the link threshold, a pair joins unless the judge rules a
        # restatement out: a retraction, other values, or ``same`` at under
        # ``JOIN_FLOOR`` (rewordings it reads as a change or another fact,
        # but not surely: "My GP is Dr. Hassan" / "family doctor: Dr Hassan",
        # cosine 0.69, ``unrelated`` at 0.73 and ``same`` at 0.27). A sure
        # ``unrelated`` that leaves ``same`` one chance in ten joins too.
        same |= (p_same >= JOIN_FLOOR) & (sims >= link) & (labels != RETRACT) & ~swapped
        # ... or when the two name the same values past their subject ("~7.5
        # miles home to work" / "about 12 km from the office", "half past nine,
        # Mon-Fri" / "9:30 am on weekdays"): paraphrases of one value, however
        # far apart their other words sit.
        maybe = np.flatnonzero((labels == SAME) & ~same)
        same[maybe] = r.same_values[maybe]
        # Unsure "same" below the link threshold starts no cluster, but
        # lets two statements that each join a seed share it.
        alike = np.where((labels == SAME) & ~swapped, ALIKE, apart)
        return np.where(same | unsure, JOIN, alike).astype(np.int8)  # type: ignore[no-any-return]

    hints, noise = [], []
    for brief in inputs.briefs:
        for text in brief.promote_hints:
            hints.append(briefs_mod.Phrase(text, inputs.phrase_vectors[text], brief.id))
        for text in getattr(brief, "noise", []):
            noise.append(briefs_mod.Phrase(text, inputs.phrase_vectors[text], brief.id))

    out: list[Candidate] = []
    skipped = 0
    clusters = cluster(vectors, link, joins, reach=reach)
    # A hint that matches no cluster outright goes to the nearest one (briefs.nearest).
    unmatched = [
        h
        for h in hints
        if not any(
            briefs_mod.any_match(
                [h],
                [units[i].content for i in m],
                [units[i].topic for i in m],
                vectors[m],
                cfg.cluster_threshold,
            )
            for m in clusters
        )
    ]
    fallback = briefs_mod.nearest(unmatched, [vectors[m] for m in clusters]) if unmatched else {}
    for n, members in enumerate(clusters):
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
        ) or fallback.get(n)
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
                vectors=vectors[members],
                hint=hint,
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
