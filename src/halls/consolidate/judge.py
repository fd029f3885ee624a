"""The judge of statement pairs (pure): same, update, retract or unrelated?

One small protocol answers both questions a run asks: do two short-term
entries say the same thing (clustering), and how does a candidate relate to
a known fact (reconciliation). A pair is (earlier, later); the answer is a
label with a confidence:

- ``same``: the later statement restates the earlier one (a paraphrase or
  a confirmation, contrast and negation words included);
- ``update``: it gives a new value for the same thing ("Lena's employer is
  Bosch" after "Lena works at Siemens");
- ``retract``: it says the earlier one stopped being true, nothing new;
- ``unrelated``: a different fact: another subject or object, an addition
  beside the first ("also plays the piano"), or merely the same topic.

``LocalJudge`` (the default) is a small MLP over the two sentence
embeddings (|u-v|, u*v) and cheap lexical features (content words added or
dropped, names and numbers that differ, change, negation, additive and
retraction words). Its weights (``judge_data/judge.npz``, ~100 KB) are
trained by ``scripts/train_judge.py`` on ``judge_data/pairs.txt`` and ship in
the package: nothing is downloaded. ``WordJudge`` is the word-list rule of
``reconcile`` behind the same protocol: the last resort when the weights are
missing, and the baseline the trained judge is measured against. The word
lists are features of the local judge, not its decision.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal, Protocol

import numpy as np

from halls.consolidate.reconcile import CHANGE, NEGATION, STOP, Decision, Known, _stem, decide

Label = Literal["same", "update", "retract", "unrelated"]
LABELS: tuple[Label, ...] = ("same", "update", "retract", "unrelated")

_TOKEN = re.compile(r"[A-Za-z0-9~][A-Za-z0-9~./:-]*")
ADDITIVE = frozenset(
    "also too well another addition besides second either extra both additionally more".split()  # noqa: SIM905
)
RETRACT = frozenset(
    (  # noqa: SIM905 - a string reads better
        "stopped stop quit gave give left leave cancelled canceled dropped drop removed sold "
        "anymore longer ended discontinued abandoned rid died passed shut closed off ex former "
        "retired resigned"
    ).split()
)
EPISODIC = frozenset(
    "today yesterday tonight morning afternoon evening tomorrow week weekend earlier".split()  # noqa: SIM905
)


@dataclass(frozen=True, slots=True)
class Pair:
    """Two statements, the earlier first; vectors are unit-length embeddings."""

    earlier: str
    later: str
    earlier_vec: np.ndarray
    later_vec: np.ndarray

    @property
    def similarity(self) -> float:
        return float(self.earlier_vec @ self.later_vec)


@dataclass(frozen=True, slots=True)
class Judgement:
    label: Label
    confidence: float  # the judge's probability of the label, 0..1
    by: str  # which judge answered


class Judge(Protocol):
    name: str

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]: ...


# -- lexical features --


@dataclass(frozen=True, slots=True)
class _Words:
    content: frozenset[str]
    names: frozenset[str]  # capitalised words past the first, lower-cased
    numbers: frozenset[str]
    change: bool
    negated: bool
    additive: bool
    retract: bool
    episodic: bool
    first: str
    length: int
    order: tuple[str, ...]  # content words in sentence order


@lru_cache(maxsize=65536)
def _words(text: str) -> _Words:
    clean = text.replace("’", "'").replace("n't", " not")
    raw = _TOKEN.findall(clean)
    low = [w.lower().rstrip(".:") for w in raw]
    stems = [_stem(w.removesuffix("'s")) for w in low]
    names = frozenset(w.lower() for n, w in enumerate(raw) if n and w[:1].isupper())
    numbers = frozenset(w for w in low if any(ch.isdigit() for ch in w))
    joined = " ".join(low)
    content = [
        w
        for w in stems
        if (len(w) > 1 or w.isdigit()) and w not in STOP and w not in CHANGE and w not in NEGATION
    ]
    return _Words(
        content=frozenset(content),
        names=names,
        numbers=numbers,
        change=any(w in CHANGE for w in stems),
        negated=any(w in NEGATION for w in stems) or "no longer" in joined,
        additive=any(w in ADDITIVE for w in stems) or "as well" in joined,
        retract=any(w in RETRACT for w in stems),
        episodic=any(w in EPISODIC for w in stems),
        first=content[0] if content else "",
        length=len(low),
        order=tuple(content),
    )


def _first_change(words: tuple[str, ...], other: frozenset[str]) -> float:
    """Where (0 = first word .. 1 = last) the first content word not in ``other`` sits."""
    for n, w in enumerate(words):
        if w not in other:
            return n / max(len(words) - 1, 1)
    return 1.0


N_LEXICAL = 27


def lexical(earlier: str, later: str, similarity: float) -> np.ndarray:
    a, b = _words(earlier), _words(later)
    union = a.content | b.content
    novel = b.content - a.content
    dropped = a.content - b.content
    return np.array(
        [
            similarity,
            similarity * similarity,
            len(a.content & b.content) / max(len(union), 1),
            len(novel) / max(len(b.content), 1),
            len(dropped) / max(len(a.content), 1),
            min(len(novel), 5) / 5,
            min(len(dropped), 5) / 5,
            min(len(b.names - a.names), 3) / 3,
            min(len(a.names - b.names), 3) / 3,
            float(a.numbers != b.numbers),
            # Markers count where only the later statement has them: two
            # entries that both say "also" or "now" say the same thing.
            float(b.change and not a.change),
            float(a.change and b.change),
            float(b.negated and not a.negated),
            float(a.negated and not b.negated),
            float(a.negated and b.negated),
            float(b.additive and not a.additive),
            float(a.additive),
            float(b.retract and not a.retract),
            float(b.episodic),
            float(a.episodic),
            float(a.first == b.first),
            (b.length - a.length) / max(a.length + b.length, 1),
            min(len(novel), len(dropped)) / 5,
            float(bool(b.names - a.names) and bool(a.names - b.names)),
            float(bool(b.numbers - a.numbers) and bool(a.numbers - b.numbers)),
            # A difference up front is another subject; at the end, another value.
            _first_change(a.order, b.content),
            _first_change(b.order, a.content),
        ],
        dtype=np.float32,
    )


def features(pairs: Sequence[Pair], embedding: bool = True) -> np.ndarray:
    """One row per pair: |u-v| and u*v (if ``embedding``), then the lexical features."""
    if not pairs:
        return np.zeros((0, N_LEXICAL + (768 if embedding else 0)), dtype=np.float32)
    u = np.stack([p.earlier_vec for p in pairs]).astype(np.float32)
    v = np.stack([p.later_vec for p in pairs]).astype(np.float32)
    sims = np.einsum("ij,ij->i", u, v)
    lex = np.stack(
        [lexical(p.earlier, p.later, float(s)) for p, s in zip(pairs, sims, strict=True)]
    )
    return np.hstack([np.abs(u - v), u * v, lex]) if embedding else lex


# -- the judges --


class LocalJudge:
    """A two-layer MLP over ``features``; weights from ``judge_data/judge.npz``."""

    name = "local"

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.mean = weights["mean"].astype(np.float32)
        self.std = weights["std"].astype(np.float32)
        self.w1 = weights["w1"].astype(np.float32)
        self.b1 = weights["b1"].astype(np.float32)
        self.w2 = weights["w2"].astype(np.float32)
        self.b2 = weights["b2"].astype(np.float32)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        h = np.maximum(((x - self.mean) / self.std) @ self.w1 + self.b1, 0.0)
        z = h @ self.w2 + self.b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        if not pairs:
            return []
        # A model trained on the lexical features alone needs no |u-v|, u*v.
        p = self.probabilities(features(pairs, embedding=self.w1.shape[0] > N_LEXICAL))
        best = p.argmax(axis=1)
        return [Judgement(LABELS[int(k)], float(p[n, k]), self.name) for n, k in enumerate(best)]


class WordJudge:
    """The word-list rule of ``reconcile.decide`` behind the judge protocol."""

    name = "words"
    _LABEL: dict[str, Label] = {
        "NONE": "same",
        "UPDATE": "update",
        "DELETE": "retract",
        "ADD": "unrelated",
    }

    def __init__(self, match_threshold: float = 0.75, related_threshold: float = 0.55) -> None:
        self.match = match_threshold
        self.related = related_threshold

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        out = []
        for p in pairs:
            d = decide(
                p.later,
                [Known("x", p.earlier, p.similarity)],
                match_threshold=self.match,
                related_threshold=self.related,
            )
            out.append(Judgement(self._LABEL[d.kind], 1.0, self.name))
        return out


WEIGHTS = "judge_data/judge.npz"


@lru_cache(maxsize=1)
def _weights() -> dict[str, np.ndarray] | None:
    try:
        path = resources.files("halls.consolidate").joinpath(WEIGHTS)
        with path.open("rb") as fh, np.load(fh) as data:
            return {k: data[k] for k in data.files}
    except (FileNotFoundError, OSError):
        return None


def default_judge(match_threshold: float = 0.75, related_threshold: float = 0.55) -> Judge:
    """The shipped local judge; the word lists only if its weights are missing."""
    weights = _weights()
    if weights is None:
        return WordJudge(match_threshold, related_threshold)
    return LocalJudge(weights)


_KIND = {"same": "NONE", "update": "UPDATE", "retract": "DELETE"}
EXPLICIT = 0.5  # an update or retraction judged this sure needs no repetition


def decide_judged(known: Sequence[Known], judged: Sequence[tuple[Known, Judgement]]) -> Decision:
    """Reconcile a candidate from the judge's answers about it and known facts.

    ``known`` are the nearest facts, ``judged`` those the judge was asked
    about (the ones above the related threshold) with its answers. The most
    confident answer other than ``unrelated`` names the fact the candidate
    confirms, changes or retracts; none: ``ADD``.
    """
    best: tuple[float, Known, Judgement] | None = None
    for k, j in judged:
        if j.label == "unrelated":
            continue
        if best is None or j.confidence > best[0]:
            best = (j.confidence, k, j)
    if best is None:
        if not known:
            return Decision("ADD", None, "no long-term fact is about this yet")
        near = max(known, key=lambda k: k.similarity)
        return Decision(
            "ADD",
            None,
            f"nearest fact {near.id} is about something else (cosine {near.similarity:.2f})",
        )
    _, k, j = best
    kind = _KIND[j.label]
    how = {"NONE": "restates", "UPDATE": "changes", "DELETE": "retracts"}[kind]
    why = f"{how} {k.id} (judge {j.by}: {j.label} {j.confidence:.2f}, cosine {k.similarity:.2f})"
    explicit = kind != "NONE" and j.confidence >= EXPLICIT
    return Decision(kind, k.id, why, explicit=explicit)


def load_pairs() -> list[tuple[str, str, str]]:
    """The labelled pairs the local judge was trained on: (label, earlier, later)."""
    text = resources.files("halls.consolidate").joinpath("judge_data/pairs.txt").read_text("utf-8")
    out: list[tuple[str, str, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3 or parts[0] not in LABELS:
            raise ValueError(f"pairs.txt:{n}: not 'LABEL | earlier | later'")
        out.append((parts[0], parts[1], parts[2]))
    return out


def held_out(pairs: list[tuple[str, str, str]], seed: int = 11) -> set[str]:
    """The earlier statements whose pairs are held out (a quarter, by fact)."""
    import random

    groups = sorted({a for _, a, _ in pairs})
    random.Random(seed).shuffle(groups)
    return set(groups[: len(groups) // 4])
