"""How the judge reads one statement (pure), before it compares two.

``parse`` turns a statement into what the pair features count: its content
words (stop words, words of change, negation and addition left out), each
with a root that its other forms share ("swimming" / "swim", "allergic" /
"allergy"), and per word whether it is a name, a value (a name, a number,
an address), negated, said in a contrast ("Ubuntu, not Debian") or after a
change's "from" ("switched from X to Y"), a relation ("Eli's son"), the name
of an attribute ("cadence"), and its senses (WordNet synonyms, and the
attribute a verb gives the value of: ``synonyms``); and per statement the
flags the model reads (a word of change, negation, addition, retraction, an
occasion, a many-valued or one-at-a-time verb). A statement is read subject
first ("Kotlin is Nadia's language" as "Nadia's language is Kotlin"), with
its values written one way (``values``), the memory's owner ("the user")
as "I", and a given name opening it read as a name (``names``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import snowballstemmer
from breame.spelling import BRITISH_ENGLISH_SPELLINGS

from halls.consolidate.judge import names, synonyms, values
from halls.consolidate.judge.lexicon import (
    CHANGE,
    NEGATION,
    STOP,
    alternation,
    groups,
    number,
    table,
    words,
)
from halls.consolidate.judge.lexicon import stem as _stem

_TOKEN = re.compile(r"[A-Za-z0-9~][A-Za-z0-9~./:-]*")
# "Give" retracts only as "give up" / "give away" / "give back" ("the API gives
# times in UTC"), "hand" as "hand back" ("handed back his company phone").
_GAVE_UP = re.compile(
    r"\b(?:(?:give|gives|gave|given|giving) (?:up|away|back)|(?:hand|hands|handed) back)\b"
)
_ADDRESS = re.compile(r"\w[./:@]\w")
# A word in capitals may shorten a run of words by their initials ("NYT", "the
# New York Times"; "BP", "blood pressure"; "US", "United States"), the parts of
# a word in camel case among them ("PS", "PlayStation").
_ACRONYM = re.compile(r"[A-Z]{2,5}")
# A name glued from the openings of the words it shortens: in camel case
# ("FedEx", Federal Express) or not ("Amex", American Express). Such a word
# is no common word and no given name (``_shortening``).
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CAMEL_EDGE = re.compile(r"[a-z][A-Z]")
CONTRACTION_LETTERS = (4, 7)
_FIRST_PERSON = words("first_person")
ADDITIVE = words("additive")
RETRACT = words("retract")
# Words that place a statement on one day, an event rather than a habit: on
# their own ("today", "tonight"), or a part of the day or week after "this",
# "last" or "next" ("this morning", "last weekend"). Alone, those parts are a
# habit's time ("plays guitar in the evenings", "Olu's weekend sport").
EPISODIC = words("episodic")
_EPISODIC_PARTS = words("episodic_parts")
_DEICTIC = words("episodic_near")


# -- lexical features --

# Verbs whose subject may hold several values at once ("likes hiking" and
# "likes kayaking" are two facts) and nouns/verbs whose subject holds one at
# a time ("lives in Lisbon" then "lives in Porto" is a change). Stems.
MULTI = words("multi")
# Of those, the verbs are nouns after a determiner ("20 per visit", "a good
# read", "an Apple Watch", "my own car"): no many-valued verb then.
_MULTI_VERBS = words("multi_verbs")
_NOUN_BEFORE = words("noun_before")
# ... but not as the first noun of a compound naming a measure: "interest
# rate", "fan speed", "member count" hold one value at a time.
_MEASURES = words("measure_nouns")
# Attributes that hold one value at a time: a new value said plainly replaces
# the old one. So does the one someone goes to for a service (a GP, a dentist,
# a landlord, an insurer): "Our GP is Dr Haddad" after "Our GP is Dr Okonkwo"
# is a change, though the two share only what reads as names ("GP", "Dr").
SINGLE = words("single")
# Nouns that name an attribute whose value a statement gives ("the release
# cadence is biweekly", "Ahmed's age is 40", "the app version is 2.3"):
# naming the attribute adds nothing to a statement that gives its value
# ("we release biweekly", "Ahmed is 40"). Nouns only: "works" or "main"
# beside a value say something of their own ("work phone", "main branch").
ATTRIBUTE = words("attribute")
# People named by their relation to someone ("Eli's son", "my husband",
# "Dan's mentor"): a statement about one of them is about another person than
# the same statement without, or with another relation. Stems; words for the
# same relation are one ("boss" is "manager", "mom" is "mother").
PERSON = words("person")
_JOINERS = words("joiners")
# A preference said as the one preferred holds one value at a time: "likes
# Casa Lupo best", "the band she likes most", "favourite film".
_FAVOURITE = words("favourite")
# Relations that come as counterparts: two statements that each name another
# of one set ("the user's son" / "the user's daughter", "Mom" / "Dad") are
# about two people, whatever else they share. So are a system's deployment
# environments: "nginx on staging listens on 8080" / "On prod, nginx listens on
# port 8080" are two servers (all 9 labelled pairs so are ``unrelated``).
COUNTERPARTS = {word: n for n, group in enumerate(groups("counterparts")) for word in group}
_SAME_PERSON = table("same_person")
# Words notes shorten ("bday", "svc", "repo"), stemmed: read as the word they
# shorten, so that "checkout svc" and "the checkout service" share it.
_SHORT = table("short_words")
# Number words are values like digits ("seats twelve", "twice a week"), and
# stand for their numbers, so that "every two weeks" and "2 weeks" give the
# same number and "once a month" another (``values.normalise`` writes most of
# them as digits already). "one" is left out, it is mostly a pronoun ("the one
# I use").
NUMBER_VALUES: dict[str, float] = {
    **{w: float(n) for w, n in values.SMALL.items() if w != "one"},
    **{w: float(n) for w, n in (values.TENS | values.SCALES).items()},
    **{w: number(n) for w, n in table("times").items()},
}
# A cadence (``values.normalise`` writes each one word) is a number too: the
# days from one time to the next. "We release biweekly" and "We release
# monthly" each claim one the other lacks, as "every 2 weeks" and "every 30
# days" would: another value, never the same one.
CADENCE_DAYS = {w: number(days) for w, days in table("cadence_days").items()}
# "half" is a value but no number of its own ("half an hour" is "30 minutes").
NUMBER_WORDS = frozenset(NUMBER_VALUES) | {"half"}
# Acronyms of kinds of thing (an API, a URL, a VPN), written in capitals but
# common nouns: no name, no value ("a REST API" is "a REST interface").
GENERIC = words("generic")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
# Words after which a value is a contrast, not a claim ("Ubuntu, not Debian").
CONTRAST = words("contrast")
MAX_WORDS = 24  # content words compared per statement (a statement is a sentence)
PREFIX = 5  # words sharing this many first letters count as one (allergic, allergy)
_VOCAB: dict[str, int] = {}


# Where ``Parsed.flags`` holds the words of change, negation, addition and retraction.
FLAG_CHANGE, FLAG_NEGATED, FLAG_ADDITIVE, FLAG_RETRACT = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Parsed:
    """One statement's content words (ids, in order) and markers, for batch comparison."""

    ids: np.ndarray  # int64, unique, sentence order, at most MAX_WORDS
    roots: np.ndarray  # int64 per id: the word's first PREFIX letters ("allergic", "allergy")
    name: np.ndarray  # bool per id: capitalised past the first word
    capital: np.ndarray  # bool per id: capitalised anywhere (a subject's name too)
    value: np.ndarray  # bool per id: a name, number or address (what a fact states)
    number: np.ndarray  # bool per id: has a digit
    contrast: np.ndarray  # bool per id: follows not/never/than...
    negated: np.ndarray  # bool per id: in the scope of a negation (``_negated``)
    person: np.ndarray  # bool per id: a relation to someone ("son", "mentor": ``PERSON``)
    attribute: np.ndarray  # bool per id: names an attribute (``ATTRIBUTE``)
    senses: tuple[frozenset[int], ...]  # per id: its WordNet senses (``synonyms``), or none
    flags: np.ndarray  # float32: change negated additive retract episodic multi single length
    numbers: frozenset[float]  # the numbers it claims (digits and number words; contrasts aside)
    heads: frozenset[int]  # the roots of the words its numbers count ("Year 3": year)
    # (slot, letters, pieces) of its words that may shorten others: in capitals
    # ("NYT": one letter a piece) or glued from openings ("FedEx": "fed", "ex";
    # "Amex": no pieces given, each at least two letters)
    shortenings: tuple[tuple[int, str, tuple[str, ...]], ...]
    parts: tuple[tuple[tuple[str, ...], int], ...]  # per token: its parts ("PlayStation"), slot
    # The first one and two letters of every part: what another statement's
    # shortening must find here before it is spelled out (``judge._spelled``).
    openings: frozenset[str]
    # (measure, size in its base unit, number, unit, slot of the number, slot of
    # the unit or -1) per amount it claims in a unit of ``values.MEASURES`` ("12 km")
    amounts: tuple[tuple[str, float, float, str, int, int], ...]
    kin: frozenset[tuple[int, str]]  # (set, word) of its ``COUNTERPARTS`` ("son")
    joins: bool  # it joins two things with "and", "&" or "plus" ("guitar and piano")
    owner: bool  # its subject is "I" or "we" ("User ..." too): its first word is no subject
    # It says "also", "too", "as well", "besides" or "in addition": one more of
    # something already said (the additive flag counts "more", "both", "another"
    # and "a second" too, which chat says of anything).
    also: bool


