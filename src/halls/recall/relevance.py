"""The relevance of a search's hits: how likely the store can answer the query (pure).

A hit's ``score`` ranks it against the other hits of the same search; it
says nothing about whether any of them is relevant: the fused relevance is
normalised by the best hit of each list, so the best hit of a search about
anything scores about as high as the best hit of a search the store can
answer. ``relevance`` is an absolute figure, from the raw scores of the
store's closest memories to the query:

- the best cosine of the query's embedding with any memory the dense
  search found;
- ln(1 + the best BM25) of any memory the full-text search found (0 when
  no memory holds a query word, and with the ``dense`` retriever).

    relevance = 1 / (1 + exp(-(intercept + w_cos x best_cosine + w_bm25 x ln(1 + best_bm25))))

a logistic regression fitted by ``scripts/fit_relevance.py`` on LoCoMo: the
questions a store's conversation answers (relevant) against the other
conversations' questions asked of it (nothing in it is relevant), weighed
equally. It is one figure per search, set on each of its hits: the
probability that the search holds a memory relevant to the query. Which hit
that is, is the ranking's business (``score``): a per-hit probability, from
each hit's own cosine and BM25, would drop the many answers recall finds
through their neighbours (a conversation turn next to the one that matches
the words), whose own scores are low: on LoCoMo, abstaining on 80% of the
other conversations' questions cost it 4.5 points of recall@10 (0.765
against 0.810, on the fitting data), where this one costs under 1.

The coefficients, the command that produced them and the held-out figures
are in ``data/relevance.json``. Search returns its hits only when their
relevance is at least ``min_relevance`` (``DEFAULT_MIN_RELEVANCE`` unless
asked otherwise): a query the store cannot answer gets no hit. A search the
model cannot judge (the ``bm25`` retriever, which has no cosine; an
embedder other than the one it was fitted for) has no relevance (None)
and is not thresholded.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from halls.errors import InvalidInput
from halls.models import Hit


@dataclass(frozen=True)
class Model:
    intercept: float
    best_cosine: float
    best_bm25: float
    # The threshold chosen on the fitting folds (see the data file).
    min_relevance: float
    # The embedding model whose cosines it was fitted on (any backend).
    embedder: str

    def fits(self, embedder: str) -> bool:
        """True for an embedder named as the fitted model (``all-MiniLM-L6-v2/onnx-...``)."""
        return embedder == self.embedder or embedder.startswith(self.embedder + "/")

    def relevance(self, best_cosine: float, best_bm25: float) -> float:
        z = (
            self.intercept
            + self.best_cosine * max(best_cosine, 0.0)
            + self.best_bm25 * features_bm25(best_bm25)
        )
        # Either branch keeps exp() from overflowing for a large |z|.
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)


def features_bm25(bm25: float | None) -> float:
    """ln(1 + BM25); a negative or absent score (no match) counts as 0."""
    return math.log1p(bm25) if bm25 and bm25 > 0 else 0.0


def _load() -> Model:
    raw = json.loads(resources.files("halls.recall").joinpath("data/relevance.json").read_text())
    c = raw["coefficients"]
    return Model(
        c["intercept"], c["best_cosine"], c["best_bm25"], raw["min_relevance"], raw["embedder"]
    )


MODEL = _load()
DEFAULT_MIN_RELEVANCE = MODEL.min_relevance


def applies(embedder: str, retriever: str) -> bool:
    """Whether the model can judge a search by this embedder and retriever.

    Another embedder's cosines are on another scale, and the ``bm25``
    retriever has no cosine at all: their searches get no relevance (None),
    and so no threshold.
    """
    return MODEL.fits(embedder) and retriever != "bm25"


def scored(hits: list[Hit], best_cosine: float, best_bm25: float, judged: bool) -> list[Hit]:
    """``hits`` with their relevance set (None unless ``judged``: see ``applies``);
    the search's bests join their ``score_detail``."""
    if not hits:
        return hits
    p = round(MODEL.relevance(best_cosine, best_bm25), 4) if judged else None
    best = {"best_cosine": round(best_cosine, 4), "best_bm25": round(best_bm25, 4)}
    return [
        h.model_copy(update={"relevance": p, "score_detail": {**h.score_detail, **best}})
        for h in hits
    ]


def check_min_relevance(value: Any) -> float:
    """``value`` if it is a number in [0, 1]; otherwise InvalidInput (a 400, changing nothing)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0.0 <= value <= 1.0  # NaN fails this too
    ):
        raise InvalidInput("min_relevance must be a number between 0 and 1")
    return float(value)
