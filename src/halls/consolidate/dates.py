"""Relative times made dates in a fact's text, from when it was said.

A long-term fact is read months later: "Melanie took her kids to a park
yesterday" is false the day after. When a statement becomes a fact's text
(``candidates``, only then: clustering and the judge read statements as
said, so "I went to the gym yesterday" said on two days is still one
statement), each DATE or TIME entity of spaCy's parse (``halls.nlp``) that
dateparser's relative-time parser resolves is rewritten from the
statement's ``occurred_at``: "on 7 May 2023", "in the week of 1 May 2023",
"in April 2023", "in 2022" (with no "on"/"in" after a preposition: "since 7
May 2023"). When the whole entity does not parse, its longest tail that
does is read ("earlier this week": "earlier in the week of ..."). Left as
said: a bare measure ("for 5 years": a unit with numbers or an article
only), which is a duration; a counted unit that modifies a noun ("a 4 day
week"), which is a kind of thing; a time that is itself a subject or object
("Tonight's gonna be great"); and what neither dateparser nor
``_day_of_week`` resolves ("next Friday"). A time ago that names no number
("a few years ago") is anchored, not resolved: "a few years before 8 May
2023"; so are the adverbs of recent time ("recently", "lately"), which name
no date: "recently (as of 8 May 2023)". Neither is a guess at a date, and
neither reads false a year later.
Weekdays and weekends are read here: "last Friday" is the latest Friday
before the day it was said, a bare "Friday" the one before it in a clause in
the past tense and the next one otherwise, "last weekend" the one before.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from halls import nlp

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span

_TIMES = frozenset(("DATE", "TIME"))
# Adverbs that say "shortly before now" and name no time of their own.
_RECENT = frozenset(("recently", "lately"))
# Dependency labels of a clause's core arguments (ClearNLP labels, as the model's parser).
_CORE_ARGUMENTS = frozenset(("nsubj", "nsubjpass", "csubj", "dobj", "dative", "attr", "oprd"))


@dataclass(frozen=True, slots=True)
class _Time:
    start: int  # characters of the entity in the text
    end: int
    phrase: str  # the part dateparser reads
    lead: str  # the entity's words before it ("earlier")
    after_preposition: bool
    weekday: bool = False  # a weekday or weekend read whole (``_day_of_week``)
    ago: bool = False  # "a few years ago": anchored to the day, not resolved
    recent: bool = False  # "recently": the day said is put after it


def dated(text: str, said_at: datetime) -> str:
    """``text`` with its relative times made absolute, from when it was said."""
    with nlp.LOCK:
        doc = nlp.pipeline()(text)
        times = _times(_spans(doc))
        tense = _tense(doc)
        recent = [t.idx + len(t) for t in doc if t.lower_ in _RECENT and t.pos_ == "ADV"]
    day = said_at.replace(tzinfo=None).date()
    out = text
    anchors = [_Time(at, at, "", "", False, recent=True) for at in recent]
    for t in sorted([*times, *anchors], key=lambda t: -t.start):
        if t.recent:
            out = f"{out[: t.start]} (as of {_day(day)}){out[t.end :]}"
            continue
        if t.ago:
            out = f"{out[: t.start]}{t.phrase} before {_day(day)}{out[t.end :]}"
            continue
        resolved = _resolve(t.phrase, day) or (
            _day_of_week(t.phrase, day, tense) if t.weekday else None
        )
        if resolved is None:
            continue
        when, period = resolved
        words = _absolute(when, period, bare=t.after_preposition and not t.lead)
        if t.lead:
            words = f"{t.lead} {words}"
        if t.start == 0:
            words = words[0].upper() + words[1:]
        out = out[: t.start] + words + out[t.end :]
    return out


def _spans(doc: Doc) -> list[Span]:
    """The DATE and TIME entities, and the adverbial noun phrases the tagger left
    out of one (it may miss "yesterday" at a sentence's end without a full stop)."""
    out = list(doc.ents)
    taken = {t.i for e in doc.ents for t in e}
    for t in doc:
        adverbial = t.dep_ == "npadvmod" or (t.dep_ == "advmod" and any(t.children))
        if adverbial and t.i not in taken:
            span = doc[t.left_edge.i : t.right_edge.i + 1]
            if not any(w.i in taken for w in span):
                out.append(span)
    return sorted(out, key=lambda s: s.start)


def _times(ents: list[Span]) -> list[_Time]:
    out = []
    for ent in ents:
        if ent.label_ not in (*_TIMES, "") or _measure(ent) or _argument(ent) or _kind(ent):
            continue
        for n in range(len(ent)):
            tail = ent[n:]
            # "every two weeks": a measure in a frequency, which dateparser
            # would read as "two weeks ago".
            # A weekday is read whole ("last Friday"), never as a tail: "next
            # Friday" is not "Friday".
            relative = _resolve(tail.text, _PROBE) is not None
            weekday = (
                not relative
                and n == 0
                and not _counted(ent)
                and _when(ent)
                and _day_of_week(tail.text, _PROBE, "past") is not None
            )
            if not _measure(tail) and (relative or weekday):
                out.append(
                    _Time(
                        start=ent.start_char,
                        end=ent.end_char,
                        phrase=tail.text,
                        lead=ent[:n].text,
                        after_preposition=ent.root.dep_ == "pobj",
                        weekday=weekday,
                    )
                )
                break
        else:
            if ent[-1].lower_ == "ago" and len(ent) > 1 and not _measure(ent[:-1]):
                # "a few years ago", "some time ago": no number to count back.
                out.append(_Time(ent.start_char, ent.end_char, ent[:-1].text, "", False, ago=True))
    return out


def _argument(ent: Span) -> bool:
    """A time that is itself a subject or object ("spent last week in Rome"), or a
    possessor ("Tonight's gonna be great": the parser may read it as an adverb)."""
    after = ent.doc[ent.end] if ent.end < len(ent.doc) else None
    return ent.root.dep_ in _CORE_ARGUMENTS or (after is not None and after.tag_ in ("POS", "VBZ"))


def _counted(ent: Span) -> bool:
    """A determiner before the time, outside it: "every Saturday", "on a Friday"."""
    return any(c.dep_ in ("det", "predet") and c.i < ent.start for c in ent.root.children)


def _measure(ent: Span) -> bool:
    """A duration or an age ("5 years", "a week"): a unit with numbers or an article only."""
    root = ent.root.i
    return len(ent) > 1 and all(
        t.i == root or t.like_num or "Art" in t.morph.get("PronType", []) for t in ent
    )


def _kind(ent: Span) -> bool:
    """A counted unit that modifies a noun ("a 4 day week", "a 6 month contract"): what
    kind of thing it is, not when (dateparser reads "4 day week" as four days ago)."""
    return any(t.dep_ == "compound" and any(c.like_num for c in t.children) for t in ent)


# Any fixed day serves to tell a relative expression: only those parse with
# dateparser's relative-time parser alone.
_PROBE = date(2000, 1, 5)


@functools.lru_cache(maxsize=4096)
def _resolve(phrase: str, day: date) -> tuple[datetime, str] | None:
    from dateparser.date import DateDataParser

    base = datetime.combine(day, datetime.min.time()).replace(hour=12)
    parser = DateDataParser(
        languages=["en"], settings={"RELATIVE_BASE": base, "PARSERS": ["relative-time"]}
    )
    found = parser.get_date_data(phrase)
    if found.date_obj is None:
        return None
    return found.date_obj, str(found.period or "day")


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _tense(doc: Doc) -> str:
    """The main clause's time: "past" ("went", "did go", "had been"), "future" ("will
    go", "is going to go", "is meeting": a plan), or "present" (a habit or a state)."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return "present"
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass")]
    if root.tag_ == "VBD" or any(c.tag_ == "VBD" for c in aux):
        return "past"
    if any(c.lower_ in ("will", "'ll") for c in aux) or (root.tag_ == "VBG" and aux):
        return "future"
    return "present"


def _when(ent: Span) -> bool:
    """Whether a weekday is when something happens ("on Friday", "went Friday"), not
    what a noun is ("our Sunday league"), a list of days ("Monday and Wednesday") or
    a change's new value ("moved it to Friday")."""
    root = ent.root
    if any(c.dep_ == "conj" for c in root.children) or root.dep_ == "conj":
        return False
    return root.dep_ == "npadvmod" or (root.dep_ == "pobj" and root.head.lower_ == "on")


def _day_of_week(phrase: str, day: date, tense: str) -> tuple[datetime, str] | None:
    """A weekday or the weekend, which dateparser's relative-time parser does not read:
    "last Friday" (the latest Friday before the day it was said), "Friday" or "on
    Friday" (that one in a clause in the past tense, the next Friday in one of a
    plan; in the present tense it is a habit: "the gym is on Tuesday"), "last
    weekend" (the one before the week it was said in). "next Friday" and "next
    weekend" (this week's or the week after?) are left as said."""
    words = phrase.lower().split()
    if not words or words[-1] not in (*_WEEKDAYS, "weekend"):
        return None
    lead = words[:-1]
    if lead not in ([], ["last"], ["this"], ["this", "past"]):
        return None
    past = lead[:1] == ["last"] or lead == ["this", "past"] or tense == "past"
    if not past and tense != "future":
        return None
    monday = day - timedelta(days=day.weekday())
    if words[-1] == "weekend":
        if not lead:
            return None  # "at the weekend": a habit, or which one
        if past:
            when = (
                monday - timedelta(days=2)
                if day.weekday() < 5 or lead[0] == "last"
                else monday + timedelta(days=5)
            )
        else:
            when = monday + timedelta(days=5)
        return datetime.combine(when, datetime.min.time()), "weekend"
    target = _WEEKDAYS.index(words[-1])
    if past:
        when = day - timedelta(days=(day.weekday() - target) % 7 or 7)
    else:
        when = day + timedelta(days=(target - day.weekday()) % 7 or 7)
    return datetime.combine(when, datetime.min.time()), "day"


def _day(d: date) -> str:
    return f"{d.day} {d:%B} {d.year}"


def _absolute(when: datetime, period: str, bare: bool) -> str:
    if period == "year":
        words, preposition = str(when.year), "in"
    elif period == "month":
        words, preposition = f"{when:%B} {when.year}", "in"
    elif period == "weekend":
        words, preposition = f"the weekend of {_day(when)}", "on"
    elif period == "week":
        words, preposition = f"the week of {_day(when - timedelta(days=when.weekday()))}", "in"
    else:
        words, preposition = _day(when), "on"
    return words if bare else f"{preposition} {words}"
