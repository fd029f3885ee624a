"""What kind of knowledge a long-term fact is (pure): its category.

Categories tell an agent how to use a fact, and let a small context budget
take what changes behaviour first:

- ``decision``: something chosen or agreed ("we decided to use Postgres");
- ``preference``: what someone likes, wants or avoids ("Chad prefers tabs");
- ``procedure``: how to do something ("to deploy, run make release");
- ``plan``: an intention for the future ("Lena plans to move to Berlin");
- ``person``: who someone is and their ties (work, home, family, health);
- ``fact``: anything else.

The heuristic engine decides by the sentence's form, in that order of
precedence (a decision about a preference is a decision): its verbs and
fixed phrases, never its topic. Words are matched whole, case-insensitively.
The llm engine names the category itself; this is its fallback.
"""

from __future__ import annotations

import re

from halls.models import Category


def _words(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(phrases) + r")\b", re.IGNORECASE)


_RULES: list[tuple[Category, re.Pattern[str]]] = [
    (
        "decision",
        _words(
            r"decided?",
            r"decides",
            r"decision",
            r"chose",
            r"chosen",
            r"agreed",
            r"settled on",
            r"went with",
            r"going with",
            r"opted",
            r"switched to",
            r"standardi[sz]ed on",
            r"adopted",
            r"approved",
            r"(?:we|team) will use",
        ),
    ),
    (
        "preference",
        _words(
            r"prefers?",
            r"preferred",
            r"preference",
            r"likes?",
            r"loves?",
            r"enjoys?",
            r"hates?",
            r"dislikes?",
            r"favou?rite",
            r"can't stand",
            r"cannot stand",
            r"rather than",
            r"instead of",
            r"fond of",
            r"wants?",
            r"wishes",
            r"would like",
            r"avoids?",
            r"never uses?",
            r"always uses?",
        ),
    ),
    (
        "procedure",
        re.compile(
            r"^(?:to \w+\b.*,|first\b|always (?:run|use|call|check)\b|"
            r"(?:run|use|call|set|restart|deploy|install|open|click|type|add|remove|check|"
            r"make sure|remember to)\b)"
            r"|\bhow to\b|\bstep \d|\bthen run\b|`[^`]+`",
            re.IGNORECASE,
        ),
    ),
    (
        "plan",
        _words(
            r"plans?",
            r"planning",
            r"intends?",
            r"going to",
            r"will",
            r"next (?:week|month|year)",
            r"tomorrow",
            r"soon",
            r"hopes? to",
            r"aims? to",
            r"upcoming",
            r"scheduled",
        ),
    ),
    (
        "person",
        _words(
            r"works? (?:at|for|as)",
            r"lives? in",
            r"moved to",
            r"born",
            r"birthday",
            r"married",
            r"allergic",
            r"(?:wife|husband|partner|son|daughter|mother|father|"
            r"sister|brother|kids?|children|friend|boss|colleague)s?",
            r"years old",
            r"grew up",
            r"studies|studied",
            r"job",
            r"career",
            r"hobby",
        ),
    ),
]


def categorize(text: str) -> Category:
    """The category of a statement, by the first rule its form matches."""
    flat = " ".join(text.split())
    for category, pattern in _RULES:
        if pattern.search(flat):
            return category
    return "fact"
