"""Query text to full-text terms (halls.recall.text.query_terms)."""

from __future__ import annotations

from halls.recall.text import STOPWORDS, query_terms


def test_function_words_are_dropped() -> None:
    """Stopwords go; content words stay, lower-cased, in order."""
    assert query_terms("What did Chad say about the deployment?") == ["chad", "say", "deployment"]


def test_only_stopwords_gives_no_terms() -> None:
    """A query of function words alone yields nothing for BM25 to match."""
    assert query_terms("what is it that you were doing") == []
    assert query_terms("") == []
    assert query_terms("?!  ...") == []


def test_terms_are_deduplicated_case_insensitively() -> None:
    """Repeated words (any case) appear once, at their first position."""
    assert query_terms("Tea, TEA and tea then coffee Tea") == ["tea", "coffee"]


def test_unicode_words_survive() -> None:
    """Accented, German, Japanese words are kept whole and lower-cased."""
    assert query_terms("Über Straße naïve CAFÉ 東京 タワー") == [
        "über", "straße", "naïve", "café", "東京", "タワー"
    ]  # fmt: skip


def test_contractions_and_possessives_keep_the_stem() -> None:
    """ "Chad's" and "Chad’s" give "chad"; "don't" is a stopword in full."""
    assert query_terms("Chad's notes; Chad’s car; don't panic") == ["chad", "notes", "car", "panic"]


def test_punctuation_and_underscores_split_words() -> None:
    """FTS syntax characters never reach the terms; underscores separate words."""
    assert query_terms('"prod" AND (db) NOT x* col:val foo_bar v2') == [
        "prod", "db", "x", "col", "val", "foo", "bar", "v2"
    ]  # fmt: skip
    for term in query_terms('a"b(c)d*e:f^g'):
        assert term.isalnum()


def test_numbers_are_terms() -> None:
    """Digits are content (years, ports, ticket numbers)."""
    assert query_terms("port 7420 in 2024") == ["port", "7420", "2024"]


def test_limit_caps_the_number_of_terms() -> None:
    """At most ``limit`` distinct terms, the first ones in the query."""
    words = [f"word{i}" for i in range(50)]
    assert query_terms(" ".join(words)) == words[:32]
    assert query_terms(" ".join(words), limit=3) == words[:3]


def test_stopwords_are_lower_case_words() -> None:
    """The stopword list is comparable with lower-cased query words."""
    assert all(w == w.lower() and w.isalpha() for w in STOPWORDS)
    assert "chad" not in STOPWORDS and "the" in STOPWORDS
