"""Statements that stand on their own: no unresolved pointer, no relative time.

A long-term fact is read months later, with none of the conversation that
made it. Two kinds of statement do not survive that, and this module reads
both off spaCy's parse (``halls.nlp``), not off word lists:

1. *Unresolved references.* A subject or object (or the noun a subject or
   object is, by coordination or apposition) that is a demonstrative
   ("Check out this piece Caroline made.", "Caroline loves that.") or a
   third-person pronoun, alone or as a possessive ("Caroline tried to
   apologize to them.", "Their inclusivity and support really spoke to
   Caroline."), with no antecedent before it in the same statement.
   Demonstratives are read by morphology (``PronType=Dem``, not relative
   "that": tag ``WDT``); a demonstrative determiner of a date ("this
   year") is a time, not a pointer. A personal pronoun is resolved by an
   earlier noun that agrees with it: a plural noun or a coordination for
   "they" (so "Caroline and others ... they" stands), a singular noun that
   names no person for "it", a singular noun or name for "he" and "she".
   Reflexives are bound and never point out. "there" as a place adverb
   needs an earlier place (a named location or a prepositional object).
   Such a statement is read as ``unresolved``: it is never a fact's text.
2. *Relative times.* A DATE or TIME entity that dateparser's relative-time
   parser resolves ("yesterday", "two days ago", "last week", "next
   month", "this year", "tonight"; when the whole entity does not parse,
   its longest tail that does: "earlier this week") is rewritten as the
   date it meant, from when the statement was said: "on 7 May 2023", "in
   the week of 1 May 2023", "in April 2023", "in 2022" (with no "on"/"in"
   after a preposition: "since 7 May 2023"). A bare measure ("for 5
   years": numbers and an article around the unit) is a duration, not a
   time, and stays. Expressions dateparser does not resolve ("last
   weekend", "a few days ago") stay as said, and so does a time that is a
   subject or object itself ("Tonight's gonna be great").

Parses are cached by text (the same statement recurs across entries);
dates are resolved per statement, against its own ``occurred_at``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from halls import nlp

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# Dependency labels of a clause's arguments (ClearNLP labels, as the model's parser).
_ARGUMENTS = frozenset(("nsubj", "nsubjpass", "csubj", "dobj", "pobj", "dative", "attr", "oprd"))
_CORE_ARGUMENTS = _ARGUMENTS - {"pobj"}
_TIMES = frozenset(("DATE", "TIME"))
_PLACES = frozenset(("GPE", "LOC", "FAC"))


@dataclass(frozen=True, slots=True)
class Time:
    """A relative time in a statement: its characters, the part dateparser reads, and form."""

    start: int
    end: int
    phrase: str  # the tail of the entity that resolves ("this week" of "earlier this week")
    lead: str  # what precedes that tail inside the entity ("earlier"), kept
    after_preposition: bool


@dataclass(frozen=True, slots=True)
class Reading:
    unresolved: bool
    times: tuple[Time, ...]


def read(texts: Sequence[str]) -> list[Reading]:
    """How each text reads (parsed in one batch, each distinct text once a process)."""
    todo = [t for t in dict.fromkeys(texts) if t not in _cache]
    if todo:
        for text, doc in zip(todo, nlp.pipeline().pipe(todo, batch_size=256), strict=True):
            if len(_cache) >= _CACHE_SIZE:
                _cache.clear()
            _cache[text] = Reading(_unresolved(doc), tuple(_times(doc)))
    return [_cache[t] for t in texts]


_CACHE_SIZE = 100_000
_cache: dict[str, Reading] = {}


def dated(text: str, reading: Reading, said_at: datetime) -> str:
    """``text`` with its relative times made absolute, from when it was said."""
    out = text
    for t in sorted(reading.times, key=lambda t: -t.start):
        resolved = _resolve(t.phrase, said_at.replace(tzinfo=None).date())
        if resolved is None:
            continue
        when, period = resolved
        words = _absolute(when, period, t.after_preposition and not t.lead)
        if t.lead:
            words = f"{t.lead} {words}"
        if t.start == 0:
            words = words[0].upper() + words[1:]
        out = out[: t.start] + words + out[t.end :]
    return out


# -- references --


def _role(token: Token) -> str:
    """The dependency a token fills in its clause, through coordination and apposition."""
    t = token
    seen = 0
    while t.dep_ in ("conj", "appos") and t.head.i != t.i and seen < 20:
        t = t.head
        seen += 1
    return str(t.dep_)


def _unresolved(doc: Doc) -> bool:
    for t in doc:
        kind = t.morph.get("PronType", [])
        if "Dem" in kind and t.tag_ != "WDT":
            if t.pos_ == "ADV":
                if t.dep_ == "advmod" and not _place_before(t):
                    return True
            elif t.dep_ in ("det", "predet"):
                noun = t.head
                if _role(noun) in _ARGUMENTS and noun.ent_type_ not in _TIMES:
                    return True
            elif _role(t) in _ARGUMENTS:
                return True
        elif (
            "Prs" in kind
            and "3" in t.morph.get("Person", [])
            and "Yes" not in t.morph.get("Reflex", [])
        ):
            argument = t.head if t.dep_ == "poss" else t
            if _role(argument) in _ARGUMENTS and not _antecedent(t):
                return True
    return False


def _antecedent(pronoun: Token) -> bool:
    """Whether a noun before ``pronoun`` in its statement agrees with it."""
    p = pronoun
    plural = "Plur" in p.morph.get("Number", [])
    neuter = "Neut" in p.morph.get("Gender", [])
    for t in p.doc[: p.i]:
        if t.pos_ not in ("NOUN", "PROPN") or t.ent_type_ in _TIMES:
            continue
        many = "Plur" in t.morph.get("Number", [])
        if plural and (many or t.dep_ == "conj" or any(c.dep_ == "conj" for c in t.children)):
            return True
        # "it" names no person: a common noun (a name the tagger misread is capitalised).
        thing = t.pos_ == "NOUN" and t.is_lower and t.ent_type_ != "PERSON"
        if not plural and not many and (not neuter or thing):
            return True
    return False


def _place_before(token: Token) -> bool:
    t = token
    return any(
        w.ent_type_ in _PLACES or (w.dep_ == "pobj" and w.pos_ in ("NOUN", "PROPN"))
        for w in t.doc[: t.i]
    )


# -- times --


def _times(doc: Doc) -> list[Time]:
    out = []
    for ent in doc.ents:
        # A time that is itself a subject or object ("Tonight's gonna be ...",
        # "spent last week in Rome") is no adverbial to rewrite.
        if ent.label_ not in _TIMES or _measure(ent) or ent.root.dep_ in _CORE_ARGUMENTS:
            continue
        for n in range(len(ent)):
            tail = ent[n:]
            if _relative(tail.text):
                out.append(
                    Time(
                        start=ent.start_char,
                        end=ent.end_char,
                        phrase=tail.text,
                        lead=ent[:n].text,
                        after_preposition=ent.root.dep_ == "pobj",
                    )
                )
                break
    return out


def _measure(ent: Span) -> bool:
    """A duration or an age ("5 years", "a week"): a unit with numbers or an article only."""
    root = ent.root.i
    return len(ent) > 1 and all(
        t.i == root or t.like_num or "Art" in t.morph.get("PronType", []) for t in ent
    )


# Any fixed day serves to tell a relative expression: only those parse with
# dateparser's relative-time parser alone.
_PROBE = datetime(2000, 1, 5, 12)


def _relative(phrase: str) -> bool:
    return _resolve(phrase, _PROBE.date()) is not None


@functools.lru_cache(maxsize=4096)
def _resolve(phrase: str, day: date) -> tuple[datetime, str] | None:
    from dateparser.date import DateDataParser

    base = datetime.combine(day, datetime.min.time()).replace(hour=12)
    parser = DateDataParser(
        languages=["en"],
        settings={"RELATIVE_BASE": base, "PARSERS": ["relative-time"]},
    )
    found = parser.get_date_data(phrase)
    if found.date_obj is None:
        return None
    return found.date_obj, str(found.period or "day")


def _day(d: datetime) -> str:
    return f"{d.day} {d:%B} {d.year}"


def _absolute(when: datetime, period: str, bare: bool) -> str:
    if period == "year":
        words, preposition = str(when.year), "in"
    elif period == "month":
        words, preposition = f"{when:%B} {when.year}", "in"
    elif period == "week":
        words, preposition = f"the week of {_day(when - timedelta(days=when.weekday()))}", "in"
    else:
        words, preposition = _day(when), "on"
    return words if bare else f"{preposition} {words}"