N_FLAGS = 8
# Verbs that say a thing was changed, beside the markers of ``CHANGE``: the
# model reads them as a word of change ("Upgraded to the Sony XM5", "We replaced
# Bitwarden with 1Password"), not as content, and the rules read them in both
# statements of a pair ("replaced her Civic with a RAV4" / "now drives a RAV4").
# Their past and present participles only: "port 5433", "a lower floor",
# "trades" are no change.
_ALTER_VERBS = words("alter_verbs")


def _forms(verb: str) -> set[str]:
    """A regular verb's participles: "swap" -> swapped, swapping; "move" -> moved, moving."""
    if verb.endswith("e"):
        return {verb + "d", verb[:-1] + "ing"}
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) or verb.endswith("fer"):
        verb += verb[-1]  # swapped, upped, transferred
    return {verb + "ed", verb + "ing"}


ALTERS = frozenset().union(*(_forms(v) for v in _ALTER_VERBS)) | {"became"}
# Of those, the ones that name the old value first and the new one after "for"
# or "with" ("swapped his Kindle for a Kobo", "replaced Bitwarden with
# 1Password"): the old value is read like the "from" of "from X to Y".
_SWAPS = frozenset().union(*(_forms(v) for v in words("swap_verbs")))


# Words that only mark an addition ("as well", "in addition", "besides"): the
# additive flag reads them; as content words they would be a new claim, so
# "plays the piano as well" would say more than "also plays piano".
_ADDITION_PHRASES = table("addition_phrases")
_ADDITION_WORDS = words("addition_words")


