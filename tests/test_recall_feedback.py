"""Pseudo-relevance feedback and 'when' questions in recall."""

from __future__ import annotations

from halls.models import NewShort
from halls.recall.feedback import candidate_terms, choose
from halls.recall.when import asks_when, tells_when


def test_candidate_terms_count_texts_and_drop_labels_query_words_and_numbers() -> None:
    """Words are counted once per text; speaker labels, excluded words and numbers are dropped."""
    texts = [
        "John: LeBron is the man, LeBron again",
        "Tim: I love watching LeBron in 2016",
        "John: the Wolves are my team",
    ]
    got = candidate_terms(texts, frozenset({"team"}))
    assert got["lebron"] == 2
    assert got["wolves"] == 1 and got["watching"] == 1
    assert "john" not in got and "tim" not in got and "team" not in got
    assert "2016" not in got and "the" not in got


def test_choose_prefers_shared_rare_words_and_drops_common_or_unknown_ones() -> None:
    """Weight is texts holding x idf; words over max_share of the store, or held by none, go."""
    shared = {"lebron": 2, "marley": 1, "great": 3, "gone": 2}
    df = {"lebron": 3, "marley": 3, "great": 400, "gone": 0}
    assert choose(shared, df, 1000, 10, 0.01) == ["lebron", "marley"]
    assert choose(shared, df, 1000, 1, 0.01) == ["lebron"]
    assert choose(shared, df, 1000, 10, 0.5)[:2] == ["lebron", "marley"]
    assert "great" in choose(shared, df, 1000, 10, 0.5)
    # In a small store a word held by up to 10 memories is still rare enough.
    assert choose({"lebron": 2}, {"lebron": 8}, 40, 10, 0.01) == ["lebron"]
    assert choose({"lebron": 2}, {"lebron": 11}, 40, 10, 0.01) == []


def test_asks_when_reads_questions_for_a_time() -> None:
    """'When did', 'How long ago', 'What year' ask for a time; others do not."""
    for q in (
        "When did Melanie run a charity race?",
        "how long ago was the party?",
        "In what year did John move?",
        "Which month did they meet?",
    ):
        assert asks_when(q), q
    for q in ("What did Melanie paint?", "Where did John go when it rained?"):
        assert not asks_when(q), q


def test_tells_when_finds_time_words_in_a_memory() -> None:
    """Relative days, weekdays, months and years say when; plain statements do not."""
    for text in (
        "Melanie: I ran it last Saturday!",
        "We went there yesterday",
        "It was back in May",
        "I moved in 2019.",
        "That was two weeks ago",
    ):
        assert tells_when(text), text
    for text in ("Melanie: I love painting lakes.", "You may like it", "Maybe later"):
        assert not tells_when(text), text


def _entry(content: str, at: str) -> NewShort:
    return NewShort(content=content, occurred_at=at)


def test_feedback_reaches_a_memory_sharing_the_best_hits_rare_word(memory, store_name) -> None:
    """A turn the query misses gains a feedback bonus through a rare word of the best hits."""
    filler = [
        _entry(f"Gina: note {n} about the weather and the shop", "2023-01-02T10:00:00Z")
        for n in range(30)
    ]
    memory.remember_many(
        [
            _entry("John: My favourite basketball player is LeBron.", "2023-01-01T10:00:00Z"),
            *filler,
            _entry("Tim: I watched LeBron block a shot in the finals.", "2023-05-01T10:00:00Z"),
        ],
        store=store_name,
    )
    query = "Who is John's favourite basketball player?"
    hits = memory.search(query, store=store_name, n_results=40)
    tim = next(h for h in hits if h.content.startswith("Tim:"))
    assert tim.score_detail["feedback"] > 0
    assert all(h.score_detail["feedback"] == 0 for h in hits if h.content.startswith("Gina:"))
    off = memory.search(query, store=store_name, n_results=40, retriever="fused")
    assert all(h.score_detail["feedback"] == 0 for h in off)


def test_when_questions_favour_memories_that_say_when(memory, store_name) -> None:
    """'When did ...' gives the when bonus to a memory with a time word, not to others."""
    memory.remember_many(
        [
            _entry("Melanie: I ran the charity race last Saturday.", "2023-05-20T10:00:00Z"),
            _entry("Melanie: The charity race was for mental health.", "2023-05-20T10:00:00Z"),
        ],
        store=store_name,
    )
    hits = memory.search("When did Melanie run the charity race?", store=store_name)
    by = {h.content: h.score_detail["time"] for h in hits}
    assert by["Melanie: I ran the charity race last Saturday."] > 0
    assert by["Melanie: The charity race was for mental health."] == 0
    what = memory.search("What was Melanie's charity race for?", store=store_name)
    assert all(h.score_detail["time"] == 0 for h in what)
