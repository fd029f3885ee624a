"""How a candidate reconciles with the facts near it: one answer from its readings.

The judge reads every distinct statement of a cluster (at most ``READINGS``,
and the brief hint that gates it) against each fact near any of them;
``_close`` reads an unsure "unrelated" this close as clustering does, and
``_consensus`` makes the readings of one fact one answer, which
``reconcile.decide`` turns into a decision.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from halls.config import ConsolidatorSettings
from halls.consolidate.candidates import UNSURE, Candidate
from halls.consolidate.judge import LABELS, SAME, UNRELATED, Judge, Judgement, Label, Pair
from halls.consolidate.reconcile import Decision, Known, decide

READINGS = 8  # distinct statements of a cluster the judge reads against each fact


def reconcile(
    judge: Judge, cfg: ConsolidatorSettings, cand: Candidate, known: list[Known]
) -> Decision:
    """The decision for ``cand`` among the ``known`` facts nearest it."""
    said = _statements(cand)
    # A fact is related when any reading is near it, not the representative alone.
    near = [(k, [_near(k, v) for _, v in said]) for k in known]
    related = [(k, sims) for k, sims in near if max(sims) >= cfg.related_threshold]
    got = judge.judge([Pair(k.text, t, k.vector, v) for k, _ in related for t, v in said])
    # Which phrasings say a word of addition ("too", "besides") and nothing
    # ended, and whether any says a change: pair facts the judge read.
    adds = [j.marks_addition for j in got[: len(said)]]
    judged = []
    for n, (k, sims) in enumerate(related):
        part = got[n * len(said) : (n + 1) * len(said)]
        close = [
            _close(j, sim, cfg.cluster_threshold, j.values_differ)
            for j, sim in zip(part, sims, strict=True)
        ]
        judged.append((k, _consensus(close, adds)))
    marked = any(j.marks_change for j in got)
    return decide(known, judged, marked)


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