# What an addition or a change names beside its new value is the value it had
# ("The Economist in addition to The Atlantic", "Thursdays on top of Tuesdays",
# "switched from Python 3.9 to 3.12"): read like a contrast, no new claim.
_BESIDE = table("beside")


def _beside(low: list[str], n: int) -> bool:
    w = low[n]
    before = _BESIDE.get(w)
    return before is not None and (not before or (n > 0 and low[n - 1] == before))


def _marks_addition(low: list[str], n: int) -> bool:
    w = low[n]
    return w in _ADDITION_WORDS or (n > 0 and _ADDITION_PHRASES.get(w) == low[n - 1])


# An agent's note names the memory's owner "the user" ("User prefers tabs",
# "allergic, per the user") or leaves the subject out ("Prefers tabs"):
# both are the first person, which the comparison leaves out (``STOP``).
_OWNER = re.compile(r"(?i)(?:^|(?<=\bthe ))user\b(?:'s)?")
# "Kotlin is Nadia's main language" says what "Nadia's main language is Kotlin"
# says: a copula before a possessive names the possessor's attribute, so the
# sentence is read in that order (the subject first, the value last), as the
# features expect ("a difference up front is another subject").
_POSSESSIVE_COPULA = re.compile(
    r"^(?P<value>[^,;:!?]+?) (?P<copula>is|are|was|were) "
    r"(?P<owner>(?:[A-Z][\w-]*'s|my|his|her|their|our|your) [^,;:!?]+?)(?P<end>[.!]?)$"
)


# ... and so does a name before "the <role> of": "Jamal is the captain of our
# team" says "the captain of our team is Jamal", a role one person holds at
# a time ("Luis is the captain of our team" names another holder).
_ROLE_COPULA = re.compile(
    r"^(?P<value>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}) (?P<copula>is|was) "
    r"(?P<owner>the (?:[\w-]+ ){1,2}of [^,;:!?]+?)(?P<end>[.!]?)$"
)


