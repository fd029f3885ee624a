"""Several stores in one read: which stores a call names, and how their hits merge (pure).

An agent reads its own store beside a team's or a project's, shared
read-only. Search, recall and context take ``stores``: every store named is
searched on its own, with the same pipeline and the same ranking formula, and
the hits are merged into one list, each naming its ``store``. Writes name
exactly one store, as ever: only these reads take several.

How the hits merge. A hit's ``score`` ranks it against the other hits of
its own search: its fused relevance is normalised by the best raw BM25 and
cosine of that search (``halls.recall.fusion.Normaliser``), so the best hit
of every store scores about as high, whether or not that store knows
anything about the query. The search's ``relevance`` is absolute: the
calibrated probability that the search holds a memory relevant to the query
(``halls.recall.relevance``), from the same raw scores in every store. The
merged list is ordered by ``score x relevance``, the relevance being one
figure per store (the best of its hits: the journal's pass, when asked, has
its own): a hit's rank within its store, discounted by how likely its store
is to answer at all. One factor per store keeps each store's own order, so
one store ranks exactly as a single-store search does. A search the
relevance model cannot judge (the ``bm25`` retriever, another embedder) has
relevance None in every store, and the scores merge as they are. Each
store's search is thresholded by its own relevance (``min_relevance``) and
cut to ``n_results`` before the merge, so any one store can fill the list;
the merged list keeps the best ``n_results``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from halls.embed import Embedder
from halls.errors import InvalidInput
from halls.models import Hit, LongFact, OpenLoop
from halls.scopes import is_cold
from halls.service.stores import check_store_name

# A shared read is an agent's own store beside a few others; a long list is a mistake.
MAX_STORES = 8

__all__ = [
    "MAX_STORES",
    "OnceEmbedder",
    "Part",
    "by_store",
    "cool_each",
    "merged",
    "store_names",
]


def store_names(store: str | None, stores: Sequence[str] | None) -> list[str | None]:
    """The stores a read names: ``stores`` (checked, once each), else ``[store]``.

    None is the default store. Naming both ``store`` and ``stores`` is refused
    (InvalidInput, a 400): which of them the caller meant is a guess.
    """
    if stores is None:
        return [store]
    if store:
        raise InvalidInput("name the stores once: either `store` or `stores`, not both")
    if isinstance(stores, str) or not isinstance(stores, Sequence):
        raise InvalidInput("stores must be a list of store names")
    if not 1 <= len(stores) <= MAX_STORES:
        raise InvalidInput(f"stores must name between 1 and {MAX_STORES} stores")
    names: list[str | None] = []
    for name in stores:
        if not isinstance(name, str):
            raise InvalidInput("stores must be a list of store names")
        checked = check_store_name(name)
        if checked not in names:
            names.append(checked)
    return names


class OnceEmbedder:
    """``embedder``, embedding the same texts once: the stores of one search
    share the query's vector (the model's forward pass is most of a search's
    time on a small store, and the same query gives the same vector)."""

    def __init__(self, embedder: Embedder) -> None:
        self._inner = embedder
        self._done: dict[tuple[str, ...], np.ndarray] = {}

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        key = tuple(texts)
        if key not in self._done:
            self._done[key] = self._inner.embed(texts)
        return self._done[key].copy()  # each search owns what it is given


# One store's share of a context: its name, active facts, open loops and open scopes.
Part = tuple[str, list[LongFact], list[OpenLoop], set[str]]


def cool_each(
    parts: Sequence[Part], hits: Sequence[Hit], scope: str | None, *, keep_cold_hits: bool
) -> tuple[list[LongFact], list[OpenLoop], list[Hit]]:
    """``halls.service.session.cool`` over several stores: each record is cold or
    warm by its own store's open scopes (a scope is a store's own).

    Facts and loops of closed scopes are left out; hits of closed scopes go
    after the rest, and only with ``keep_cold_hits``. Hits of ``scope`` go first.
    """
    facts: list[LongFact] = []
    loops: list[OpenLoop] = []
    open_in: dict[str, set[str]] = {}
    for name, f, lp, open_scopes in parts:
        facts += [x for x in f if not is_cold(x.scope, open_scopes)]
        loops += [x for x in lp if not is_cold(x.scope, open_scopes)]
        open_in[name] = open_scopes
    warm = [h for h in hits if not is_cold(h.scope, open_in.get(h.store or "", set()))]
    cold = [h for h in hits if is_cold(h.scope, open_in.get(h.store or "", set()))]
    first = sorted(warm, key=lambda h: scope is not None and h.scope != scope)
    return facts, loops, first + (cold if keep_cold_hits else [])


def _weight(hits: Sequence[Hit]) -> float:
    """How likely a store's search is to hold something relevant: its best relevance.

    A store's passes each have their own (the journal's, when asked, beside
    the searchable tiers'); None everywhere: the model cannot judge the
    search, and the scores merge as they are.
    """
    judged = [h.relevance for h in hits if h.relevance is not None]
    return max(judged) if judged else 1.0


def merged(found: Sequence[tuple[str, list[Hit]]], n_results: int) -> list[Hit]:
    """The best ``n_results`` of each store's ranked hits, each naming its store.

    Ordered by score x the store's relevance (the module's docstring says
    why). One factor per store keeps each store's own order, ties included
    (then by score, store named first, id: as ``halls.recall.rank.merge``).
    """
    keyed = []
    for i, (name, hits) in enumerate(found):
        w = _weight(hits)
        keyed += [
            ((-h.score * w, -h.score, i, h.id), h.model_copy(update={"store": name})) for h in hits
        ]
    return [h for _, h in sorted(keyed, key=lambda kh: kh[0])][:n_results]


def by_store(hits: Sequence[Hit]) -> dict[str, list[str]]:
    """The ids of ``hits`` grouped by their store, in rank order."""
    out: dict[str, list[str]] = {}
    for h in hits:
        out.setdefault(h.store or "", []).append(h.id)
    return out
