"""The search pipeline: the store's two primitive searches, fused and weighed.

``Memory.search`` validates the request; this module runs it against one
store. The arithmetic lives in the pure ``halls.recall`` modules; here they
are composed with the store's I/O (full text, vectors, neighbours, records).
"""

from __future__ import annotations

import numpy as np

from halls.config import RecallSettings
from halls.embed import Embedder
from halls.models import Hit, SearchFilter
from halls.recall import Candidate, query_terms, rank
from halls.recall.context import Boost, Placed, boosts, query_words, speaker_bonus
from halls.recall.fusion import Normaliser, Signals, fuse, signals
from halls.recall.when import time_bonus, windows
from halls.store.base import Match, Store


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
    """Ranked hits for ``query`` in store ``s``; ``retriever`` picks the mode."""
    pool = max(cfg.candidates, n_results)
    text_hits = s.text_search(query_terms(query), filt, pool) if retriever != "dense" else []
    vector = embedder.embed([query])[0] if retriever != "bm25" else np.zeros(0, np.float32)
    dense_hits = s.vector_search(vector, filt, pool) if retriever != "bm25" else []
    found = signals(text_hits, dense_hits)
    if cfg.fusion == "score" and text_hits and dense_hits:
        missing = [i for i, sig in found.items() if sig.cosine is None]
        filled = s.around(missing, 0, filt)
        if filled:
            cosines = np.stack([w.vector for w in filled]) @ vector
            for w, cosine in zip(filled, cosines.tolist(), strict=True):
                found[w.id].cosine = cosine
    fuse(found, text_hits, dense_hits, cfg)
    boost: dict[str, Boost] = {}
    if retriever == "full" and (cfg.context_weight > 0 or cfg.episode_weight > 0):
        boost = _context(s, cfg, found, text_hits, dense_hits, vector, filt)
    # Tier, evidence and recency weigh within about x0.6..x2, so only the
    # best few by relevance can reach the top n: read and weigh just those.
    bonus = {i: b.context + b.episode for i, b in boost.items()}
    best = sorted(found, key=lambda i: (-(found[i].relevance + bonus.get(i, 0.0)), i))
    records = s.get_records(best[: max(3 * n_results, cfg.weigh_candidates)])
    full = retriever == "full"
    said = query_words(query)
    named = windows(query) if full else []
    candidates = [
        Candidate(
            record=records[i],
            bm25_rank=sig.bm25_rank,
            bm25=sig.bm25,
            dense_rank=sig.dense_rank,
            cosine=sig.cosine,
            relevance=sig.relevance,
            context=boost[i].context if i in boost else 0.0,
            episode=boost[i].episode if i in boost else 0.0,
            speaker=speaker_bonus(getattr(records[i], "content", ""), said, cfg) if full else 0,
            time=time_bonus(records[i].occurred_at.timestamp(), named, cfg) if named else 0,
        )
        for i, sig in found.items()
        if i in records
    ]
    return rank(candidates, now, cfg, n_results)


def _context(
    s: Store,
    cfg: RecallSettings,
    found: dict[str, Signals],
    text_hits: list[Match],
    dense_hits: list[Match],
    vector: np.ndarray,
    filt: SearchFilter,
) -> dict[str, Boost]:
    """Context and episode bonuses; the best hits' neighbours join ``found``."""
    best = sorted(found, key=lambda i: (-found[i].relevance, i))[: cfg.context_candidates]
    written = s.around(best, cfg.context_radius, filt)
    norm = Normaliser(text_hits, dense_hits, cfg) if cfg.fusion == "score" else None
    new = [w for w in written if w.id not in found]
    if new and norm is not None and norm.use_dense:
        cosines = np.stack([w.vector for w in new]) @ vector
        for w, cosine in zip(new, cosines.tolist(), strict=True):
            found[w.id] = Signals(cosine=cosine, relevance=norm.relevance(None, cosine))
    placed = [Placed(w.id, w.tier, w.position, w.occurred_at) for w in written]
    return boosts({i: sig.relevance for i, sig in found.items()}, placed, cfg)