def _subject_first(text: str) -> str:
    m = _POSSESSIVE_COPULA.match(text)
    role = _ROLE_COPULA.match(text) if m is None else None
    if role is not None and names.is_name(role["value"].split()[0].lower()):
        m = role  # a given name ("Jamal"), not a word opening the sentence ("Running")
    if m is None:
        return text
    value = m["value"]
    if all(w.lower() in STOP for w in value.split()):
        return text  # "It is my turn", "This is my desk": no value up front
    return f"{m['owner'][0].upper()}{m['owner'][1:]} {m['copula']} {value}{m['end']}"


# "Any more" closing a clause is "anymore" ("isn't on the team any more"); before
# a noun it is a quantity ("any more coffee").
_ANY_MORE = re.compile(r"\bany more\b(?=\s*(?:[.,;:!?)]|$))", re.IGNORECASE)


# Phrases that say a value is a new one, beside the words of ``CHANGE``: "is on
# Mubi these days", "Aoife has taken over as captain", "down to 76 kilos", "back
# to full-time", "just turned 8". (Of the labelled pairs whose later statement
# alone says one, 49 are updates; the 5 others restate a change said before.)
_CHANGE_PHRASES = re.compile(rf"\b(?:{alternation('change_phrases')})\b")
_PLURAL_INITIALS = re.compile(r"^([A-Z]{2,5})s$")


