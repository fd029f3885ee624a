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

from dataclasses import dataclass

from halls.config import RecallSettings
from halls.models import Match

RETRIEVERS = ("full", "fused", "bm25", "dense")


@dataclass(slots=True)
class Signals:
    """What the two primitive searches said about one record."""

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
    out: dict[str, Signals] = {}
    for rank, m in enumerate(text, start=1):
        sig = out.setdefault(m.id, Signals())
        sig.bm25_rank, sig.bm25 = rank, m.score
    for rank, m in enumerate(dense, start=1):
        sig = out.setdefault(m.id, Signals())
        sig.dense_rank, sig.cosine = rank, m.score
    return out


class Normaliser:
    """Maps raw BM25 and cosine scores to the shared [0, 1] relevance."""

    def __init__(self, text: list[Match], dense: list[Match], cfg: RecallSettings) -> None:
        self.use_text = bool(text)
        self.use_dense = bool(dense)
        self.best_bm25 = max((m.score for m in text), default=0.0)
        self.best_cosine = max((m.score for m in dense), default=0.0)
        both = self.use_text and self.use_dense
        self.w_text = cfg.bm25_weight if both else float(self.use_text)
        self.w_dense = (1.0 - cfg.bm25_weight) if both else float(self.use_dense)

    def relevance(self, bm25: float | None, cosine: float | None) -> float:
        text = bm25 / self.best_bm25 if bm25 and self.best_bm25 > 0 else 0.0
        dense = max(cosine, 0.0) / self.best_cosine if cosine and self.best_cosine > 0 else 0.0
        return self.w_text * text + self.w_dense * dense


def fuse(
    found: dict[str, Signals], text: list[Match], dense: list[Match], cfg: RecallSettings
) -> None:
    """Set the fused relevance of every record in ``found``.

    With score fusion, a record found by one search only should carry its
    score in the other too (the service fills in cosines): counting a
    missing score as 0 would punish the many relevant records that rank
    101st in one list.
    """
    if cfg.fusion == "rrf":
        k = cfg.rrf_k
        lists = int(bool(text)) + int(bool(dense))
        best = lists / (k + 1) if lists else 1.0
        for sig in found.values():
            rrf = sum(1.0 / (k + r) for r in (sig.bm25_rank, sig.dense_rank) if r is not None)
            sig.relevance = rrf / best
        return
    norm = Normaliser(text, dense, cfg)
    for sig in found.values():
        sig.relevance = norm.relevance(sig.bm25, sig.cosine)
