"""The candidates of a run: clusters of statements that say one thing.

``find_candidates`` clusters a snapshot's statements (``distill.Unit``) with
the star clustering of ``cluster``, the pair judge deciding which neighbours
join (``joins``: the thresholds below), drops the clusters a brief names as
noise, and gates each on evidence, a brief's hint or a pinned entry. A
gated cluster's text is one of its statements that stand on their own
(``standalone``: none points at what it does not name), when it has one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from halls.consolidate import briefs as briefs_mod
from halls.consolidate import progress, standalone
from halls.consolidate.cluster import ALIKE, APART, JOIN, cluster, medoid, pair_cosines
from halls.consolidate.distill import Unit
from halls.consolidate.engine import Inputs, Plan
from halls.consolidate.evidence import evidence_score
from halls.consolidate.judge import RETRACT, SAME, UNRELATED, UPDATE, Judge, read
from halls.importance import highest
from halls.redact import MARK

UNSURE = 0.8  # an "unrelated" or "update" this unsure does not keep two close statements apart
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
    def standalone(self) -> bool:
        """Whether a statement of the cluster stands on its own (``standalone``; a pinned
        entry's does): if none does, the cluster makes no new fact (it may confirm,
        change or retract one). Parsed when asked, so only for what may become a fact."""
        return any(_alone(self.entries))

    @property
    def said_at(self) -> datetime:
        """When its text was said: a relative time in it ("yesterday") counts from then."""
        said = [u.occurred_at for u in self.entries if u.content == self.text]
        return said[0] if said else max(u.occurred_at for u in self.entries)

    @property
    def first_seen(self) -> float:
        return min(e.occurred_at.timestamp() for e in self.entries)

    @property
    def last_seen(self) -> float:
        return max(e.occurred_at.timestamp() for e in self.entries)


def _alone(units: list[Unit]) -> list[bool]:
    """Which statements stand on their own (a pinned entry's always does)."""
    readings = standalone.read([u.content for u in units])
    return [u.pinned or not r.unresolved for u, r in zip(units, readings, strict=True)]


def _told(units: list[Unit]) -> bool:
    """Whether the user told an assistant something lasting in one of them (parsed
    only for the statements the user said)."""
    # A statement with a redacted part is not kept on its word alone: what it
    # said was withheld ("You can reach me at [REDACTED:email]").
    told = [u for u in units if u.told and not MARK.search(u.content)]
    return bool(told) and any(r.lasting for r in standalone.read([u.content for u in told]))


def find_candidates(inputs: Inputs, plan: Plan, judge: Judge) -> list[Candidate]:
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
        progress.report("pairing", 0, len(a))  # the pairs' vectors: seconds at 10,000 entries
        # The judge reads a pair earlier statement first (a < b on ties).
        first = when[a] <= when[b]
        early, late = np.where(first, a, b), np.where(first, b, a)
        sims = pair_cosines(vectors, a, b)
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
        return np.where(same | unsure, JOIN, alike).astype(np.int8)

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
        progress.report("candidates", n, len(clusters))
        group = [units[i] for i in members]
        texts = [u.content for u in group]
        topics = [u.topic for u in group]
        if noise and briefs_mod.any_match(
            noise, texts, topics, vectors[members], cfg.cluster_threshold
        ):
            skipped += 1
            continue
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
        elif (
            cfg.promote_min_importance is not None
            and (weight := highest(u.importance for u in group) or 0.0)
            >= cfg.promote_min_importance
        ):
            # What its writer marked important need not recur (DESIGN.md).
            gate = f"importance {weight:g}"
        elif cfg.promote_told and _told(group):
            gate = "the user told it to the assistant"
        # A statement that does not stand alone counts as evidence but is
        # not the fact's text while one that does is in the cluster. Read
        # only where a fact may be made now: the parse is the run's dearest
        # step per statement (docs/benchmarks.md).
        alone = None
        if gate is not None and len(members) > 1:
            ok = _alone(group)
            alone = [i for i, a in zip(members, ok, strict=True) if a] if any(ok) else None
        rep = medoid(vectors, members, alone)
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
