"""Speakers (pure): who says a text, read off a leading label.

"Caroline: ..." is a turn Caroline speaks; "Note: ...", "User: vegetarian"
or "ISP: Virgin Media" is a label over a note, which no one speaks in
(``_noted``). ``USER`` names the speaker of the journal's user turns.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from halls.consolidate.dialogue_acts import (
    AUX,
    DEICTIC,
    FIRST_PERSON,
    MARKERS,
    MEMO,
    SECOND_PERSON,
    WH,
    is_formula,
    words_of,
)

# Who speaks in the journal's user turns: the memory's owner, talking to an assistant.
USER = "The user"
_NOTE_LABELS = frozenset(
    (  # noqa: SIM905 - "Note: ..." is a label, not a speaker
        "note notes todo update fix warning error re subject summary decision question answer q a "
        "reminder idea task status context result goal plan important fyi ps edit source example "
        "tip info done fixed bug feature http https step steps action"
    ).split()
)
_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s+(?=\S)")


def speaker_of(text: str, speakers: Collection[str] = ()) -> tuple[str | None, str]:
    """A leading speaker label ("Caroline: ...") and the rest; (None, text) if none.

    A label among ``speakers`` (``speakers_in``: it speaks elsewhere in the same
    batch) is a speaker whatever it heads: "Leila Haddad: nooo" is a turn of a
    conversation Leila speaks in, not a note about her."""
    m = _SPEAKER.match(text)
    if not m or len(m.group(1)) > 40 or m.group(1).lower() in _NOTE_LABELS:
        return None, text
    rest = text[m.end() :]
    if m.group(1) not in speakers and _noted(m.group(1), rest):
        return None, text
    return m.group(1), rest


def speakers_in(texts: Iterable[str]) -> frozenset[str]:
    """The labels that head a turn their speaker speaks in (``speaker_of``), among
    ``texts``; "User" is not one: "User: vegetarian" stays an agent's note
    beside "User: I moved to Leeds"."""
    found = (speaker_of(t)[0] for t in texts)
    return frozenset(s for s in found if s is not None and s.lower() != "user")


NOTE_WORDS = 6  # a label's value up to this long, with no person speaking, can be a note


def _noted(label: str, rest: str) -> bool:
    """Whether a label heads an agent's note about it, not words it says.

    "User: vegetarian", "User: editor theme dark, not light": the user's own
    words speak in the first person ("User: I moved to Leeds"). So with any
    other label, when the value is a short phrase, not a sentence: no person
    speaks in it, it ends in no full stop, exclaims or asks nothing, opens
    with no marker, question word or pointing pronoun, and has no auxiliary
    ("Emma: cat allergy", "ISP: Virgin Media", "Mia: swim practice Tue 4pm";
    not "Priya: The mountains were stunning.", "Priya: How's the garden
    coming along"). Of LoCoMo's 2,760 dev turns, none is so. Read as a turn,
    such a note says nothing of its speaker and was dropped.
    """
    words = words_of(rest)
    if not words or FIRST_PERSON.intersection(words):
        return False
    if label.lower() == "user":
        return True
    first = words[0].split("'")[0]
    return (
        len(rest.split()) <= NOTE_WORDS
        and not rest.rstrip().endswith(".")
        and not set("!?") & set(rest)
        and first not in MARKERS | WH | DEICTIC
        and not (SECOND_PERSON | AUX).intersection(words)
        and not is_formula(rest)
        and not MEMO.match(rest)
    )
