"""The session-start block (pure): what `/context` returns, budgeted in tokens for a system prompt.

The service fetches; this module only chooses, orders and renders. In order
of precedence, because an agent can act on the first and only look up the
last:

1. open loops that are due: a ``session`` trigger, a ``time`` trigger whose
   time has passed, or a ``topic`` trigger whose topic words appear in the
   query (expired loops are never due);
2. recalls for the query (already ranked by ``halls.recall``);
3. active long-term facts by category (decisions, preferences, procedures,
   plans, people, then other facts: what changes how an agent acts first),
   then by value = evidence x recency x importance, the factors that weigh
   a fact in search, so "important" means one thing everywhere.

Before that, ``cool`` sets aside what belongs to a closed work scope
(``halls.scopes``): such facts and loops are left out, and a query's
recalls of one go after every other recall; the session's own scope, when
given, comes first among the recalls and among the facts.

When the budget cannot hold everything, what its writer marked at least
``high`` (``halls.importance``) is chosen first, whatever its section; the
rest then fill what is left in the order above. The block still renders in
that order.

Items are deduplicated by id and by normalised text, long items are
shortened, and the block never exceeds ``budget_tokens`` as counted by
``count_tokens``: the embedding model's own tokenizer when it has one, else
an estimate of one token per four characters (about right for English with
GPT-style and WordPiece vocabularies, and an over-count for most code, which
errs on the safe side).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from halls.config import RecallSettings
from halls.errors import InvalidInput
from halls.importance import PREFERRED, rank_factor
from halls.models import CATEGORIES, Hit, LongFact, OpenLoop, parse_time
from halls.recall.rank import recency, tier_weight
from halls.recall.text import query_terms
from halls.scopes import is_cold
from halls.service.notation import VERBOSE_HEADER, Format, notation

MIN_BUDGET = 50
MAX_BUDGET = 8000
DEFAULT_BUDGET = 400
# A single memory may be 32k characters; in a context block it is a pointer,
# and `recall` fetches the whole thing.
MAX_ITEM_CHARS = 300
CHARS_PER_TOKEN = 4

HEADER = VERBOSE_HEADER

TokenCounter = Callable[[str], int]


class ContextBlock(BaseModel):
    """The rendered block, the ids of the records it shows, and its token count."""

    text: str
    ids: list[str]
    tokens: int


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def token_counter(tokenizer: Any | None) -> TokenCounter:
    """Count with a Hugging Face tokenizer (no special tokens), or estimate."""
    if tokenizer is None or not hasattr(tokenizer, "encode"):
        return estimate_tokens

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False)) if text else 0

    return count


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _short(text: str) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= MAX_ITEM_CHARS else flat[: MAX_ITEM_CHARS - 1].rstrip() + "…"


def loop_due(loop: OpenLoop, now: float, terms: set[str]) -> tuple[float, str] | None:
    """When the loop became due (for ordering) and why, or None if it is not due.

    ``terms`` are the query's (and the session's project's) words: a topic
    trigger fires only when every one of its words is among them.
    """
    if loop.status != "open":
        return None
    if loop.expires_at is not None and loop.expires_at.timestamp() <= now:
        return None
    if loop.trigger_type == "session":
        return loop.created_at.timestamp(), "raised at the start of a session"
    if loop.trigger_type == "time":
        try:
            due = parse_time(loop.trigger_value, "trigger_value")
        except InvalidInput:
            return None
        if due is None or due > now:
            return None
        return due, f"its time came ({loop.trigger_value})"
    if loop.trigger_type == "topic":
        words = set(query_terms(loop.trigger_value or loop.topic or ""))
        if not words or not words <= terms:
            return None
        return loop.created_at.timestamp(), f"the topic came up ({', '.join(sorted(words))})"
    return None


def due_loops(loops: Sequence[OpenLoop], now: float, query: str | None) -> list[OpenLoop]:
    return [loop for loop, _ in explain_due(loops, now, query)]


def explain_due(
    loops: Sequence[OpenLoop], now: float, query: str | None
) -> list[tuple[OpenLoop, str]]:
    """The loops due now with the reason each is, oldest due first."""
    terms = set(query_terms(query or ""))
    due = [(d, loop) for loop in loops if (d := loop_due(loop, now, terms)) is not None]
    due.sort(key=lambda pair: (pair[0][0], pair[1].id))
    return [(loop, d[1]) for d, loop in due]


def fact_value(fact: LongFact, now: float, cfg: RecallSettings) -> float:
    _, evidence = tier_weight(fact, cfg)
    return evidence * recency(fact, now, cfg) * rank_factor(fact.importance, cfg.importance_weight)


def cool(
    facts: Sequence[LongFact],
    loops: Sequence[OpenLoop],
    hits: Sequence[Hit],
    open_scopes: set[str],
    scope: str | None = None,
    *,
    keep_cold_hits: bool = False,
) -> tuple[list[LongFact], list[OpenLoop], list[Hit]]:
    """Facts, loops and hits without those of scopes that are not open; with
    ``keep_cold_hits`` (a query asked for them) such hits stay, after the rest.
    Hits of ``scope`` go first (a stable sort: the rest keep their rank);
    ``rank_facts`` puts its facts first."""
    warm = [h for h in hits if not is_cold(h.scope, open_scopes)]
    cold = [h for h in hits if is_cold(h.scope, open_scopes)] if keep_cold_hits else []
    return (
        [f for f in facts if not is_cold(f.scope, open_scopes)],
        [x for x in loops if not is_cold(x.scope, open_scopes)],
        sorted(warm, key=lambda h: scope is not None and h.scope != scope) + cold,
    )


def rank_facts(
    facts: Sequence[LongFact], now: float, cfg: RecallSettings, scope: str | None = None
) -> list[LongFact]:
    """Active facts, those of ``scope`` (the session's work) first, then by category
    (``CATEGORIES`` order: decisions, preferences and procedures change how an
    agent acts, so they fill a small budget first), then by value; a fact without
    a category comes with plain facts."""
    active = [f for f in facts if f.status == "active"]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    last = order["fact"]
    return sorted(
        active,
        key=lambda f: (
            scope is not None and f.scope != scope,
            order.get(f.category or "fact", last),
            -fact_value(f, now, cfg),
            f.id,
        ),
    )


def assemble(
    *,
    facts: Sequence[LongFact],
    loops: Sequence[OpenLoop],
    hits: Sequence[Hit],
    now: float,
    query: str | None,
    budget_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    cfg: RecallSettings | None = None,
    format: Format = "verbose",
    hot: bool = False,
    scope: str | None = None,
) -> ContextBlock:
    """Choose, order and render; the result never counts more than the budget.

    With ``hot``, ``facts`` are the hot set (``halls.service.hot``): they are
    chosen before the recalls (after the due loops), so that a query's hits
    fill what the hot set leaves rather than push it out.
    """
    cfg = cfg or RecallSettings()
    style = notation(format)
    # (section, id, line, dedup key, importance)
    listed: list[tuple[str, str, str, str, float | None]] = []
    for loop in due_loops(loops, now, query):
        text = _short(loop.intent)
        line = style.item(text, loop_id=loop.id)
        listed.append(("loops", loop.id, line, _norm(text), loop.importance))
    hit_items = []
    for hit in hits:
        text = _short(hit.content)
        hit_items.append(("recalls", hit.id, style.item(text), _norm(text), hit.importance))
    fact_items = []
    for fact in rank_facts(facts, now, cfg, scope):
        text = _short(fact.content)
        section = style.section("facts", fact.category or "fact")
        fact_items.append((section, fact.id, style.item(text), _norm(text), fact.importance))
    listed += fact_items + hit_items if hot else hit_items + fact_items
    # Where each item goes in the block: sections in the notation's order.
    order = {section: i for i, section in enumerate(style.sections)}
    place = sorted(range(len(listed)), key=lambda n: (order[listed[n][0]], n))
    at = {n: i for i, n in enumerate(place)}
    # (place in the block, section, id, line, key), the important first: a
    # stable sort, so each part keeps the order above.
    candidates = [
        (at[n], section, item_id, line, key)
        for n, (section, item_id, line, key, importance) in sorted(
            enumerate(listed), key=lambda pair: not _preferred(pair[1][4])
        )
    ]

    # Each line is counted with its newline; the final check below makes the
    # budget hold even for a tokenizer that does not add up line by line.
    def cost(line: str) -> int:
        return count_tokens(line + "\n")

    used = cost(style.header)
    if used > budget_tokens:
        return ContextBlock(text="", ids=[], tokens=0)
    seen_ids: set[str] = set()
    seen_text: set[str] = set()
    chosen: list[tuple[int, str, str, str]] = []
    opened: set[str] = set()
    for where, section, item_id, line, key in candidates:
        if item_id in seen_ids or key in seen_text:
            continue
        extra = cost(line) + (0 if section in opened else cost(style.sections[section]))
        if used + extra > budget_tokens:
            continue
        used += extra
        opened.add(section)
        seen_ids.add(item_id)
        seen_text.add(key)
        chosen.append((where, section, item_id, line))

    while chosen:
        # Shown in section order; dropped (below) last chosen first.
        shown = [c[1:] for c in sorted(chosen)]
        text = style.render([(sec, line) for sec, _, line in shown])
        tokens = count_tokens(text)
        if tokens <= budget_tokens:
            return ContextBlock(text=text, ids=[c[1] for c in shown], tokens=tokens)
        chosen.pop()
    return ContextBlock(text="", ids=[], tokens=0)


def _preferred(importance: float | None) -> bool:
    return importance is not None and importance >= PREFERRED


__all__ = [
    "DEFAULT_BUDGET",
    "MAX_BUDGET",
    "MIN_BUDGET",
    "ContextBlock",
    "assemble",
    "cool",
    "due_loops",
    "estimate_tokens",
    "explain_due",
    "rank_facts",
    "token_counter",
]
