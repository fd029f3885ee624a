"""The terse notation of the session block (pure): what it leaves out, and what it never does."""

from __future__ import annotations

import pytest

from halls.service.notation import TERSE, VERBOSE, terse_text
from halls.service.session import assemble, estimate_tokens
from test_session import NOW, fact, hit, loop


@pytest.mark.parametrize(
    ("text", "terse"),
    [
        (
            "The user's staging database runs PostgreSQL 16.",
            "user's staging database runs PostgreSQL 16",
        ),
        ("Always write a test before the fix.", "Always write test before fix"),
        ("An API key lives in the vault", "API key lives in vault"),
        # A capitalised article inside a text is part of a name.
        ("We chose Plan A over Plan B", "We chose Plan A over Plan B"),
        ("Priya lives in The Hague", "Priya lives in The Hague"),
        # Before a word no noun phrase starts with, "a" is a name, not an article.
        ("Pick option a or b", "Pick option a or b"),
        ("Rows marked a are skipped", "Rows marked a are skipped"),
        # Code spans are copied as they are.
        ("Run `make the release` in the repo root", "Run `make the release` in repo root"),
        ("Backups run every day in order to meet the SLA", "Backups run daily to meet SLA"),
        ("The team is going to move to a new office", "team will move to new office"),
        # Only a sentence's final full stop goes; version numbers and ellipses stay.
        ("The API targets Python 3.12.", "API targets Python 3.12."),
        ("Wait for it...", "Wait for it..."),
        # Negations and numbers are words like any other: kept.
        (
            "The user does not eat meat, not even on the 3rd",
            "user does not eat meat, not even on 3rd",
        ),
        ("the", "the"),
    ],
)
def test_terse_text(text: str, terse: str) -> None:
    """Articles before a noun, the listed phrases and a final full stop go; nothing else."""
    assert terse_text(text) == terse


def test_terse_block_groups_facts_by_category_and_keeps_every_item() -> None:
    """The same items in both notations; terse heads each category and costs fewer tokens."""
    facts = [
        fact("The team decided to use Redis for the session cache."),
        fact("The user prefers tabs over spaces."),
        fact("The CI runner has 4 cores."),
    ]
    for f, category in zip(facts, ("decision", "preference", "fact"), strict=True):
        f.category = category
    kw: dict = dict(
        facts=facts,
        loops=[loop("Ask how the tax filing went", "session")],
        hits=[hit("The deploy takes about twelve minutes.")],
        now=NOW.timestamp(),
        query="deploy",
        budget_tokens=2000,
    )
    verbose = assemble(**kw)
    terse = assemble(**kw, format="terse")
    assert sorted(verbose.ids) == sorted(terse.ids) and len(terse.ids) == 5
    assert terse.text.splitlines()[0] == TERSE.header
    assert [line for line in terse.text.splitlines() if line.endswith(":")][1:] == [
        "due:", "relevant:", "decisions:", "preferences:", "facts:"
    ]  # fmt: skip
    assert "team decided to use Redis for session cache" in terse.text
    assert terse.tokens < verbose.tokens
    assert verbose.text.startswith(VERBOSE.header)


@pytest.mark.parametrize("budget", [25, 60, 120])
def test_terse_block_never_exceeds_budget(budget: int) -> None:
    """The budget holds in the terse notation as in the verbose one."""
    facts = [fact(f"The fact number {i} says " + "a word " * (i % 30)) for i in range(200)]
    block = assemble(
        facts=facts, loops=[], hits=[], now=NOW.timestamp(), query=None,
        budget_tokens=budget, format="terse",
    )  # fmt: skip
    assert block.tokens == estimate_tokens(block.text) <= budget
