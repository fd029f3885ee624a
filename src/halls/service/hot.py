"""The hot set (pure): the long-term facts every session block shows, within a token budget.

A store's active facts are ranked as the session block ranks them (what its
writer marked at least ``high`` first, then by category, then by value:
evidence x recency x importance) and taken in that order while they fit a
block of ``context.hot_tokens`` tokens, its header and headings counted:
that is the hot set, which ``/context`` (and so the SessionStart hook)
always shows, after the due loops and before any recall. Every other active
fact is cold: out of the block, and found by a search (``recall``) when
asked for.

The set is chosen again at each call, not stored: a fact a run adds or
confirms goes hot when it ranks high enough, and one that stops fitting goes
cold with nothing to undo. When the facts need more than the budget (their
``pressure`` above 1), what stops fitting is the bottom of that ranking: the
least confirmed and least recently confirmed facts of the least pressing
categories, so the oldest cool first. The other actions of the design's
pressure levels (merging facts that share a target at 70%, cooling the
facts of closed scopes at 85%) are not built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from halls.config import RecallSettings
from halls.models import Hit, LongFact, OpenLoop
from halls.service.notation import Format
from halls.service.session import ContextBlock, TokenCounter, assemble

# What the whole of a store's facts would take is counted up to this: past
# it the pressure is "far over" whatever its exact value.
DEMAND_CAP = 1_000_000


@dataclass(frozen=True)
class HotSet:
    """The hot facts (in the block's order), their block's tokens, and what all would take."""

    facts: list[LongFact]
    tokens: int
    demand_tokens: int
    active: int

    @property
    def cold(self) -> int:
        return self.active - len(self.facts)


def hot_set(
    facts: Sequence[LongFact],
    *,
    now: float,
    budget_tokens: int,
    count_tokens: TokenCounter,
    cfg: RecallSettings,
    format: Format = "verbose",
    demand: bool = False,
    scope: str | None = None,
) -> HotSet:
    """The hot set of ``facts`` in ``format``; with ``demand``, also what all active ones need."""
    active = [f for f in facts if f.status == "active"]
    block = assemble(
        facts=active,
        loops=[],
        hits=[],
        now=now,
        query=None,
        budget_tokens=budget_tokens,
        count_tokens=count_tokens,
        cfg=cfg,
        format=format,
        scope=scope,
    )
    by_id = {f.id: f for f in active}
    needed = 0
    if demand and active:
        needed = assemble(
            facts=active,
            loops=[],
            hits=[],
            now=now,
            query=None,
            budget_tokens=DEMAND_CAP,
            count_tokens=count_tokens,
            cfg=cfg,
            format=format,
        ).tokens
    return HotSet(
        facts=[by_id[i] for i in block.ids],
        tokens=block.tokens,
        demand_tokens=needed,
        active=len(active),
    )


def hot_block(
    *,
    facts: Sequence[LongFact],
    loops: Sequence[OpenLoop],
    hits: Sequence[Hit],
    now: float,
    query: str | None,
    budget_tokens: int,
    hot_tokens: int,
    count_tokens: TokenCounter,
    cfg: RecallSettings,
    format: Format = "verbose",
    scope: str | None = None,
) -> ContextBlock:
    """The session block: due loops, the hot set of ``facts`` (within ``hot_tokens`` and the
    block's own budget), then ``hits`` in what is left."""
    hot = hot_set(
        facts,
        now=now,
        budget_tokens=min(hot_tokens, budget_tokens),
        count_tokens=count_tokens,
        cfg=cfg,
        format=format,
        scope=scope,
    )
    return assemble(
        facts=hot.facts,
        loops=loops,
        hits=hits,
        now=now,
        query=query,
        budget_tokens=budget_tokens,
        count_tokens=count_tokens,
        cfg=cfg,
        format=format,
        hot=True,
        scope=scope,
    )


def hot_stats(
    facts: Sequence[LongFact],
    *,
    now: float,
    budget_tokens: int,
    count_tokens: TokenCounter,
    cfg: RecallSettings,
) -> dict[str, Any]:
    """``/stats``' ``hot``: the budget, and in each format the hot set's size and pressure."""
    out: dict[str, Any] = {"budget_tokens": budget_tokens}
    formats: tuple[Format, ...] = ("verbose", "terse")
    for fmt in formats:
        hs = hot_set(
            facts,
            now=now,
            budget_tokens=budget_tokens,
            count_tokens=count_tokens,
            cfg=cfg,
            format=fmt,
            demand=True,
        )
        out["active_facts"] = hs.active
        out[fmt] = {
            "facts": len(hs.facts),
            "cold": hs.cold,
            "tokens": hs.tokens,
            "demand_tokens": hs.demand_tokens,
            "pressure": round(hs.demand_tokens / budget_tokens, 3) if budget_tokens else None,
        }
    return out


__all__ = ["HotSet", "hot_block", "hot_set", "hot_stats"]
