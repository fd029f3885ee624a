"""Long-term facts' categories: decided by a statement's form; /long, /search, /context use them."""

from __future__ import annotations

import pytest

from conftest import BOTH
from halls.consolidate.category import categorize
from halls.models import CATEGORIES
from test_consolidate_http import DAY, PATHS, S, clock, facts, make_server, remember, run

__all__ = ["clock", "make_server"]  # fixtures, imported for pytest

EXAMPLES = {
    "decision": [
        "We decided to run the nightly backups on the NAS",
        "The team agreed to freeze the API until March",
        "Priya chose Rust for the parser rewrite",
        "After the outage we switched to a managed PostgreSQL",
    ],
    "preference": [
        "Chad prefers absolute paths in config files",
        "Mia hates being called before ten",
        "Dark roast is Omar's favourite coffee",
        "Jonas keeps his notes in Markdown rather than Word",
    ],
    "procedure": [
        "To release, tag the commit and run make publish",
        "Restart the worker after changing its queue settings",
        "First drain the node, then upgrade the kernel",
        "Rotate the keys with `vault rotate --all`",
    ],
    "plan": [
        "Lena plans to move to Lisbon in the spring",
        "The office will close for two weeks in August",
        "Sam is going to run the Berlin marathon next year",
    ],
    "person": [
        "Lena works at Bosch as a hardware engineer",
        "Kofi is allergic to hazelnuts",
        "Ravi's daughter started school in September",
        "Caroline is looking into counseling as a career",
    ],
    "fact": [
        "The staging database is hosted in Frankfurt",
        "The office wifi network is called Vega",
        "Invoices are numbered by year and month",
    ],
}


@pytest.mark.parametrize(
    ("category", "text"), [(c, t) for c, texts in EXAMPLES.items() for t in texts]
)
def test_statements_get_the_category_of_their_form(category: str, text: str) -> None:
    assert categorize(text) == category


def test_every_category_is_exercised() -> None:
    assert set(EXAMPLES) == set(CATEGORIES)


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_promoted_facts_carry_categories_that_lists_search_and_context_use(
    make_server, clock
) -> None:
    """Through HTTP: a run categorises what it promotes; /long, /search and /context use it."""
    c = make_server().client
    for day in range(3):
        if day < 2:  # the preference recurs on two days, the plain fact on three
            remember(c, PATHS[day])
        remember(c, ["The staging database is hosted in Frankfurt",
                     "Our staging database runs in the Frankfurt region",
                     "Frankfurt hosts the staging database"][day])  # fmt: skip
        clock.advance(DAY)
    ran = run(c)
    assert ran["counts"]["promote"] == 2
    by_category = {f["category"]: f for f in facts(c)}
    assert set(by_category) == {"preference", "fact"}
    pref, plain = by_category["preference"], by_category["fact"]
    assert {a["after"]["category"] for a in ran["actions"]} == {"preference", "fact"}

    listed = c.get("/long", params={**S, "category": "preference"}).json()
    assert [f["id"] for f in listed] == [pref["id"]]
    # A vague query on purpose (min_relevance 0: every hit): the category filters.
    hits = c.post("/search", params=S, json={"query": "paths and databases",
                                            "category": "fact",
                                            "min_relevance": 0}).json()["results"]  # fmt: skip
    assert [h["id"] for h in hits] == [plain["id"]]
    for bad in ("/long", "/search"):
        r = (
            c.get(bad, params={**S, "category": "opinion"})
            if bad == "/long"
            else c.post(bad, params=S, json={"query": "x", "category": "opinion"})
        )
        # GET /long: the service refuses it (400); POST /search: the body's schema (422).
        assert r.status_code == (400 if bad == "/long" else 422), r.text
        assert "category" in r.text

    # The block takes the preference first, though the plain fact has more evidence.
    assert plain["evidence_count"] > pref["evidence_count"]
    block = c.post("/context", params=S, json={"budget_tokens": 50}).json()
    assert block["ids"][0] == pref["id"]
