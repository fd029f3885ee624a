"""What the user tells an assistant about anything but themselves, read off spaCy's parse.

A user talking to an assistant (a journal event or entry with the ``user``
role) states facts about their projects and the people around them as often
as about themselves: "the staging db is Postgres 15 on db-stg-2", "Mia owns
the billing service", "the repo uses poetry". ``extract`` keeps a dialogue
sentence only when its speaker speaks of themselves (a first person), which
drops all of these; in a conversation between people that rule keeps out
what one says of the other's news ("The kids loved it", "Your painting is
lovely"). Said to an assistant, such a sentence is a fact worth keeping when
its subject names something: a name, or a noun (not a pronoun or a
demonstrative, which point at what the sentence does not name). And an
imperative with a word that makes it hold from now on ("never commit to main
directly", "always run ruff before pushing") is a standing instruction, with
or without a "please".

The parse is spaCy's (``halls.nlp``): the root's subject (``nsubj``,
``nsubjpass``) and its part of speech; an imperative is a root verb in its
base form (``VB``, or ``VBP`` where the model reads a bare verb at the start
so) with no subject. Parses are cached by text.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from halls import nlp

if TYPE_CHECKING:
    from spacy.tokens import Doc

_SUBJECTS = frozenset(("nsubj", "nsubjpass", "csubj", "expl"))
_NAMING = frozenset(("PROPN", "NOUN"))


@functools.lru_cache(maxsize=4096)
def _parse(sentence: str) -> Doc:
    return nlp.pipeline()(sentence)


def names_its_subject(sentence: str) -> bool:
    """Whether the sentence's main clause has a subject that names something (a
    name or a noun, neither a pronoun nor a demonstrative)."""
    doc = _parse(sentence)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return False
    subjects = [c for c in root.children if c.dep_ in _SUBJECTS]
    if not subjects:
        return False
    head = subjects[0]
    if head.pos_ not in _NAMING:
        return False
    # "this repo", "that db": a demonstrative points at what is not named.
    return not any("Dem" in c.morph.get("PronType", []) for c in head.children if c.dep_ == "det")


def is_imperative(sentence: str) -> bool:
    """Whether the sentence's main verb is a bare verb with no subject ("never
    commit to main", "always run ruff before pushing")."""
    doc = _parse(sentence)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ not in ("VERB", "AUX") or root.tag_ not in ("VB", "VBP"):
        return False
    if any(c.dep_ in _SUBJECTS for c in root.children):
        return False
    # Only adverbs and "please" or "do not" may come before the verb.
    return all(t.pos_ in ("ADV", "INTJ", "PART", "AUX") for t in doc[: root.i])
