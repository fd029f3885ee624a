"""Fusing the full-text and dense rankings into one relevance in [0, 1] (pure).

Two ways, chosen by ``recall.fusion``:

- ``score`` (default): each list's raw scores divided by the best score in
  that list (BM25 / best BM25; cosine / best cosine, negatives as 0), then
  ``bm25_weight x text + (1 - bm25_weight) x dense``. Unlike rank fusion it
  keeps *how much* better a hit is: a turn that matches the rare words of a
  question by a wide margin is not levelled with the runner-up. On LoCoMo it
  lifts recall@10 from 0.586 (RRF) to 0.674 with the same two lists.
- ``rrf``: reciprocal-rank fusion, sum of 1/(k + rank), divided by its best
  value 2/(k + 1). Needs no calibration at all; kept as the fallback.

``retriever`` selects which lists take part: ``bm25`` or ``dense`` alone
(each normalised the same way) or both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from halls.config import RecallSettings
from halls.models import Match


class Signals(NamedTuple):
    """What the searches said about one record (a value: stages return new ones).

    A named tuple rather than a dataclass: a search builds several hundred
    of these per stage, and a tuple is built in a fifth of the time that
    ``dataclasses.replace`` takes (every field is passed positionally below).
    """

    bm25_rank: int | None = None
    bm25: float | None = None
    dense_rank: int | None = None
    cosine: float | None = None
    relevance: float = 0.0
    # The pseudo-relevance-feedback bonus (halls.recall.feedback), kept apart
    # from the fused relevance so that a hit's score stays explained.
    feedback: float = 0.0

    @property
    def total(self) -> float:
        return self.relevance + self.feedback


def signals(text: list[Match], dense: list[Match]) -> dict[str, Signals]:
    """Per id: its 1-based rank and raw score in each list it appears in."""
    out = {m.id: Signals(rank, m.score) for rank, m in enumerate(text, start=1)}
    for rank, m in enumerate(dense, start=1):
        old = out.get(m.id)
        out[m.id] = (
            Signals(None, None, rank, m.score)
            if old is None
            else Signals(old.bm25_rank, old.bm25, rank, m.score, old.relevance, old.feedback)
        )
    return out


class Normaliser:
    """Maps raw BM25 and cosine scores to the shared [0, 1] relevance.

    Built once per search from the two primitive lists; every stage that
    gives a record a relevance (fusion, feedback, neighbours) uses this one.
    """

    def __init__(self, text: list[Match], dense: list[Match], cfg: RecallSettings) -> None:
        self.use_text = bool(text)
        self.use_dense = bool(dense)
        self.best_bm25 = max((m.score for m in text), default=0.0)
        self.best_cosine = max((m.score for m in dense), default=0.0)
        self._text, self._dense = self.best_bm25 > 0, self.best_cosine > 0
        both = self.use_text and self.use_dense
        self.w_text = cfg.bm25_weight if both else float(self.use_text)
        self.w_dense = (1.0 - cfg.bm25_weight) if both else float(self.use_dense)
        # A record neither search ranked (a feedback hit, a neighbour) gets a
        # relevance from its cosine alone; rank fusion has no score to give it.
        self.scores_unranked = cfg.fusion == "score" and self.use_dense

    def relevance(self, bm25: float | None, cosine: float | None) -> float:
        # Called for every record found: "0.0 if c < 0.0 else c" is max(c, 0.0)
        # (the same value, NaN and -0.0 included) without the call.
        text = bm25 / self.best_bm25 if bm25 and self._text else 0.0
        dense = (
            (0.0 if cosine < 0.0 else cosine) / self.best_cosine if cosine and self._dense else 0.0
        )
        return self.w_text * text + self.w_dense * dense

    def dense_relevance(self, found_cosines: Sequence[float]) -> list[float]:
        """``relevance(None, c)`` for each cosine, at once: the same floats.

        A search scores a few hundred neighbours and feedback hits by their
        cosine alone; in numpy that is the same float64 arithmetic, in the
        same order, without a call per record.
        """
        if self.best_cosine <= 0:
            return [0.0] * len(found_cosines)
        c = np.asarray(found_cosines, dtype=np.float64)
        return (self.w_dense * (np.maximum(c, 0.0) / self.best_cosine)).tolist()

    @property
    def lists(self) -> int:
        """How many searches took part."""
        return int(self.use_text) + int(self.use_dense)


def rrf(ranks: Sequence[int | None], k: int, lists: int) -> float:
    """Reciprocal-rank fusion of 1-based ranks (None = not in that list), in [0, 1].

    The sum of 1/(k + rank), divided by its best value lists/(k + 1).
    """
    best = lists / (k + 1) if lists else 1.0
    return sum(1.0 / (k + r) for r in ranks if r is not None) / best


def cosines(vectors: Sequence[np.ndarray], query: np.ndarray) -> list[float]:
    """The cosine of each stored (unit) vector with the query vector."""
    if not vectors:
        return []
    # One matrix product over the rows in the order given (the store's write
    # order): the same rows in the same order give the same floats to the last bit.
    return (np.stack(list(vectors)) @ query).tolist()


def with_cosines(
    found: Mapping[str, Signals], vectors: Mapping[str, np.ndarray], query: np.ndarray
) -> dict[str, Signals]:
    """``found`` with the cosines of ``vectors`` set (a record not in it joins with the cosine)."""
    out = dict(found)
    for i, c in zip(vectors, cosines(list(vectors.values()), query), strict=True):
        old = out.get(i)
        out[i] = (
            Signals(cosine=c)
            if old is None
            else Signals(old.bm25_rank, old.bm25, old.dense_rank, c, old.relevance, old.feedback)
        )
    return out


def fuse(found: Mapping[str, Signals], norm: Normaliser, cfg: RecallSettings) -> dict[str, Signals]:
    """``found`` with the fused relevance of every record set.

    With score fusion, a record found by one search only should carry its
    score in the other too (the service fills in cosines): counting a
    missing score as 0 would punish the many relevant records that rank
    101st in one list.
    """
    if cfg.fusion == "rrf":
        k, lists = cfg.rrf_k, norm.lists
        return {
            i: Signals(b_rank, bm25, d_rank, cos, rrf((b_rank, d_rank), k, lists), fb)
            for i, (b_rank, bm25, d_rank, cos, _, fb) in found.items()
        }
    relevance = norm.relevance
    return {
        i: Signals(b_rank, bm25, d_rank, cos, relevance(bm25, cos), fb)
        for i, (b_rank, bm25, d_rank, cos, _, fb) in found.items()
    }
