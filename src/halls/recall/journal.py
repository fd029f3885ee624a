"""The journal tier in recall (pure): what a hit on an event shows, and its candidates.

The journal is searched only when a search names it (``tiers: ["journal"]``),
by full text over its own index (``Store.journal_search``); the events it
finds are read and embedded at query time (the journal keeps no vectors),
so that each gets a cosine beside its BM25 and is fused, weighed and
explained as any other hit (``halls.recall.fusion``, ``halls.recall.rank``).

Visibility, set per event on append:

- ``full``: the hit shows the event as stored (redacted on ingest);
- ``summary``: the hit shows only ``summary_line`` (who, which session, how
  long) and no metadata. The event is still found by its words: a hit
  confirms an event about the query happened, without saying what it said.
- ``private``: never indexed, never a hit, whatever the query.
"""

from __future__ import annotations

from collections.abc import Mapping

from halls.models import JournalEvent
from halls.recall.fusion import Signals
from halls.recall.rank import Candidate


def summary_line(event: JournalEvent) -> str:
    """The redacted line a ``summary`` event shows: no word of its content."""
    who = f"{event.role} event" if event.role else "event"
    where = f" in session {event.session_id}" if event.session_id else ""
    words = len(event.content.split())
    return f"[summary] {who}{where}: content withheld ({words} words)"


def shown(event: JournalEvent) -> JournalEvent:
    """The event as a search hit may show it (``private``: callers never get here)."""
    if event.visibility == "full":
        return event
    return event.model_copy(update={"content": summary_line(event), "metadata": {}})


def candidates(found: Mapping[str, Signals], events: Mapping[str, JournalEvent]) -> list[Candidate]:
    """A candidate per event read, as shown, with its fused signals."""
    out = []
    for i, event in events.items():
        sig = found.get(i)
        if sig is None or event.visibility == "private":
            continue
        out.append(
            Candidate(
                record=shown(event),
                bm25_rank=sig.bm25_rank,
                bm25=sig.bm25,
                dense_rank=sig.dense_rank,
                cosine=sig.cosine,
                relevance=sig.relevance,
            )
        )
    return out