@lru_cache(maxsize=65536)
def parse(text: str) -> Parsed:
    text = _ANY_MORE.sub("anymore", text.replace("’", "'").replace("n't", " not"))
    clean = values.normalise(text)
    clean = _subject_first(_OWNER.sub("I", clean))
    spans = list(_TOKEN.finditer(clean))
    raw = [m.group() for m in spans]
    # An initialism's plural is the initialism ("GPs", "VMs", "PRs": GP, VM, PR).
    low = [_PLURAL_INITIALS.sub(r"\1", w).lower().rstrip(".:") for w in raw]
    # A JavaScript project's name with its ".js" is the name ("Node.js" / "Node").
    low = [w.removesuffix(".js") if len(w) > 5 and w.endswith(".js") else w for w in low]
    stems = [_SAME_PERSON.get(w, w) for w in map(_word, low)]
    joined = " ".join(low)
    ids: list[int] = []
    roots: list[int] = []
    name: list[bool] = []
    capital: list[bool] = []
    value: list[bool] = []
    number: list[bool] = []
    contrast: list[bool] = []
    negated: list[bool] = []
    in_scope = _negated(clean, spans, [w.lower() for w in raw])
    person: list[bool] = []
    attribute: list[bool] = []
    senses: list[frozenset[int]] = []
    after = through = False  # in a contrast's scope; between a change's "from" and "to"
    until: tuple[str, ...] = ()  # the words that end ``through`` ("to"; "for", "with")
    changes = any(w in CHANGE for w in stems) or any(w in ALTERS for w in low)
    changes = changes or _CHANGE_PHRASES.search(joined) is not None
    numbers: set[float] = set()
    shortenings: list[tuple[int, str, tuple[str, ...]]] = []
    parts: list[tuple[tuple[str, ...], int]] = []
    claimed: list[tuple[int, str, float, float, str]] = []  # (token, measure, size, number, unit)
    for n, (w, r) in enumerate(zip(stems, raw, strict=True)):
        if not (after or through):
            measured = _measured(low, n)
            if measured is not None:
                claimed.append((n, *measured))
            if low[n] in NUMBER_VALUES:
                numbers.add(NUMBER_VALUES[low[n]])
            elif low[n] == "biweekly":  # "every two weeks" keeps its number
                numbers.add(2.0)
            if low[n] in CADENCE_DAYS:
                numbers.add(CADENCE_DAYS[low[n]])
            numbers.update(float(d) for d in _DIGITS.findall(low[n]))
        # One capital letter past the first word is a value ("size M", "type B").
        short = w.isdigit() or (n > 0 and len(r) == 1 and r.isupper() and r != "I")
        # "US" and "IT" in capitals are a country and a department, no pronouns.
        stop = w in STOP and r not in ("US", "IT")
        keep = (len(w) > 1 or short) and not stop and w not in CHANGE and low[n] not in ALTERS
        keep = keep and w not in NEGATION and not _marks_addition(low, n)
        if keep and len(ids) < MAX_WORDS:
            i = _VOCAB.setdefault(w, len(_VOCAB))
            if i not in ids:
                ids.append(i)
                root = _agent(w)
                # A word's forms are one word ("swimming", "swim"; "cycling", "cycle";
                # "fluently", "fluent"); a name is only itself.
                named = (n and r[:1].isupper()) or names.is_name(low[n].removesuffix("'s"))
                if root.isalpha() and r[1:].islower() and not named:
                    root = _root(root)
                # An address or host is compared whole: "staging.example.com" is
                # no "stage.example.org", nor the word "staging".
                # So is a relation: "grandmother" is no "grandfather".
                if _ADDRESS.search(w) is None and w not in PERSON:
                    root = root[:PREFIX] if len(root) >= PREFIX else root
                roots.append(_VOCAB.setdefault("\x00" + root, len(_VOCAB)))
                # A name: capitalised past the first word, a capital inside a
                # word anywhere ("macOS", "iPhone", "TypeScript"), or a given
                # name opening the statement ("Lena works at Siemens"; an
                # opening "Prefers" or "Production" is no name: ``names``).
                common = w in GENERIC or low[n] in GENERIC  # "DB" read as "database"
                opening = not n and r[:1].isupper() and names.is_name(low[n].removesuffix("'s"))
                name.append(
                    not common
                    and (
                        (bool(n) and r[:1].isupper()) or any(c.isupper() for c in r[1:]) or opening
                    )
                )
                capital.append(not common and any(c.isupper() for c in r))
                number.append(any(ch.isdigit() for ch in w))
                # A value: a name, a number (digits or words), an address,
                # host or version ("stage.example.org", "v2.1").
                value.append(
                    name[-1] or number[-1] or w in NUMBER_WORDS or _ADDRESS.search(w) is not None
                )
                contrast.append(after or through)
                negated.append(in_scope[n])
                person.append(w in PERSON)
                attribute.append(w in ATTRIBUTE)
                # Synonyms are common words: a name or value is only itself
                # ("Java" is no "coffee"), and relations have their own.
                plain = not (value[-1] or capital[-1] or person[-1])
                # An attribute and the verb giving its value stand for each other
                # too ("manager" / "reports to": ``synonyms.ALTERNATIONS``).
                given = synonyms.alternations(low[n]) if not value[-1] else synonyms.NONE
                senses.append(synonyms.senses(low[n]) | given if plain else given)
            elif not (after or through):  # said again as a claim ("from Python 3.9 to Python 3.12")
                contrast[ids.index(i)] = False
            shortens = _shortening(r, low[n]) if i in ids else None
            if shortens is not None:
                shortenings.append((ids.index(i), shortens[0], shortens[1]))
        slot = ids.index(_VOCAB[w]) if keep and _VOCAB.get(w) in ids else -1
        camel = _CAMEL_EDGE.search(r) is not None
        parts.append((tuple(p.lower() for p in _CAMEL.findall(r)) if camel else (low[n],), slot))
        if low[n] in until:
            through = False
        if w in CONTRAST or low[n] in CONTRAST or _beside(low, n):
            after = True
        elif low[n] == "from" and changes:
            through, until = True, ("to", "into")  # "switched from Python 3.9 to 3.12"
        elif low[n] in _SWAPS and any(x in ("for", "with") for x in low[n + 1 :]):
            through, until = True, ("for", "with")  # "swapped his Kindle for a Kobo"
        elif keep:
            after = False
    flags = [
        changes,
        any(w in NEGATION for w in stems) or "no longer" in joined,
        _adds(stems, low) or any(p in joined for p in _ALSO_PHRASES),
        _retracts(stems, low) or _GAVE_UP.search(joined) is not None,
        any(
            w in EPISODIC or (w in _EPISODIC_PARTS and low[n - 1 : n] and low[n - 1] in _DEICTIC)
            for n, w in enumerate(low)
        ),
        any(
            w in MULTI
            and not _MEASURES.intersection(low[n + 1 : n + 2])
            and not (w in _MULTI_VERBS and low[n - 1 : n] and low[n - 1] in _NOUN_BEFORE)
            for n, w in enumerate(stems)
        )
        and not _FAVOURITE.intersection(low),
        any(w in SINGLE for w in stems),
        min(len(low), 30) / 30,
    ]
    amounts = tuple(
        (measure, size, number, unit, parts[n][1], parts[n + 1][1])
        for n, measure, size, number, unit in claimed
    )
    # A number counts the word before it ("Year 3", "Postgres 15", "space 14"),
    # or, opening the statement, the word after it ("3 kids").
    heads = {
        roots[n - 1] if n else roots[n + 1]
        for n, digit in enumerate(number)
        if digit and (n or len(roots) > 1)
    }
    return Parsed(
        np.array(ids, dtype=np.int64),
        np.array(roots, dtype=np.int64),
        np.array(name, dtype=bool),
        np.array(capital, dtype=bool),
        np.array(value, dtype=bool),
        np.array(number, dtype=bool),
        np.array(contrast, dtype=bool),
        np.array(negated, dtype=bool),
        np.array(person, dtype=bool),
        np.array(attribute, dtype=bool),
        tuple(senses),
        np.array(flags, dtype=np.float32),
        frozenset(numbers),
        frozenset(heads),
        tuple(shortenings),
        tuple(parts),
        frozenset(o for token, _ in parts for part in token for o in (part[:1], part[:2])),
        amounts,
        frozenset((COUNTERPARTS[w], w) for w in stems if w in COUNTERPARTS),
        bool(_JOINERS.intersection(low)) or "&" in clean,
        bool(low) and low[0] in _FIRST_PERSON,
        bool(_ALSO.intersection(low)) or any(p in joined for p in _ALSO_PHRASES),
    )


