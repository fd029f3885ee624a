"""How much a memory states: a query-independent prior on relevance (pure).

Both searches favour short memories. BM25 normalises term counts by length,
and the embedding of a short text is mostly its few words, so "Sure thing
Nate! See you later!" shares two names with "What has Nate recommended to
Joanna?" and ranks above the turns that answer it. Yet the longer a
memory, the likelier it holds what a question is after: the probability
of relevance grows with a document's length (Singhal, Buckley and Mitra,
"Pivoted document length normalization", 1996; the length prior of
Kraaij, Westerveld and Hiemstra, 2002). A memory that only asks ("What
type of music do you play?") states nothing at all; its answer is found
through the neighbour bonus.

So a memory gains ``substance_weight`` x min(1, stated / ``substance_words``),
where ``stated`` is the number of distinct content words (stop words, and a
leading speaker label, left out) in its sentences that are not questions.
The bonus saturates: past ``substance_words`` a longer memory gains
nothing more, so a rambling one does not beat a precise one.
"""

from __future__ import annotations

import re

from halls.config import RecallSettings
from halls.recall.speakers import without_label
from halls.recall.text import STOPWORDS

# A sentence ends at . ! ? (or their full-width forms) followed by a space.
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_QUESTION = ("?", "？")
# Apostrophes split words here ("don't" -> "don", "t"), both stop words, as
# query_terms drops the part after them.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def stated_words(content: str, limit: int) -> int:
    """Distinct content words of the sentences of ``content`` that are not questions.

    Counting stops once a sentence takes it to ``limit``: that is all the
    bonus needs, and it bounds the work on a long memory.
    """
    body = without_label(content)
    sentences = _SENTENCE.split(body) if "?" in body or "？" in body else [body]
    words: set[str] = set()
    for sentence in sentences:
        if sentence.rstrip().endswith(_QUESTION):
            continue
        words.update(_WORD.findall(sentence.lower()))
        words -= STOPWORDS
        if len(words) >= limit:
            return limit
    return len(words)


def substance_bonus(content: str, cfg: RecallSettings) -> float:
    """``substance_weight`` x the share of ``substance_words`` the memory states."""
    if cfg.substance_weight <= 0:
        return 0.0
    words = cfg.substance_words
    return cfg.substance_weight * min(1.0, stated_words(content, words) / words)
