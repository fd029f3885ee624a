"""Imperatives, read off spaCy's parse.

A user talking to an assistant (a journal event or entry with the ``user``
role) states what they want as requests as often as statements: "in
ledgerly-api use poetry", "never force-push to release branches", "always run
ruff before pushing". ``extract`` keeps such a request; in a note, only one
with a word that makes it hold from now on. A request is a sentence whose
main verb is bare and has no subject.

The parse is spaCy's (``halls.nlp``): the root's part of speech and tag (an
imperative is a root verb in its base form, ``VB``, or ``VBP`` where the
model reads a bare verb at the start so) and its subjects (``nsubj``,
``nsubjpass``, ``csubj``, ``expl``). Parses are cached by text.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from halls import nlp
from halls.consolidate.dialogue_acts import STANDING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

_SUBJECTS = frozenset(("nsubj", "nsubjpass", "csubj", "expl"))
# A request's verb comes first, after a few words at most ("in helix, rebase
# onto trunk"); a bare verb further on is the parser reading a fragment.
_LEAD = 3


@functools.lru_cache(maxsize=4096)
def _parse(sentence: str) -> Doc:
    with nlp.LOCK:
        return nlp.pipeline()(sentence)


def clear() -> None:
    """Forget the parses (``halls.consolidate.caches``: when a run ends)."""
    _parse.cache_clear()


def _bare_verb(doc: Doc) -> Token | None:
    """The root of a sentence whose main verb is bare and has no subject, else None."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX") or root.tag_ not in ("VB", "VBP"):
        return None
    return None if any(c.dep_ in _SUBJECTS for c in root.children) else root


def is_imperative(sentence: str) -> bool:
    """Whether the sentence's main verb is a bare verb with no subject ("never
    commit to main", "always run ruff before pushing")."""
    doc = _parse(sentence)
    root = _bare_verb(doc)
    # Only adverbs and "please" or "do not" may come before the verb.
    return root is not None and all(t.pos_ in ("ADV", "INTJ", "PART", "AUX") for t in doc[: root.i])


def one_off_request(doc: Doc) -> bool:
    """Whether a parsed statement asks for something now: a request that neither
    holds from now on (``STANDING``) nor forbids ("run the tests again", "fix
    the build"; not "never force-push", "don't touch vendor/"). Said on two
    days it is still not a fact (``standalone``), though it counts as evidence
    for one it restates."""
    root = _bare_verb(doc)
    if root is None or root.i > _LEAD or any(c.dep_ == "neg" for c in root.children):
        return False
    return not STANDING.search(doc.text)


def elided_subject(sentence: str) -> str | None:
    """The first person a sentence leaves out, if it opens with a verb that has no
    subject ("booked the flights for kyoto" -> "I", "planning a trip" -> "I am"), else
    None. Chat and diaries drop "I" before a past or progressive verb."""
    doc = _parse(sentence)
    if not len(doc):
        return None
    verb = doc[0]
    if verb.pos_ != "VERB" or verb.tag_ not in ("VBD", "VBN", "VBG"):
        return None
    if any(c.dep_ in _SUBJECTS for c in verb.children):
        return None
    return "I am" if verb.tag_ == "VBG" else "I"


# Entities that name no person: a proper noun in one of these is a place, a firm, a date.
_NOT_PEOPLE = frozenset(
    ("GPE", "LOC", "FAC", "ORG", "NORP", "PRODUCT", "EVENT", "WORK_OF_ART", "LANGUAGE", "DATE")
)


def people(text: str) -> list[str]:
    """The people a text names, each once, in order: spaCy's ``PERSON`` entities, and
    proper nouns it puts in no other entity (the small model misses "Ana" in "my sister
    Ana")."""
    doc = _parse(text)
    named = [e.text for e in doc.ents if e.label_ == "PERSON"]
    run: list[str] = []  # consecutive proper nouns are one name ("Ana Lima")
    for t in [*doc, None]:
        person = t is not None and t.ent_type_ not in (*_NOT_PEOPLE, "PERSON")
        if t is not None and person and t.pos_ == "PROPN" and t.is_title:
            run.append(t.text)
            continue
        if run:
            named.append(" ".join(run))
            run = []
    return list(dict.fromkeys(named))
