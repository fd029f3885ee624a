"""How the judge reads one statement (pure), before it compares two.

``parse`` turns a statement into what the pair features count: its content
words (stop words, and the words that only mark a change, a negation or an
addition, left out), each with a root that its other forms share
("swimming" / "swim", "allergic" / "allergy": ``forms``), and per word
whether it is a name, a value (a name, a number, an address), negated
(``negation``), said in a contrast ("Ubuntu, not Debian") or after a
change's "from" ("switched from X to Y"), a relation ("Eli's son"), the
name of an attribute ("cadence"), and its senses (WordNet synonyms, and the
attribute a verb gives the value of: ``synonyms``); and per statement the
flags the model reads (``flags``), the numbers and amounts it claims
(``quantities``) and the words that may shorten others (``shortenings``).
A statement is read subject first ("Kotlin is Nadia's language" as
"Nadia's language is Kotlin"), with its values written one way
(``values``), the memory's owner ("the user") as "I", and a given name
opening it read as a name (``names``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from halls.consolidate.judge import flags, forms, names, negation, shortenings, synonyms, values
from halls.consolidate.judge.lexicon import STOP, groups, table, words
from halls.consolidate.judge.quantities import NUMBER_WORDS, Amounts, measured, numbers_in
from halls.consolidate.judge.shortenings import Parts, Short

_TOKEN = re.compile(r"[A-Za-z0-9~][A-Za-z0-9~./:-]*")
_ADDRESS = re.compile(r"\w[./:@]\w")
_FIRST_PERSON = words("first_person")
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
# Relations that come as counterparts: two statements that each name another
# of one set ("the user's son" / "the user's daughter", "Mom" / "Dad") are
# about two people, whatever else they share. So are a system's deployment
# environments: "nginx on staging listens on 8080" / "On prod, nginx listens on
# port 8080" are two servers (all 9 labelled pairs so are ``unrelated``).
COUNTERPARTS = {word: n for n, group in enumerate(groups("counterparts")) for word in group}
_SAME_PERSON = table("same_person")
# Acronyms of kinds of thing (an API, a URL, a VPN), written in capitals but
# common nouns: no name, no value ("a REST API" is "a REST interface").
GENERIC = words("generic")
# Words after which a value is a contrast, not a claim ("Ubuntu, not Debian").
CONTRAST = words("contrast")
MAX_WORDS = 24  # content words compared per statement (a statement is a sentence)
PREFIX = 5  # words sharing this many first letters count as one (allergic, allergy)
_VOCAB: dict[str, int] = {}


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
    negated: np.ndarray  # bool per id: in the scope of a negation (``negation.in_scope``)
    person: np.ndarray  # bool per id: a relation to someone ("son", "mentor": ``PERSON``)
    attribute: np.ndarray  # bool per id: names an attribute (``ATTRIBUTE``)
    senses: tuple[frozenset[int], ...]  # per id: its WordNet senses (``synonyms``), or none
    # float32 (``flags.read``): change negated additive retract episodic multi single length
    flags: np.ndarray
    numbers: frozenset[float]  # the numbers it claims (digits and number words; contrasts aside)
    heads: frozenset[int]  # the roots of the words its numbers count ("Year 3": year)
    # (slot, letters, pieces) of its words that may shorten others: in capitals
    # ("NYT": one letter a piece) or glued from openings ("FedEx": "fed", "ex";
    # "Amex": no pieces given, each at least two letters)
    shortenings: tuple[Short, ...]
    parts: Parts  # per token: its parts ("PlayStation"), slot
    # The first one and two letters of every part: what another statement's
    # shortening must find here before it is spelled out (``shortenings.shared``).
    openings: frozenset[str]
    # (measure, size in its base unit, number, unit, slot of the number, slot of
    # the unit or -1) per amount it claims in a unit of ``values.MEASURES`` ("12 km")
    amounts: Amounts
    kin: frozenset[tuple[int, str]]  # (set, word) of its ``COUNTERPARTS`` ("son")
    joins: bool  # it joins two things with "and", "&" or "plus" ("guitar and piano")
    owner: bool  # its subject is "I" or "we" ("User ..." too): its first word is no subject
    # It says "also", "too", "as well", "besides" or "in addition": one more of
    # something already said (the additive flag counts "more", "both", "another"
    # and "a second" too, which chat says of anything).
    also: bool


# What an addition or a change names beside its new value is the value it had
# ("The Economist in addition to The Atlantic", "Thursdays on top of Tuesdays",
# "switched from Python 3.9 to 3.12"): read like a contrast, no new claim.
_BESIDE = table("beside")


def _beside(low: list[str], n: int) -> bool:
    w = low[n]
    before = _BESIDE.get(w)
    return before is not None and (not before or (n > 0 and low[n - 1] == before))


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
    stems = [_SAME_PERSON.get(w, w) for w in map(forms.base, low)]
    joined = " ".join(low)
    ids: list[int] = []
    roots: list[int] = []
    name: list[bool] = []
    capital: list[bool] = []
    value: list[bool] = []
    number: list[bool] = []
    contrast: list[bool] = []
    negated: list[bool] = []
    in_scope = negation.in_scope(clean, spans, [w.lower() for w in raw])
    person: list[bool] = []
    attribute: list[bool] = []
    senses: list[frozenset[int]] = []
    after = through = False  # in a contrast's scope; between a change's "from" and "to"
    until: tuple[str, ...] = ()  # the words that end ``through`` ("to"; "for", "with")
    changes = flags.says_change(stems, low, joined)
    numbers: set[float] = set()
    shortens: list[Short] = []
    parts: list[tuple[tuple[str, ...], int]] = []
    claimed: list[tuple[int, str, float, float, str]] = []  # (token, measure, size, number, unit)
    for n, (w, r) in enumerate(zip(stems, raw, strict=True)):
        if not (after or through):
            amount = measured(low, n)
            if amount is not None:
                claimed.append((n, *amount))
            numbers.update(numbers_in(low[n]))
        # One capital letter past the first word is a value ("size M", "type B").
        short = w.isdigit() or (n > 0 and len(r) == 1 and r.isupper() and r != "I")
        # "US" and "IT" in capitals are a country and a department, no pronouns.
        stop = w in STOP and r not in ("US", "IT")
        keep = (len(w) > 1 or short) and not stop and not flags.is_marker(w, low, n)
        if keep and len(ids) < MAX_WORDS:
            i = _VOCAB.setdefault(w, len(_VOCAB))
            if i not in ids:
                ids.append(i)
                root = forms.agent_verb(w)
                # A word's forms are one word ("swimming", "swim"; "cycling", "cycle";
                # "fluently", "fluent"); a name is only itself.
                named = (n and r[:1].isupper()) or names.is_name(low[n].removesuffix("'s"))
                if root.isalpha() and r[1:].islower() and not named:
                    root = forms.snowball(root)
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
            shortening = shortenings.shortening(r, low[n]) if i in ids else None
            if shortening is not None:
                shortens.append((ids.index(i), shortening[0], shortening[1]))
        slot = ids.index(_VOCAB[w]) if keep and _VOCAB.get(w) in ids else -1
        parts.append((shortenings.word_parts(r, low[n]), slot))
        if low[n] in until:
            through = False
        if w in CONTRAST or low[n] in CONTRAST or _beside(low, n):
            after = True
        elif low[n] == "from" and changes:
            through, until = True, ("to", "into")  # "switched from Python 3.9 to 3.12"
        elif low[n] in flags.SWAPS and any(x in ("for", "with") for x in low[n + 1 :]):
            through, until = True, ("for", "with")  # "swapped his Kindle for a Kobo"
        elif keep:
            after = False
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
        flags.read(stems, low, joined, changes),
        frozenset(numbers),
        frozenset(heads),
        tuple(shortens),
        tuple(parts),
        shortenings.part_openings(parts),
        amounts,
        frozenset((COUNTERPARTS[w], w) for w in stems if w in COUNTERPARTS),
        bool(_JOINERS.intersection(low)) or "&" in clean,
        bool(low) and low[0] in _FIRST_PERSON,
        flags.says_also(low, joined),
    )
