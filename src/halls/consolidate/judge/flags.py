"""A statement's flags (pure): the words of change, negation, addition and retraction it says.

Beside its content words, ``reading.parse`` reads per statement the flags
the MLPs and the rules read (``Parsed.flags``, in ``FLAG_*`` order): a word
or phrase of change ("now", "switched to", "these days"), of negation, of
addition ("also", "a second", "as well") that adds, of retraction that is
not negated ("quit", but not "never quit", nor "the train leaves at 7:40"),
an occasion ("this morning"), a many-valued verb ("likes") or a one-at-a-time
attribute ("lives in"), and the statement's length. The words that only
mark a change, a negation or an addition (``is_marker``) are read here and
left out of the words compared.
"""

from __future__ import annotations

import re

import numpy as np

from halls.consolidate.judge.lexicon import CHANGE, NEGATION, alternation, table, words

# Where ``Parsed.flags`` holds the words of change, negation, addition and retraction.
FLAG_CHANGE, FLAG_NEGATED, FLAG_ADDITIVE, FLAG_RETRACT = 0, 1, 2, 3
N_FLAGS = 8

ADDITIVE = words("additive")
RETRACT = words("retract")
# Words that place a statement on one day, an event rather than a habit: on
# their own ("today", "tonight"), or a part of the day or week after "this",
# "last" or "next" ("this morning", "last weekend"). Alone, those parts are a
# habit's time ("plays guitar in the evenings", "Olu's weekend sport").
EPISODIC = words("episodic")
_EPISODIC_PARTS = words("episodic_parts")
_DEICTIC = words("episodic_near")

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
# A preference said as the one preferred holds one value at a time: "likes
# Casa Lupo best", "the band she likes most", "favourite film".
_FAVOURITE = words("favourite")

# Verbs that say a thing was changed, beside the markers of ``CHANGE``: the
# model reads them as a word of change ("Upgraded to the Sony XM5", "We replaced
# Bitwarden with 1Password"), not as content, and the rules read them in both
# statements of a pair ("replaced her Civic with a RAV4" / "now drives a RAV4").
# Their past and present participles only: "port 5433", "a lower floor",
# "trades" are no change.
_ALTER_VERBS = words("alter_verbs")


def _participles(verb: str) -> set[str]:
    """A regular verb's participles: "swap" -> swapped, swapping; "move" -> moved, moving."""
    if verb.endswith("e"):
        return {verb + "d", verb[:-1] + "ing"}
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", verb) or verb.endswith("fer"):
        verb += verb[-1]  # swapped, upped, transferred
    return {verb + "ed", verb + "ing"}


ALTERS = frozenset().union(*(_participles(v) for v in _ALTER_VERBS)) | {"became"}
# Of those, the ones that name the old value first and the new one after "for"
# or "with" ("swapped his Kindle for a Kobo", "replaced Bitwarden with
# 1Password"): the old value is read like the "from" of "from X to Y".
SWAPS = frozenset().union(*(_participles(v) for v in words("swap_verbs")))


# Words that only mark an addition ("as well", "in addition", "besides"): the
# additive flag reads them; as content words they would be a new claim, so
# "plays the piano as well" would say more than "also plays piano".
_ADDITION_PHRASES = table("addition_phrases")
_ADDITION_WORDS = words("addition_words")


def _marks_addition(low: list[str], n: int) -> bool:
    w = low[n]
    return w in _ADDITION_WORDS or (n > 0 and _ADDITION_PHRASES.get(w) == low[n - 1])


# Phrases that say a value is a new one, beside the words of ``CHANGE``: "is on
# Mubi these days", "Aoife has taken over as captain", "down to 76 kilos", "back
# to full-time", "just turned 8". (Of the labelled pairs whose later statement
# alone says one, 49 are updates; the 5 others restate a change said before.)
_CHANGE_PHRASES = re.compile(rf"\b(?:{alternation('change_phrases')})\b")
# "Give" retracts only as "give up" / "give away" / "give back" ("the API gives
# times in UTC"), "hand" as "hand back" ("handed back his company phone").
_GAVE_UP = re.compile(
    r"\b(?:(?:give|gives|gave|given|giving) (?:up|away|back)|(?:hand|hands|handed) back)\b"
)


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


def says_change(stems: list[str], low: list[str], joined: str) -> bool:
    """A word of change (``CHANGE``, a participle of ``ALTERS``) or a phrase of one
    (``_CHANGE_PHRASES``)."""
    changes = any(w in CHANGE for w in stems) or any(w in ALTERS for w in low)
    return changes or _CHANGE_PHRASES.search(joined) is not None


def is_marker(stem: str, low: list[str], n: int) -> bool:
    """Whether token ``n`` only marks a change, a negation or an addition: the flags
    read it, the words compared leave it out."""
    return stem in CHANGE or low[n] in ALTERS or stem in NEGATION or _marks_addition(low, n)


def says_also(low: list[str], joined: str) -> bool:
    """It says "also", "too", "as well", "besides" or "in addition" (``Parsed.also``)."""
    return bool(_ALSO.intersection(low)) or any(p in joined for p in _ALSO_PHRASES)


def read(stems: list[str], low: list[str], joined: str, changes: bool) -> np.ndarray:
    """The ``N_FLAGS`` flags of a statement's tokens (``stems``, ``low``, and
    ``joined`` by spaces), its word of change (``says_change``) given."""
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
    return np.array(flags, dtype=np.float32)
