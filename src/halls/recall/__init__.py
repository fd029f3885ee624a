"""Recall: query terms, fusion, expansion and ranking (pure functions, no I/O).

The stages of a search, each a pure function the service composes with the
store's I/O (``halls.service.recall``): ``fusion`` (signals, cosines, fused
relevance), ``feedback`` and ``neighbours`` (expansion), ``weigh`` (the
shortlist and its candidates), ``rank`` (one explained score), ``sources``
(the records a fact hit derives from, shown with it). ``speakers``,
``when``, ``substance`` and ``text`` hold the signals they share.
"""

from halls.recall import feedback, neighbours, weigh
from halls.recall.rank import Candidate, rank
from halls.recall.text import query_terms

__all__ = ["Candidate", "feedback", "neighbours", "query_terms", "rank", "weigh"]