def _shortening(raw: str, low: str) -> tuple[str, tuple[str, ...]] | None:
    """What a word may shorten, as (letters, pieces): a word in capitals its
    initials ("NYT"), a short word in camel case the openings of its parts
    ("FedEx"), a capitalised word that is no common word and no given name
    openings of two letters or more (``()``: "Amex"); else None."""
    if _ACRONYM.fullmatch(raw):
        return low, tuple(low)
    lo, hi = CONTRACTION_LETTERS
    if not (raw.isalpha() and lo <= len(raw) <= hi and raw[:1].isupper()):
        return None
    if _CAMEL_EDGE.search(raw):
        return low, tuple(p.lower() for p in _CAMEL.findall(raw))
    if raw[1:].islower() and not synonyms.senses(low) and not names.is_name(low):
        return low, ()
    return None


def _measured(low: list[str], n: int) -> tuple[str, float, float, str] | None:
    """The amount token ``n`` and the unit after it give ("12 km"), as (measure,
    size in its base unit, number, unit); None when they give none."""
    digits = low[n].lstrip("~")  # "~7.5 miles": about 7.5
    if n + 1 >= len(low) or not _DIGITS.fullmatch(digits):
        return None
    number = float(digits)
    found = values.amount(number, low[n + 1])
    return None if found is None else (*found, number, low[n + 1])


# A retraction verb after one of these (within two words) is negated: "I'll
# never quit", "we won't stop", "I'm not gonna leave". "Longer" and
# "anymore" retract *because* of the negation ("no longer", "not anymore").
_NEGATORS = words("negators")
_NEGATED_ONLY = words("negated_only")
# Retraction verbs that retract only with their particle: "passed away", "shut down".
_PARTICLE = {verb: [particle] for verb, particle in table("particles").items()}


# "Off" that starts or forbids something retracts nothing: "the backup kicks off
# at 2am", "peanuts are off limits".
_OFF_STARTS = words("off_starts")


# "Leave" before a time or a date departs ("the flight leaves May 2", "the
# train leaves at 7:40", "left at 6 pm"): a schedule, no retraction; so does
# "off" ("the alarm goes off at 7:15", "I'm off at 5 pm").
_DEPARTS = words("departs")
_MONTHS = frozenset(m.lower() for m in table("months")) | frozenset(table("short_months"))


_DETERMINERS = words("determiners")


def _departs(low: list[str], n: int) -> bool:
    after = [*low[n + 1 : n + 3], "", ""]
    if after[0] == "for":
        # "leaves for Lisbon on March 12", "left for the airport at 6": a time
        # or a date within the next few words is a journey's.
        after = [*low[n + 2 : n + 7], "", ""]
        return any(_when(after[k], after[k + 1]) for k in range(len(after) - 1))
    if after[0] == "at":
        after = after[1:]
    return _when(after[0], after[1])


def _when(word: str, following: str) -> bool:
    return word[:1].isdigit() or (word in _MONTHS and following[:1].isdigit())


