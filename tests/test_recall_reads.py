"""The shortcuts of the weigh stage give the same hits as doing all the work.

- The shortlist is read in two goes (``weigh.first_reads``, then
  ``weigh.worth_reading`` once the first scores set a bar): the hits must be
  those of reading and ranking every shortlisted record.
- The neighbour and episode bonuses are computed in numpy: they must be the
  floats of the plain loop over each record's neighbours, kept here as the
  specification.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from halls.config import RecallSettings
from halls.models import Hit, LongFact, OpenLoop, Record, ShortEntry, new_id
from halls.recall import rank, weigh
from halls.recall.fusion import Signals
from halls.recall.neighbours import Boost, Placed, boosts
from halls.recall.rank import merge

NOW = 1_800_000_000.0
DAY = 86400.0
WORDS = ["coffee", "garden", "Caroline", "Melanie", "adoption", "painting", "last", "May"]
WORDS += ["yesterday", "concert"]
QUERIES = [
    "what did Caroline say about the garden",
    "when did Melanie go to the concert",
    "coffee in May 2023",
    "what is it about",
]


Case = tuple[dict[str, Signals], dict[str, Boost], dict[str, float], dict[str, Record]]


def _at(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def _record(rng: random.Random) -> Record:
    kind = rng.choice(["short", "short", "short", "near", "long"])
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30)))
    if rng.random() < 0.5:
        text = f"{rng.choice(['Caroline', 'Melanie', 'user'])}: {text}"
    if rng.random() < 0.2:
        text += "?"
    when = _at(NOW - rng.uniform(0, 400) * DAY)
    if kind == "short":
        return ShortEntry(
            id=new_id("short"),
            content=text,
            pinned=rng.random() < 0.1,
            created_at=when,
            occurred_at=when,
        )
    if kind == "near":
        return OpenLoop(id=new_id("near"), intent=text, created_at=when, occurred_at=when)
    return LongFact(
        id=new_id("long"),
        content=text,
        evidence_count=rng.randint(1, 12),
        first_seen=when,
        last_confirmed=when,
        status=rng.choice(["active", "active", "demoted", "superseded"]),
        created_at=when,
        occurred_at=when,
    )


def _case(rng: random.Random) -> Case:
    records = {r.id: r for r in (_record(rng) for _ in range(rng.randint(1, 120)))}
    found, boost, linked = {}, {}, {}
    for i in records:
        relevance = rng.choice([rng.random(), 0.5, 0.25])  # repeated values make ties
        found[i] = Signals(cosine=relevance, relevance=relevance, feedback=rng.choice([0.0, 0.1]))
        if rng.random() < 0.5:
            boost[i] = Boost(rng.choice([0.0, 0.1, 0.2]), rng.choice([0.0, 0.15]))
        if rng.random() < 0.2:
            linked[i] = rng.choice([0.05, 0.2])
    return found, boost, linked, records


def _ranked(
    case: Case, ids: list[str], query: str, cfg: RecallSettings, n: int, full: bool
) -> list[Hit]:
    found, boost, linked, records = case
    read = {i: records[i] for i in ids}
    cands = weigh.candidates(found, boost, read, query, cfg, full, {}, linked)
    return rank(cands, NOW, cfg, n, substance=full)


def test_two_reads_give_the_hits_of_reading_the_whole_shortlist() -> None:
    """Over random stores of every tier, both engines' bonuses and ties, the same hits."""
    rng = random.Random(11)
    skipped = 0
    for k in range(300):
        case = _case(rng)
        found, boost, linked, _ = case
        query, n, full = rng.choice(QUERIES), rng.choice([1, 5, 10]), k % 4 != 0
        cfg = RecallSettings(weigh_candidates=rng.choice([10, 50, 100]))
        best = weigh.shortlist(found, boost, cfg.weigh_candidates, linked)
        everything = _ranked(case, best, query, cfg, n, full)
        reach = weigh.reach(found, boost, best, query, cfg, full, linked)
        first = weigh.first_reads(best, reach, n)
        hits = _ranked(case, first, query, cfg, n, full)
        rest = weigh.worth_reading(best, first, reach, hits, n)
        if rest:
            hits = merge(hits, _ranked(case, rest, query, cfg, n, full), n)
        skipped += len(best) - len(first) - len(rest)
        assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in everything]
        assert [h.score_detail for h in hits] == [h.score_detail for h in everything]
    assert skipped > 0  # the bound did rule records out


def test_a_fact_is_always_read_first() -> None:
    """A fact's evidence has no upper bound: nothing read can rule it out."""
    rng = random.Random(3)
    found, boost, linked, records = _case(rng)
    cfg = RecallSettings()
    best = weigh.shortlist(found, boost, 100, linked)
    reach = weigh.reach(found, boost, best, "coffee", cfg, True, linked)
    first = weigh.first_reads(best, reach, 1)
    facts = [i for i in best if isinstance(records[i], LongFact)]
    assert facts and set(facts) <= set(first)
    assert all(reach[i] == float("inf") for i in facts)


def _boosts_by_loop(
    relevance: dict[str, float], placed: list[Placed], cfg: RecallSettings
) -> dict[str, Boost]:
    """The specification: each record's neighbours, one by one."""
    gap, out = cfg.episode_gap_seconds, {}
    for p in placed:
        tier = [q for q in placed if q.tier == p.tier]
        best = 0.0
        for q in tier:
            distance = abs(q.seq - p.seq)
            if 0 < distance <= cfg.context_radius and abs(q.occurred_at - p.occurred_at) <= gap:
                best = max(best, relevance.get(q.id, 0.0) / distance)
        chain = sorted(tier, key=lambda q: (q.occurred_at, q.seq))
        groups: list[list[Placed]] = [[chain[0]]]
        for a, b in zip(chain, chain[1:], strict=False):
            groups.append([b]) if b.occurred_at - a.occurred_at > gap else groups[-1].append(b)
        episode = max(
            max(relevance.get(q.id, 0.0) for q in g) for g in groups if any(q is p for q in g)
        )
        out[p.id] = Boost(cfg.context_weight * best, cfg.episode_weight * episode)
    return out


def test_neighbour_bonuses_are_the_floats_of_the_plain_loop() -> None:
    rng = random.Random(5)
    for _ in range(200):
        cfg = RecallSettings(
            context_radius=rng.randint(0, 4), episode_gap_seconds=rng.choice([0.0, 60.0, 1800.0])
        )
        seqs = rng.sample(range(1, 80), rng.randint(1, 40))
        placed = [
            Placed(f"r{k}", rng.choice(["short", "near", "long"]), s, rng.choice([0.0, 30.0]) + s)
            for k, s in enumerate(seqs)
        ]
        relevance = {p.id: rng.random() for p in placed if rng.random() < 0.8}
        assert boosts(relevance, placed, cfg) == _boosts_by_loop(relevance, placed, cfg)
