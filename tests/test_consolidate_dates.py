"""Relative times in a fact's text made dates from when it was said (``consolidate.dates``)."""

from __future__ import annotations

from datetime import datetime

import pytest

from halls.consolidate.dates import dated

SAID = datetime(2023, 5, 8, 13, 0)  # a Monday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Melanie went to a park yesterday.", "Melanie went to a park on 7 May 2023."),
        ("Yesterday I adopted a cat.", "On 7 May 2023 I adopted a cat."),
        ("Caroline went to a fair two days ago.", "Caroline went to a fair on 6 May 2023."),
        ("I started a new job last week.", "I started a new job in the week of 1 May 2023."),
        ("Next month I'm moving to Berlin.", "In June 2023 I'm moving to Berlin."),
        ("I've been vegetarian since last year.", "I've been vegetarian since 2022."),
        # Weekdays and weekends (dateparser's relative-time parser reads neither).
        ("Caroline went to a parade last Friday.", "Caroline went to a parade on 5 May 2023."),
        ("Gina went to the fair on Saturday.", "Gina went to the fair on 6 May 2023."),
        ("Jon is meeting the investors on Friday.", "Jon is meeting the investors on 12 May 2023."),
        (
            "Melanie went camping last weekend.",
            "Melanie went camping on the weekend of 6 May 2023.",
        ),
        # No number to count back, no date named: anchored to the day said.
        (
            "Tim went to London a few years ago.",
            "Tim went to London a few years before 8 May 2023.",
        ),
        (
            "Jon has been feeling low on confidence lately.",
            "Jon has been feeling low on confidence lately (as of 8 May 2023).",
        ),
        (
            "Joanna recently started a book.",
            "Joanna recently (as of 8 May 2023) started a book.",
        ),
    ],
)
def test_a_relative_time_becomes_the_date_it_meant(text: str, expected: str) -> None:
    assert dated(text, SAID) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I have played guitar for 5 years.",  # a duration
        "We release every two weeks.",  # a frequency, not "two weeks ago"
        "Tonight's gonna be great.",  # the time is what the sentence is about
        "The user prefers tabs over spaces.",  # no time at all
        "Melanie goes running every Saturday.",  # a habit
        "Jon will open the studio next Friday.",  # this week's or the next?
        "The gym sessions are on Tuesday.",  # a habit (the present tense)
        "Jamal is the captain of our Sunday league team.",  # what the noun is
        "We moved the standup to Friday.",  # a change's new value
        "I work a 4 day week.",  # a kind of week, not four days ago
        "Our team moved to a 4 day week.",
    ],
)
def test_what_is_no_relative_time_stays_as_said(text: str) -> None:
    assert dated(text, SAID) == text
