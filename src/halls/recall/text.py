"""Query text to full-text search terms (pure).

Function words are dropped: in an OR query over 100k memories, "what",
"did" and "the" match nearly everything, cost time and add no signal; the
dense half of the search still sees the whole question.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)

STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "don", "ve", "ll", "re", "d", "m"]
)


def query_terms(text: str, limit: int = 32) -> list[str]:
    """Distinct lower-cased content words of ``text``, in order, at most ``limit``."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).replace("’", "'").split("'")[0]
        if word and word not in STOPWORDS and word not in seen:
            seen[word] = None
            if len(seen) >= limit:
                break
    return list(seen)