_ALSO = words("also")
_ALSO_PHRASES = words("also_phrases")  # read as phrases: "well" alone says how


def _adds(stems: list[str], low: list[str]) -> bool:
    """A word of addition that adds: "every second Saturday" is a cadence, and "well"
    alone ("speaks French well") says how (``as well`` is read as a phrase)."""
    for n, w in enumerate(stems):
        # (The word as written too: "besides" stems to "besid".)
        if (w not in ADDITIVE and low[n] not in ADDITIVE) or w == "well":
            continue
        if w == "second" and not (n and low[n - 1] in ("a", "an")):
            continue  # "a second car" adds; "every second Saturday", "the second floor" count
        return True
    return False


def _retracts(stems: list[str], low: list[str]) -> bool:
    """A word of retraction that is not negated ("never quit", "won't stop" affirm)."""
    for n, w in enumerate(stems):
        if w not in RETRACT or low[n + 1 : n + 2] != _PARTICLE.get(w, low[n + 1 : n + 2]):
            continue  # "passed the exam", "the office shuts at 6" retract nothing
        if (w in _DEPARTS or w == "off") and _departs(low, n):
            continue  # ... and "the alarm goes off at 7:15" rings
        if w == "left" and n and low[n - 1] in _DETERMINERS:
            continue  # "my left hand", "on the left": a side
        if w == "off" and (
            low[n - 1 : n] and low[n - 1] in _OFF_STARTS or low[n + 1 : n + 2] == ["limits"]
        ):
            continue
        if w in _NEGATED_ONLY or not _NEGATORS.intersection(low[max(n - 2, 0) : n]):
            return True
    return False


# Words that open a negation's scope; it runs to the end of the clause.
_NEGATING = words("negating")
_CLAUSE_END = re.compile(r"[,;!?()]|\.(?:\s|$)")
_CLAUSE_WORDS = words("clause_words")


def _negated(text: str, spans: list[re.Match[str]], low: list[str]) -> list[bool]:
    """Per token: whether it stands in the scope of a negation, from the negating
    word to the end of its clause ("I never go by Samantha": "go", "Samantha";
    "goes by Sam, not Samantha": "Samantha" only)."""
    out, scope, end = [], False, 0
    for m, w in zip(spans, low, strict=True):
        if _CLAUSE_END.search(text, end, m.start()) or w in _CLAUSE_WORDS:
            scope = False
        out.append(scope)
        if w in _NEGATING:
            scope = True
        end = m.end() - 1 if m.group().endswith(".") else m.end()
    return out


def denies(
    eq: np.ndarray, valid: tuple[np.ndarray, np.ndarray], negated: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The share of the later statement's negated words that the earlier one affirms,
    less those it negates too (``eq``: P x W_earlier x W_later word equality)."""
    scope = negated[1] & valid[1]
    affirmed = (eq & (valid[0] & ~negated[0])[:, :, None]).any(axis=1) & scope
    denied = (eq & (valid[0] & negated[0])[:, :, None]).any(axis=1) & scope
    net = affirmed.sum(axis=1) - denied.sum(axis=1)
    return np.maximum(net, 0) / np.maximum(scope.sum(axis=1), 1)


# British spellings and their American ones (breame's table, 1,730 words).
_AMERICAN: dict[str, str] = BRITISH_ENGLISH_SPELLINGS


def _word(low: str) -> str:
    """A lower-case word without its plural "s", a shortening read as its word,
    written whole or in the plural ("svcs", "k8s")."""
    whole = low.removesuffix("'s")
    whole = _AMERICAN.get(whole, whole)  # "fibre", "colour", "organised": one spelling
    stem = _stem(whole)
    short = _SHORT.get(whole) or _SHORT.get(stem)
    return stem if short is None else _stem(short)


_STEMMER = snowballstemmer.stemmer("english")
_STEMMING = threading.Lock()  # a Snowball stemmer keeps its word in the object


@lru_cache(maxsize=65536)
def _root(word: str) -> str:
    """The word's Snowball (Porter 2) stem: its regular forms share it."""
    with _STEMMING:
        return str(_STEMMER.stemWord(word))


def _agent(word: str) -> str:
    """The verb of an agent noun: "player" -> "play", "drummer" -> "drum"."""
    if len(word) < 6 or not word.endswith("er"):
        return word
    base = word[:-2]
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouls":
        base = base[:-1]
    return base
