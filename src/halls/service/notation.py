"""How the session block writes its items (pure): the verbose form, or the terse notation.

Verbose (the default) is one bulleted sentence per item under three sections:
due loops, relevant memories, long-term facts.

Terse spends fewer tokens on the same items, for hooks that inject a block
into every session:

- a shorter header; each kind of item under a one-word heading and no bullet:
  ``due:`` (open loops due now, each with its id to complete it),
  ``relevant:`` (recalls for the query), then the long-term facts by
  category: ``decisions:``, ``preferences:``, ``procedures:``, ``plans:``,
  ``people:``, ``facts:`` (verbose lists them under one heading);
- the articles ``a``, ``an``, ``the`` are left out where a noun follows
  ("The user's staging database runs PostgreSQL 16" -> "user's staging
  database runs PostgreSQL 16"), but never inside backticks, never before a
  word that cannot start a noun phrase ("option a or b" stays), and a
  capitalised one only at the start ("Plan A is", "lives in The Hague" stay);
- the phrases of ``data/terse.tsv`` are written shorter ("in order to" -> "to");
- a sentence's final full stop is left out.

Every other word is kept as written: names, numbers, identifiers, negations
(``halls bench context`` checks that each item's words survive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

Format = Literal["verbose", "terse"]
FORMATS: tuple[str, ...] = get_args(Format)

VERBOSE_HEADER = "Memory from halls (recall for more; loops complete when a loop is done):"
TERSE_HEADER = "halls memory (recall for more; complete a due loop when done):"
VERBOSE_SECTIONS = {
    "loops": "Open loops due now:",
    "recalls": "Relevant memories:",
    "facts": "Long-term facts:",
}
# One heading per category, in CATEGORIES order (what changes how an agent acts first).
TERSE_SECTIONS = {
    "loops": "due:",
    "recalls": "relevant:",
    "decision": "decisions:",
    "preference": "preferences:",
    "procedure": "procedures:",
    "plan": "plans:",
    "person": "people:",
    "facts": "facts:",
}
TABLES = Path(__file__).resolve().parent / "data" / "terse.tsv"


def _tables(path: Path) -> tuple[dict[str, str], frozenset[str]]:
    phrases: dict[str, str] = {}
    words: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, *rest = line.split("\t")
        if kind == "phrase":
            phrases[rest[0].lower()] = rest[1]
        elif kind == "not_noun_start":
            words.add(rest[0].lower())
        else:
            raise ValueError(f"{path.name}: unknown row kind {kind!r}")
    return phrases, frozenset(words)


# PHRASES: shorter forms of the same meaning. NOT_A_NOUN_START: words an
# article never stands before (an "a" there is a name: "option a or b").
PHRASES, NOT_A_NOUN_START = _tables(TABLES)
ARTICLES = frozenset({"a", "an", "the"})

_PHRASE = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in sorted(PHRASES, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
# An article, the spaces after it, and the next word (looked at, not consumed).
_ARTICLE = re.compile(r"\b(the|an?|The|An?)\s+(?=([A-Za-z0-9_'’-]+))")


def _phrase(match: re.Match[str]) -> str:
    short = PHRASES[match.group(1).lower()]
    return short.capitalize() if match.group(1)[0].isupper() else short


def _drop_articles(text: str, at_start: bool) -> str:
    def keep_or_drop(match: re.Match[str]) -> str:
        article, following = match.group(1), match.group(2)
        if following.lower() in NOT_A_NOUN_START:
            return match.group(0)
        if article[0].isupper() and not (at_start and match.start() == 0):
            # Capitalised inside a text, it is part of a name: "Plan A", "The Hague".
            return match.group(0)
        return ""

    return _ARTICLE.sub(keep_or_drop, text)


def terse_text(text: str) -> str:
    """One item's text in the terse notation (whitespace already flattened)."""
    parts = text.split("`")
    # Even parts are prose, odd ones code spans, which are copied as they are.
    for i in range(0, len(parts), 2):
        prose = _PHRASE.sub(_phrase, parts[i])
        parts[i] = _drop_articles(prose, at_start=i == 0)
    out = "`".join(parts).strip()
    if out.endswith(".") and not out.endswith("..") and "." not in out.rsplit(" ", 1)[-1][:-1]:
        out = out[:-1]
    return out or text


@dataclass(frozen=True)
class Notation:
    """The header, the section headings in block order, and how one item is written."""

    format: Format
    header: str
    sections: dict[str, str]

    def section(self, kind: str, category: str | None = None) -> str:
        """The section of an item of ``kind`` (loops, recalls, facts) and fact category."""
        if kind == "facts" and self.format == "terse" and category in self.sections:
            return category
        return kind

    def item(self, text: str, loop_id: str | None = None) -> str:
        body = terse_text(text) if self.format == "terse" else text
        if loop_id is not None:
            body = f"{body} [{loop_id}]"
        return body if self.format == "terse" else f"- {body}"

    def render(self, items: list[tuple[str, str]]) -> str:
        """``(section, line)`` pairs as one block, sections in order, items as given."""
        lines = [self.header]
        for section, heading in self.sections.items():
            chosen = [line for sec, line in items if sec == section]
            if chosen:
                lines.append(heading)
                lines.extend(chosen)
        return "\n".join(lines)


VERBOSE = Notation("verbose", VERBOSE_HEADER, VERBOSE_SECTIONS)
TERSE = Notation("terse", TERSE_HEADER, TERSE_SECTIONS)


def notation(format: str) -> Notation:
    return TERSE if format == "terse" else VERBOSE


__all__ = ["FORMATS", "PHRASES", "TERSE", "VERBOSE", "Format", "Notation", "notation", "terse_text"]
