"""The search pipeline: the store's two primitive searches, fused and weighed.

``Memory.search`` validates the request; this module runs it against one
store. The arithmetic lives in the pure ``halls.recall`` modules; here they
are composed with the store's I/O (full text, vectors, neighbours, records).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from halls.config import RecallSettings
from halls.embed import Embedder
from halls.models import Hit, Match, SearchFilter
from halls.recall import Candidate, feedback, query_terms, rank
from halls.recall.context import Boost, Placed, boosts, query_words, speaker_bonus
from halls.recall.fusion import Normaliser, Signals, fuse, signals
from halls.recall.when import asks_when, tells_when, time_bonus, windows
from halls.store.base import Store

# The full-text query and the query embedding (then the vector scan) are
# independent and both release the GIL (SQLite; torch and BLAS), so on two
# cores they overlap. One persistent pool: a pool per query costs a thread
# start each time. Its threads each keep a store reader connection.
_TEXT_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="halls-text")


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
    terms = query_terms(query) if retriever != "dense" else []
    fill = cfg.fusion == "score" and retriever != "bm25"
    texts = _TEXT_POOL.submit(_text_branch, s, terms, filt, pool, fill) if terms else None
    vector = embedder.embed([query])[0] if retriever != "bm25" else np.zeros(0, np.float32)
    dense_hits = s.vector_search(vector, filt, pool) if retriever != "bm25" else []
    text_hits, stored = texts.result() if texts is not None else ([], {})
    found = signals(text_hits, dense_hits)
    if fill and text_hits and dense_hits:
        # The text hits the dense search missed.
        _cosines(found, {i: v for i, v in stored.items() if found[i].cosine is None}, vector)
    fuse(found, text_hits, dense_hits, cfg)
    full = retriever == "full"
    if full and cfg.feedback_weight > 0 and text_hits:
        _feedback(s, cfg, found, query, text_hits, dense_hits, vector, filt)
    boost: dict[str, Boost] = {}
    if full and (cfg.context_weight > 0 or cfg.episode_weight > 0):
        boost = _context(s, cfg, found, text_hits, dense_hits, vector, filt)
    # Tier, evidence and recency weigh within about x0.6..x2, so only the
    # best few by relevance can reach the top n: read and weigh just those.
    bonus = {i: b.context + b.episode for i, b in boost.items()}
    best = sorted(found, key=lambda i: (-(found[i].total + bonus.get(i, 0.0)), i))
    records = s.get_records(best[: max(3 * n_results, cfg.weigh_candidates)])
    said = query_words(query)
    named = windows(query) if full else []
    when = cfg.when_weight if full and asks_when(query) else 0.0
    candidates = []
    for i, sig in found.items():
        if i not in records:
            continue
        record = records[i]
        content = getattr(record, "content", "")
        at = record.occurred_at.timestamp()
        candidates.append(
            Candidate(
                record=record,
                bm25_rank=sig.bm25_rank,
                bm25=sig.bm25,
                dense_rank=sig.dense_rank,
                cosine=sig.cosine,
                relevance=sig.relevance,
                feedback=sig.feedback,
                context=boost[i].context if i in boost else 0.0,
                episode=boost[i].episode if i in boost else 0.0,
                speaker=speaker_bonus(content, said, cfg) if full else 0.0,
                time=(time_bonus(at, named, cfg) if named else 0.0)
                + (when if when and tells_when(content) else 0.0),
            )
        )
    return rank(candidates, now, cfg, n_results, substance=full)


def _text_branch(
    s: Store, terms: list[str], filt: SearchFilter, pool: int, vectors: bool
) -> tuple[list[Match], dict[str, np.ndarray]]:
    """The full-text hits and, if wanted, their stored vectors.

    The vectors are read here, beside the query embedding, rather than after
    it: those of the hits the dense search misses give them their cosine.
    """
    hits = s.text_search(terms, filt, pool)
    return hits, (s.vectors([m.id for m in hits]) if vectors and hits else {})


def _fill_cosines(s: Store, found: dict[str, Signals], ids: list[str], vector: np.ndarray) -> None:
    """Give records found by full text only their real cosine, from the stored vector."""
    _cosines(found, s.vectors(ids) if ids else {}, vector)


def _cosines(found: dict[str, Signals], stored: dict[str, np.ndarray], vector: np.ndarray) -> None:
    if stored:
        cosines = np.stack(list(stored.values())) @ vector
        for i, cosine in zip(stored, cosines.tolist(), strict=True):
            found.setdefault(i, Signals()).cosine = cosine


def _feedback(
    s: Store,
    cfg: RecallSettings,
    found: dict[str, Signals],
    query: str,
    text_hits: list[Match],
    dense_hits: list[Match],
    vector: np.ndarray,
    filt: SearchFilter,
) -> None:
    """Pseudo-relevance feedback: the best hits' rare words as a second full-text query."""
    top = sorted(found, key=lambda i: (-found[i].relevance, i))[: cfg.feedback_docs]
    records = s.get_records(top)
    texts = [getattr(records[i], "content", "") for i in top if i in records]
    shared = feedback.candidate_terms(texts, frozenset(query_terms(query)) | query_words(query))
    total, df = s.term_counts(list(shared))
    terms = feedback.choose(shared, df, total, cfg.feedback_terms, cfg.feedback_max_share)
    hits = s.text_search(terms, filt, cfg.candidates) if terms else []
    if not hits or hits[0].score <= 0:
        return
    new = [m.id for m in hits if m.id not in found]
    norm = Normaliser(text_hits, dense_hits, cfg) if cfg.fusion == "score" else None
    if new and norm is not None and norm.use_dense:
        _fill_cosines(s, found, new, vector)
        for i in new:
            if i in found:
                found[i].relevance = norm.relevance(None, found[i].cosine)
    for m in hits:
        if m.id in found:
            found[m.id].feedback = cfg.feedback_weight * m.score / hits[0].score


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
    totals = {i: sig.total for i, sig in found.items()}
    best = sorted(totals, key=lambda i: (-totals[i], i))[: cfg.context_candidates]
    written = s.neighbours(best, cfg.context_radius, filt)
    norm = Normaliser(text_hits, dense_hits, cfg) if cfg.fusion == "score" else None
    new = [w for w in written if w.id not in found]
    if new and norm is not None and norm.use_dense:
        cosines = np.stack([w.vector for w in new]) @ vector
        for w, cosine in zip(new, cosines.tolist(), strict=True):
            sig = found[w.id] = Signals(cosine=cosine, relevance=norm.relevance(None, cosine))
            totals[w.id] = sig.total
    placed = [Placed(w.id, w.tier, w.seq, w.occurred_at) for w in written]
    return boosts(totals, placed, cfg)
