"""Recall: query terms, fusion and ranking (pure functions, no I/O)."""

from halls.recall.rank import Candidate, rank
from halls.recall.text import query_terms

__all__ = ["Candidate", "query_terms", "rank"]
