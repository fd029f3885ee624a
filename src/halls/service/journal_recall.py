"""The journal in a search: its own full-text pass, merged with the other tiers' hits.

``halls.service.recall.search`` runs the searchable tiers' pipeline and,
when the journal is asked for, this pass beside it: one full-text fetch
(``Store.journal_search``), one read of the best events, one embedding of
them with the query (the journal keeps no vectors: appends stay cheap),
then the pure steps of ``halls.recall`` (fusion, ``journal.candidates``,
rank, relevance). Its hits carry this pass's own relevance figure.
"""

from __future__ import annotations

import numpy as np

from halls.config import RecallSettings
from halls.embed import Embedder
from halls.models import Hit, JournalEvent, Match, SearchFilter
from halls.recall import journal, query_terms, rank, relevance
from halls.recall.fusion import Normaliser, fuse, signals
from halls.store.base import Store

# Events read and embedded per search, at least: embedding is the cost of a
# journal search, so only the best by BM25 are; the rest cannot rank.
READ_AT_LEAST = 10


def search(
    s: Store,
    embedder: Embedder,
    cfg: RecallSettings,
    query: str,
    filt: SearchFilter,
    n_results: int,
    retriever: str,
    now: float,
) -> list[Hit]:
    """The ``n_results`` best journal hits for ``query`` (none with the dense retriever)."""
    # Found by its words only: no vector to search; events have no category.
    if retriever == "dense" or filt.category is not None:
        return []
    terms = query_terms(query)
    if not terms:
        return []
    matches = s.journal_search(terms, filt, max(cfg.candidates, n_results))
    events: dict[str, JournalEvent] = {}
    for m in matches[: max(2 * n_results, READ_AT_LEAST)]:
        event = s.get_journal(m.id)
        if event is not None and event.visibility != "private":
            events[m.id] = event
    if not events:
        return []
    dense: list[Match] = []
    if retriever != "bm25":
        ids = list(events)
        vectors = embedder.embed([query, *(events[i].content for i in ids)])
        cosines = (np.asarray(vectors[1:]) @ np.asarray(vectors[0])).tolist()
        dense = sorted(
            (Match(i, "journal", c) for i, c in zip(ids, cosines, strict=True)),
            key=lambda m: (-m.score, m.id),
        )
    norm = Normaliser(matches, dense, cfg)
    found = fuse(signals(matches, dense), norm, cfg)
    hits = rank(journal.candidates(found, events), now, cfg, n_results)
    judged = relevance.applies(embedder.name, retriever)
    return relevance.scored(hits, norm.best_cosine, norm.best_bm25, judged)
