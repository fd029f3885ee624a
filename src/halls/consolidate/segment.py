"""Segmentation (pure): a text cut into sentences, and a sentence into clauses.

``sentences`` drops image captions and bullets and cuts at end punctuation,
semicolons, line breaks and spaced dashes; ``clauses`` cuts one sentence of
an utterance where it joins two statements (at ", so", a comma splice before
a first-person clause, a leading reason or role). See
``halls.consolidate.extract``'s docstring, 1.
"""

from __future__ import annotations

import re

from halls.consolidate.dialogue_acts import FIRST_PERSON, SUBJECT_PRONOUNS, words_of
from halls.consolidate.third_person import IRREGULAR_PAST

_CAPTION = re.compile(r"\s*\[image:[^\]]*\]")
# Sentence ends: . ! ? (runs of them), ; and line breaks, and a dash between
# spaces. A full stop after a known abbreviation or between digits is not one.
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+|;\s*|\n+|\s+[-\u2013\u2014]+\s+")
_ABBREV = re.compile(r"(?i)\b(?:mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|approx|no)\.$")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
# Clause boundaries inside one sentence of an utterance (see ``clauses``).
_SUBORDINATORS = frozenset(
    (  # noqa: SIM905
        "when whenever if unless while because since although though after before until as once"
    ).split()
)
_SO = re.compile(r",\s+so\s+(?=\w)")
# A comma before a first-person clause: "it's Sam, I never go by Samantha".
_SPLICE = re.compile(r",\s+(?=(?:I|I'm|I've|I'd|I'll|we|we're|we've)\s)")
_REASON = re.compile(r"(?i)^(?:since|because|now that)\s+((?:I|I'm|I've|we|we're)\b[^,]+),\s+(.+)$")
_ROLE = re.compile(r"^As (an?) ((?:[\w-]+ ){0,2}?[\w-]+),?\s+((?:I|we)\s+([A-Za-z']+).*)$")
# Leading discourse phrases of several words (one-word ones are in MARKERS).
_PHRASES = re.compile(
    r"(?i)^(?:by the way|as i (?:said|mentioned)(?: before)?|as mentioned|like i said|"
    r"again|once again|to be clear|just to be clear|to clarify)\s*,\s*"
)


def plain(text: str) -> str:
    """``text`` with its image captions gone and its curly quotes straight."""
    return _CAPTION.sub("", text.translate(_APOSTROPHES))


def sentences(text: str) -> list[str]:
    """Sentences of ``text``, captions and bullets removed, end punctuation kept."""
    text = plain(text)
    out: list[str] = []
    carry = ""
    for piece in _SPLIT.split(text):
        piece = _BULLET.sub("", piece.strip())
        if not piece:
            continue
        if _ABBREV.search(piece):
            carry += piece + " "
            continue
        out.append(carry + piece)
        carry = ""
    if carry.strip():
        out.append(carry.strip())
    return out


def clauses(sentence: str) -> list[str]:
    """An utterance's sentence cut where it joins two statements (module docstring, 1)."""
    s = _PHRASES.sub("", sentence.strip())
    m = _REASON.match(s)
    if m:
        return [*clauses(m.group(1)), *clauses(m.group(2))]
    m = _ROLE.match(s)
    verb = m.group(4).lower() if m else ""
    past = verb.endswith("ed") and not verb.endswith("eed")
    past = past or verb in IRREGULAR_PAST or verb in ("was", "were")
    if m and not past:
        return [f"I am {m.group(1)} {m.group(2)}", *clauses(m.group(3))]
    parts = _SO.split(s, maxsplit=1)
    if len(parts) == 2:
        # "..., so leave the sugar out": a clause with no subject is a directive.
        head = parts[1].split()[0]
        subject = head[:1].isupper() or head.lower() in FIRST_PERSON | SUBJECT_PRONOUNS
        subject = subject or head.lower() in ("the", "a", "an")
        return [*clauses(parts[0]), *(clauses(parts[1]) if subject else [])]
    first = words_of(s)[:1]
    if first and first[0] not in _SUBORDINATORS:
        parts = _SPLICE.split(s, maxsplit=1)
        if len(parts) == 2 and len(words_of(parts[0])) >= 2:
            return [*clauses(parts[0]), *clauses(parts[1])]
    return [s]
