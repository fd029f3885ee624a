"""The search pipeline: retrieve -> fuse -> expand -> weigh -> rank -> sources.

Expansion is pseudo-relevance feedback, then neighbours, then associations
(spreading activation over the graph). Last, each long-term fact among the
hits gets the records it derives from, scored for the query (``Hit.sources``).

``Memory.search`` validates the request; this module runs it against one
store. Each stage is at most one store fetch followed by one pure function
of ``halls.recall`` that returns a new value; nothing here does arithmetic,
and no helper mutates what another stage holds. The ``Normaliser`` (how raw
BM25 and cosine scores become one relevance) is built once, from the two
primitive lists, and used by every stage that scores a record.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from halls.config import RecallSettings
from halls.embed import Embedder
from halls.models import Hit, Match, Record, SearchFilter
from halls.recall import (
    Candidate,
    feedback,
    neighbours,
    query_terms,
    rank,
    relevance,
    sources,
    spread,
    weigh,
)
from halls.recall.fusion import Normaliser, Signals, fuse, signals, with_cosines
from halls.recall.neighbours import Boost
from halls.recall.rank import below_facts, merge
from halls.service import journal_recall
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
    """Ranked hits for ``query`` in store ``s``; ``retriever`` picks the mode.

    The journal, when ``filt`` names it, is its own pass
    (``halls.service.journal_recall``), merged by score: the searchable
    tiers' pipeline runs as if it were not asked for. Each pass's hits carry
    its own relevance, so the merge keeps both passes' ``n_results`` (up to
    twice as many): the caller thresholds by relevance, then keeps the best
    ``n_results``, and a journal hit below the threshold never pushes out a
    memory above it.
    """
    tiers = tuple(t for t in filt.tiers if t != "journal")
    hits = (
        _searchable(
            s,
            embedder,
            cfg,
            query,
            filt.model_copy(update={"tiers": tiers}),
            n_results,
            retriever,
            now,
        )
        if tiers
        else []
    )
    if len(tiers) < len(filt.tiers):
        found = journal_recall.search(s, embedder, cfg, query, filt, n_results, retriever, now)
        hits = merge(hits, found, 2 * n_results)
    return hits


def _searchable(
    s: Store,
    embedder: Embedder,
    cfg: RecallSettings,
    query: str,
    filt: SearchFilter,
    n_results: int,
    retriever: str,
    now: float,
) -> list[Hit]:
    """Ranked hits in the searchable tiers (short, near, long)."""
    full = retriever == "full"
    # retrieve: full text (on the pool) beside the query embedding and vector scan.
    pool = max(cfg.candidates, n_results)
    terms = query_terms(query) if retriever != "dense" else []
    fill = cfg.fusion == "score" and retriever != "bm25"
    texts = _TEXT_POOL.submit(_text_branch, s, terms, filt, pool, fill) if terms else None
    vector = embedder.embed([query])[0] if retriever != "bm25" else np.zeros(0, np.float32)
    dense_hits = s.vector_search(vector, filt, pool) if retriever != "bm25" else []
    text_hits, stored = texts.result() if texts is not None else ([], {})
    norm = Normaliser(text_hits, dense_hits, cfg)

    # fuse: the stored vectors give the text hits the dense search missed their cosine.
    found = signals(text_hits, dense_hits)
    if fill and text_hits and dense_hits:
        found = with_cosines(
            found, {i: v for i, v in stored.items() if found[i].cosine is None}, vector
        )
    found = fuse(found, norm, cfg)

    # expand: feedback, then the neighbours of the best hits.
    if full and cfg.feedback_weight > 0 and text_hits:
        found = _feedback(s, cfg, found, query, vector, norm, filt)
    boost: dict[str, Boost] = {}
    if full and (cfg.context_weight > 0 or cfg.episode_weight > 0):
        written = s.neighbours(
            neighbours.around(found, cfg.context_candidates), cfg.context_radius, filt
        )
        found, boost = neighbours.with_neighbours(found, written, vector, norm, cfg)
    linked: dict[str, float] = {}
    if full and cfg.graph_weight > 0 and cfg.graph_edges and cfg.graph_hops > 0:
        found, linked = _associations(s, cfg, found, boost, vector, norm, filt)

    # weigh: read only the records that can reach the top n, then rank them;
    # in two goes, the second only for what the first has not ruled out.
    best = weigh.shortlist(found, boost, max(3 * n_results, cfg.weigh_candidates), linked)
    reach = weigh.reach(found, boost, best, query, cfg, full, linked)
    first = weigh.first_reads(best, reach, n_results)
    candidates = _candidates(s, first, found, boost, query, cfg, full, linked)
    hits = rank(candidates, now, cfg, n_results, substance=full)
    rest = weigh.worth_reading(best, first, reach, hits, n_results)
    if rest:
        more = _candidates(s, rest, found, boost, query, cfg, full, linked)
        hits = merge(hits, rank(more, now, cfg, n_results, substance=full), n_results)
        candidates = candidates + more
    # Each hit's calibrated relevance: its raw scores beside the best of the search.
    judged = relevance.applies(embedder.name, retriever)
    hits = relevance.scored(below_facts(hits, candidates), norm.best_cosine, norm.best_bm25, judged)
    return _with_sources(s, embedder, hits, candidates, found, vector, norm)


def _with_sources(
    s: Store,
    embedder: Embedder,
    hits: list[Hit],
    candidates: list[Candidate],
    found: dict[str, Signals],
    vector: np.ndarray,
    norm: Normaliser,
) -> list[Hit]:
    """Each fact hit with the records it derives from (``halls.recall.sources``).

    The facts' sources came with them (the store reads a fact's
    ``derived_from`` edges with it). Then: one read of the vectors of the
    sources no search scored, the journal events one by one (at most
    ``sources.MAX_JOURNAL``, embedded together: the journal keeps no
    vectors), and one read of the entries chosen (at most
    ``sources.MAX_SOURCES`` a fact) that were not candidates.
    """
    known = {c.record.id: c.record for c in candidates}
    wanted = sources.derived(hits, known)
    if not wanted:
        return hits
    named = list(dict.fromkeys(i for ids in wanted.values() for i in ids if i[:2] != "j_"))
    scores = {i: found[i].relevance for i in named if i in found}
    unscored = [i for i in named if i not in found]
    if unscored:
        stored = s.vectors(unscored)
        # Rank fusion has no score for a record no search ranked: 0, but shown.
        scores |= (
            sources.scored(stored, vector, norm)
            if norm.scores_unranked
            else dict.fromkeys(stored, 0.0)
        )
    events = {i: e for i in sources.journal_ids(wanted) if (e := s.get_journal(i)) is not None}
    shown = [i for i in events if events[i].visibility != "private"]
    if shown and norm.scores_unranked:
        embedded = embedder.embed([events[i].content for i in shown])
        scores |= sources.scored(dict(zip(shown, embedded, strict=True)), vector, norm)
    elif shown:
        scores |= dict.fromkeys(shown, 0.0)
    chosen = sources.choose(wanted, scores)
    # Many sources were candidates of this search: their records are at hand.
    read = [i for ids in chosen.values() for i in ids if i[:2] != "j_" and i not in known]
    records: dict[str, Record] = {**known, **events, **(s.get_records(read) if read else {})}
    return sources.attach(hits, chosen, records, scores)


def _candidates(
    s: Store,
    ids: list[str],
    found: dict[str, Signals],
    boost: dict[str, Boost],
    query: str,
    cfg: RecallSettings,
    full: bool,
    linked: dict[str, float],
) -> list[Candidate]:
    """The records of ``ids`` and their reinforcement, read, as candidates for ranking."""
    records = s.get_records(ids)
    return weigh.candidates(found, boost, records, query, cfg, full, s.retention(ids), linked)


def _text_branch(
    s: Store, terms: list[str], filt: SearchFilter, pool: int, vectors: bool
) -> tuple[list[Match], dict[str, np.ndarray]]:
    """The full-text hits and, if wanted, their stored vectors.

    The vectors are read here, beside the query embedding, rather than after
    it: those of the hits the dense search misses give them their cosine.
    """
    hits = s.text_search(terms, filt, pool)
    return hits, (s.vectors([m.id for m in hits]) if vectors and hits else {})


def _feedback(
    s: Store,
    cfg: RecallSettings,
    found: dict[str, Signals],
    query: str,
    vector: np.ndarray,
    norm: Normaliser,
    filt: SearchFilter,
) -> dict[str, Signals]:
    """Pseudo-relevance feedback: the best hits' rare words as a second full-text query.

    Four fetches, each followed by its pure step: the best hits' texts ->
    their shared words; those words' counts -> the terms; the second query
    -> the hits no search found; their vectors -> the new value of ``found``.
    """
    top = feedback.top(found, cfg.feedback_docs)
    records = s.get_records(top)
    texts = [getattr(records[i], "content", "") for i in top if i in records]
    shared = feedback.candidate_terms(texts, feedback.query_exclusions(query))
    total, df = s.term_counts(list(shared))
    terms = feedback.choose(shared, df, total, cfg.feedback_terms, cfg.feedback_max_share)
    hits = s.text_search(terms, filt, cfg.candidates) if terms else []
    new = feedback.unscored(found, hits, norm)
    stored = s.vectors(new) if new else {}
    return feedback.with_feedback(found, hits, stored, vector, norm, cfg)


def _associations(
    s: Store,
    cfg: RecallSettings,
    found: dict[str, Signals],
    boost: dict[str, Boost],
    vector: np.ndarray,
    norm: Normaliser,
    filt: SearchFilter,
) -> tuple[dict[str, Signals], dict[str, float]]:
    """Spreading activation from the best hits over the graph (``halls.recall.spread``).

    Per hop two bounded reads — the frontier's edges, then its hubs' — and
    at the end one read of the memories reached that no search found (those
    that pass the filter, with their vectors, for their cosine).
    """
    kinds = list(cfg.graph_edges)
    # A node with more edges of a kind than graph_fan_out passes nothing
    # (spread.fan): the store need not hand those over, and reads limit + 1.
    limit = cfg.graph_fan_out
    bonus = {i: b.context + b.episode for i, b in boost.items()}
    frontier = spread.seeds(found, bonus, cfg.graph_seeds)
    reached: dict[str, float] = {}
    done: set[str] = set()
    for _ in range(cfg.graph_hops):
        if not frontier:
            break
        done.update(frontier)
        direct, hubs = spread.step_out(frontier, s.adjacent(list(frontier), kinds, limit), cfg)
        through = spread.step_in(hubs, s.adjacent(list(hubs), kinds, limit), cfg) if hubs else {}
        reached = spread.merge(reached, direct, through)
        frontier = spread.next_frontier(spread.merge(direct, through), done, cfg.graph_seeds)
    new = spread.unscored(found, reached)
    if new and norm.scores_unranked:
        written = s.neighbours(new, 0, filt)
        found = neighbours.scored(found, written, vector, norm)
    return found, spread.bonuses(found, reached, cfg)
