"""Spreading activation over the association graph (pure).

The best hits of a search pass part of their relevance on to the memories
they are associated with, as in the spreading-activation models of memory
(Collins and Loftus 1975; Anderson's ACT-R): a hit about Oliver the dog
lifts the other memories that name Oliver, whether or not they share a
word with the query. The graph's edges (``Store.adjacent``) link a memory
to *hubs* — a name it mentions (``halls.recall.entities``), the journal
event or entry a fact was distilled from (``derived_from``) — or directly
to another memory (``co_recall``: returned together near the top of a
search). Activation flows seed -> hub -> the hub's other memories, or
seed -> memory along a direct edge.

How much flows is ACT-R's fan effect, S - ln(fan): the more memories a
node links, the less it says about any one of them. Scaled to [0, 1] with
``graph_fan_out`` as the point where it reaches zero,

    fan(n) = 1 - ln(n) / ln(graph_fan_out + 1)

where n is the branching node's degree on that kind of edge (a name
shared by 2 memories passes 0.77 of a seed's activation, by 5: 0.47, by
20: 0.02); a node with more than ``graph_fan_out`` edges of a kind passes
nothing, and the store reads at most ``graph_fan_out + 1`` of them — that is
the fan-out bound. A seed's activation is its relevance (fused, with
feedback; no bonus), each later hop spreads from the ``graph_seeds`` most
activated memories of the hop before, a path's strength is the product of
its steps, and a memory keeps its best path:

    association(r) = max over paths s ~> r of  relevance(s) x product of fan(n)

``halls.recall.rank`` adds ``graph_weight`` x association to the score, as
``score_detail["association"]``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping

from halls.config import RecallSettings
from halls.models import ID_PREFIX, Edge
from halls.recall.fusion import Signals

# Memories found only through the graph are scored (their cosine read) up to
# this many per search, the most activated first: the cost of a search stays
# bounded whatever the fan-out reached.
MAX_NEW = 50
_RECORDS = tuple(f"{ID_PREFIX[t]}_" for t in ("short", "near", "long"))


def is_record(node: str) -> bool:
    """A searchable record (short entry, open loop, fact), not a hub."""
    return node.startswith(_RECORDS)


def fan(degree: int, fan_out: int) -> float:
    """The share of activation a node of ``degree`` edges passes along each."""
    if degree <= 1:
        return 1.0
    if degree > fan_out:
        return 0.0
    return max(0.0, 1.0 - math.log(degree) / math.log(fan_out + 1))


def seeds(found: Mapping[str, Signals], bonus: Mapping[str, float], n: int) -> dict[str, float]:
    """The ``n`` best records (total plus neighbour bonuses, ties by id): their relevance."""
    # Keys built in one pass (no key function called per record): hundreds are found.
    keyed = [(-(s.relevance + s.feedback + bonus.get(i, 0.0)), i) for i, s in found.items()]
    best = [i for _, i in heapq.nsmallest(n, keyed)]
    return {i: found[i].total for i in best if found[i].total > 0}


def _by_node(nodes: Iterable[str], edges: Iterable[Edge]) -> dict[str, dict[str, list[str]]]:
    """node -> kind -> the other ends of its edges."""
    wanted = set(nodes)
    out: dict[str, dict[str, list[str]]] = {}
    for e in edges:
        for here, there in ((e.src, e.dst), (e.dst, e.src)):
            if here in wanted:
                out.setdefault(here, {}).setdefault(e.kind, []).append(there)
    return out


def step_out(
    frontier: Mapping[str, float], edges: Iterable[Edge], cfg: RecallSettings
) -> tuple[dict[str, float], dict[str, tuple[float, str]]]:
    """From the frontier's own edges: (memories reached directly, hubs reached).

    A hub keeps its best activation and the memory it came from, so that a
    memory does not activate itself through a name it mentions.
    """
    direct: dict[str, float] = {}
    hubs: dict[str, tuple[float, str]] = {}
    for node, kinds in _by_node(frontier, edges).items():
        a = frontier[node]
        for others in kinds.values():
            share = fan(len(others), cfg.graph_fan_out)
            for other in others:
                if is_record(other):
                    if share > 0 and a * share > direct.get(other, 0.0):
                        direct[other] = a * share
                elif a > hubs.get(other, (0.0, ""))[0]:
                    hubs[other] = (a, node)
    return direct, hubs


def step_in(
    hubs: Mapping[str, tuple[float, str]], edges: Iterable[Edge], cfg: RecallSettings
) -> dict[str, float]:
    """The memories the hubs link, each with its best activation through one."""
    out: dict[str, float] = {}
    for hub, kinds in _by_node(hubs, edges).items():
        a, source = hubs[hub]
        for others in kinds.values():
            share = fan(len(others), cfg.graph_fan_out)
            if share <= 0:
                continue
            for other in others:
                if other != source and is_record(other) and a * share > out.get(other, 0.0):
                    out[other] = a * share
    return out


def merge(*parts: Mapping[str, float]) -> dict[str, float]:
    """Per memory, its best activation among ``parts``."""
    out: dict[str, float] = {}
    for part in parts:
        for i, a in part.items():
            if a > out.get(i, 0.0):
                out[i] = a
    return out


def next_frontier(reached: Mapping[str, float], done: Iterable[str], n: int) -> dict[str, float]:
    """The ``n`` most activated memories not spread from yet (ties by id)."""
    skip = set(done)
    best = sorted((i for i in reached if i not in skip), key=lambda i: (-reached[i], i))[:n]
    return {i: reached[i] for i in best}


def unscored(found: Mapping[str, Signals], reached: Mapping[str, float]) -> list[str]:
    """The memories reached that no search found, the ``MAX_NEW`` most activated."""
    new = [i for i in reached if i not in found]
    return sorted(new, key=lambda i: (-reached[i], i))[:MAX_NEW]


def bonuses(
    found: Mapping[str, Signals], reached: Mapping[str, float], cfg: RecallSettings
) -> dict[str, float]:
    """``graph_weight`` x association, for every candidate reached."""
    return {i: cfg.graph_weight * a for i, a in reached.items() if i in found and a > 0}
