"""Statements that stand on their own: none points at what it does not name.

A long-term fact is read months later, with none of the conversation that
made it. A statement whose subject or object (or the noun a subject or
object is, by coordination or apposition) is a demonstrative ("Check out
this piece Caroline made.", "Caroline loves that.") or a third-person
pronoun, alone or as a possessive ("Caroline tried to apologize to them.",
"Their inclusivity and support really spoke to Caroline."), with no
antecedent before it in the same statement, does not survive that. This
module reads it off spaCy's parse (``halls.nlp``), not off a word list:

- demonstratives by morphology (``PronType=Dem``; relative "that" is tag
  ``WDT`` and is not one); a demonstrative determiner of a date ("this
  year") is a time, not a pointer;
- a personal pronoun is resolved by an earlier noun that agrees with it: a
  plural noun or a coordination for "they" (so "Caroline and others ...
  they" stands), a singular common noun that names no person for "it", a
  singular noun or name for "he" and "she", a singular noun for a
  possessive "their" (singular they: "Melanie took their kids"); reflexives
  are bound and never point out;
- "there" as a place adverb needs an earlier place (a named location or a
  prepositional object).

A request for something now points at its moment as a pronoun points at
its antecedent: "run the tests again", "fix the build" (a bare verb with no
subject, neither forbidding nor holding from now on: ``voices.one_off_request``;
"never force-push", "don't touch vendor/" and "always add type hints" stand).

Such a statement is read as ``unresolved``: it still counts as evidence in
its cluster, but it is not a fact's text while a statement that stands
alone is beside it (``candidates``); a cluster of only such statements
makes no new fact, though it may confirm, change or retract a known one,
which is what it points at (``plan``). A pinned entry's statement stands.
Only the statements of clusters that may make a fact are parsed.

Relative times ("yesterday", "two days ago") are not read here: a fact's
text has them made dates from when it was said (``dates``).

Parses are cached by text (the same statement recurs across entries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from halls import nlp
from halls.consolidate import progress, voices

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Dependency labels of a clause's arguments (ClearNLP labels, as the model's parser).
_ARGUMENTS = frozenset(("nsubj", "nsubjpass", "csubj", "dobj", "pobj", "dative", "attr", "oprd"))
_TIMES = frozenset(("DATE", "TIME"))
_PLACES = frozenset(("GPE", "LOC", "FAC"))


@dataclass(frozen=True, slots=True)
class Reading:
    unresolved: bool  # a subject or object points at what the statement does not name
    lasting: bool  # it says what holds (a state, a habit, a standing rule), not an episode


def read(texts: Sequence[str]) -> list[Reading]:
    """How each text reads (parsed in one batch, each distinct text once a process)."""
    with nlp.LOCK:
        todo = [t for t in dict.fromkeys(texts) if t not in _cache]
        if len(_cache) + len(todo) > _CACHE_SIZE:
            _cache.clear()
        if todo and not nlp.pipeline.cache_info().currsize:
            # Seconds, once a process: a stage of its own for whoever watches.
            progress.report("loading the English parser", 0, 1)
        docs = nlp.pipeline().pipe(todo, batch_size=256) if todo else iter(())
        for text, doc in zip(todo, docs, strict=True):
            _cache[text] = Reading(_unresolved(doc) or voices.one_off_request(doc), _lasting(doc))
        return [_cache[t] for t in texts]


_CACHE_SIZE = 100_000
_cache: dict[str, Reading] = {}


def clear() -> None:
    """Forget the readings (``halls.consolidate.caches``: when a run ends)."""
    with nlp.LOCK:
        _cache.clear()


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


def _lasting(doc: Doc) -> bool:
    """Whether the main clause says what holds, by its verb's form: the simple present
    ("Biscuit is a beagle", "we live in Leeds", "biscuit can't have chicken"), the
    present perfect ("I've been vegetarian since 2019") or a standing request (an
    imperative that is no one-off: "never force-push"). Not the past simple (an
    episode: "work was insane", "I wrote Leeds"), the progressive ("waiting in the
    lounge"), the future ("I'll be in Lisbon") or a clause with no verb ("Big news.")."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX"):
        return False
    aux = [c for c in root.children if c.dep_ in ("aux", "auxpass")]
    if any(c.tag_ == "MD" for c in aux):
        return not any(c.lower_ in ("will", "'ll", "wo") for c in aux)
    if root.tag_ == "VBG" or any(c.tag_ == "VBD" for c in aux):
        return False
    if root.tag_ == "VBN":
        return any(c.tag_ in ("VBZ", "VBP") for c in aux)
    if root.tag_ == "VB":
        return not any(c.dep_ in ("nsubj", "nsubjpass") for c in root.children)
    return root.tag_ in ("VBZ", "VBP")


def _antecedent(pronoun: Token) -> bool:
    """Whether a noun before ``pronoun`` in its statement agrees with it."""
    p = pronoun
    plural = "Plur" in p.morph.get("Number", [])
    neuter = "Neut" in p.morph.get("Gender", [])
    for t in p.doc[: p.i]:
        if t.pos_ not in ("NOUN", "PROPN") or t.ent_type_ in _TIMES:
            continue
        many = "Plur" in t.morph.get("Number", [])
        if plural and p.dep_ == "poss" and not many:
            # A singular "their" of a noun before it: the third person of "my"
            # ("Melanie took their kids", ``third_person``), or a group's.
            return True
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
