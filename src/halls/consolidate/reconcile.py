"""Reconciliation (pure): is a candidate new, a confirmation, or a change?

Given a candidate statement and the known facts nearest to it, decide

- ``NONE``: it restates a fact (a confirmation);
- ``UPDATE``: it changes a fact; the old one is superseded by the new text;
- ``DELETE``: it retracts a fact ("no longer uses Vim") with nothing new;
- ``ADD``: nothing known is about the same thing.

Embedding similarity alone cannot tell a change from a paraphrase: "Chad
now prefers tildes instead of absolute paths" is 0.86 close to "Chad
prefers absolute paths" (all-MiniLM-L6-v2). So the decision also reads the
words: explicit change markers ("now", "instead", "no longer"), a flipped
negation, new content words, and a subject key (subject + kind of relation,
e.g. ("chad", "prefer")) with the relation's target — the same subject,
relation and target with different content is an update.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_WORD = re.compile(r"[a-z0-9~]+")
STOP = frozenset(
    (  # noqa: SIM905 - a string reads better than 150 quoted words
        "a an the of in on at to for from with by as and or but if then than so that this these "
        "those it its he she they we i you me my his her their our your him them us be been being "
        "am is are was were do does did has have had will would should can could may might must "
        "just very really also about into over under up out some any all more most much many such "
        "here there when while where which who whom what how why own same too lot lots bit "
        "quite pretty possible whenever"
    ).split()
)
CHANGE = frozenset(
    (  # noqa: SIM905 - as above
        "now instead anymore longer nowadays switched switch changed change moved stopped started "
        "actually rather"
    ).split()
)
NEGATION = frozenset(
    ["not", "no", "never", "stopped", "quit", "without", "dont", "doesnt", "didnt", "isnt", "arent"]
)
RELATIONS = {
    **dict.fromkeys(
        [
            "prefer",
            "like",
            "love",
            "want",
            "favor",
            "favour",
            "enjoy",
            "choose",
            "hate",
            "dislike",
            "avoid",
        ],
        "prefer",
    ),
    **dict.fromkeys(["use", "run"], "use"),
    **dict.fromkeys(["live", "reside"], "live"),
    **dict.fromkeys(["work"], "work"),
    **dict.fromkeys(["need", "require"], "need"),
    **dict.fromkeys(["call", "name"], "name"),
}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@dataclass(frozen=True, slots=True)
class Features:
    words: frozenset[str]  # content words, stemmed, markers removed
    negated: bool
    change: bool
    subject: str | None
    relation: str | None
    target: frozenset[str]


def features(text: str) -> Features:
    raw = _WORD.findall(text.lower().replace("n't", " not").replace("’", "'"))
    stems = [_stem(w) for w in raw]
    negated = any(w in NEGATION for w in stems) or "no longer" in " ".join(raw)
    change = any(w in CHANGE for w in stems)
    content = [w for w in stems if w not in STOP and w not in CHANGE and w not in NEGATION]
    subject = relation = None
    target: frozenset[str] = frozenset()
    for n, w in enumerate(content):
        if w in RELATIONS:
            relation = RELATIONS[w]
            subject = " ".join(content[:n]) or None
            target = frozenset(x for x in content[n + 1 :] if x not in RELATIONS)
            break
    return Features(frozenset(content), negated, change, subject, relation, target)


@dataclass(frozen=True, slots=True)
class Known:
    id: str
    text: str
    similarity: float
    vector: Any = None  # the fact's embedding (np.ndarray), for the pair judge


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str  # ADD, NONE, UPDATE or DELETE
    target_id: str | None
    reason: str
    explicit: bool = False  # an explicit change ("now", "no longer"): needs no repetition


def decide(
    text: str,
    known: list[Known],
    *,
    match_threshold: float,
    related_threshold: float,
    cand: Features | None = None,
) -> Decision:
    """Reconcile ``text`` with the nearest known facts (any order)."""
    if not known:
        return Decision("ADD", None, "no long-term fact is about this yet")
    c = cand or features(text)
    best = max(known, key=lambda k: k.similarity)
    # A fact with the same subject key may not be the most similar one.
    keyed = [
        k
        for k in known
        if k.similarity >= related_threshold and c.relation and _same_key(c, features(k.text))
    ]
    for k in sorted(keyed, key=lambda k: -k.similarity) + [best]:
        d = _against(c, k, match_threshold, related_threshold)
        if d is not None:
            return d
    return Decision(
        "ADD",
        None,
        f"nearest fact {best.id} is about something else (cosine {best.similarity:.2f})",
    )


def _same_key(c: Features, f: Features) -> bool:
    return c.relation == f.relation and c.subject is not None and c.subject == f.subject


def _against(c: Features, k: Known, match: float, related: float) -> Decision | None:
    if k.similarity < related:
        return None
    f = features(k.text)
    keyed = _same_key(c, f)
    if k.similarity < match and not keyed:
        return None
    novel = c.words - f.words
    flipped = c.negated != f.negated
    sim = f"cosine {k.similarity:.2f}"
    if flipped and c.negated and not novel:
        return Decision("DELETE", k.id, f"retracts {k.id} ({sim})", explicit=True)
    if (c.change or flipped) and novel:
        words = ", ".join(sorted(novel)[:5])
        return Decision("UPDATE", k.id, f"changes {k.id}: new '{words}' ({sim})", explicit=True)
    if flipped:
        return Decision("UPDATE", k.id, f"reverses {k.id} ({sim})", explicit=True)
    # Same subject and relation about the same thing (a shared target word),
    # one target word swapped for another: "prefers tabs for Python" ->
    # "spaces for Python". Wholly disjoint targets are two different
    # preferences; near-identical sentences (>= 0.9) are paraphrases.
    swapped = c.target & f.target and c.target - f.target and f.target - c.target
    if keyed and swapped and k.similarity < 0.9:
        return Decision("UPDATE", k.id, f"same subject and relation as {k.id}, new content ({sim})")
    if k.similarity >= match:
        return Decision("NONE", k.id, f"restates {k.id} ({sim})")
    return None
