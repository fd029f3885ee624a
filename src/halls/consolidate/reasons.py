"""The class of a forget flag's reason, read by meaning: ``pii``, ``wrong`` or ``stale``.

A reason is embedded with the store's embedder (the packaged MiniLM by
default) and takes the class of the nearest prototype description in
``data/forget_reasons.tsv`` (cosine): "contains private health information,
please remove" is near "details of my health, an illness, a medical
treatment or medication" though it names none of the keywords. A reason
that holds PII itself, or a redaction mark where PII was, is ``pii`` before
any comparison. Only if the embedder fails are the keyword lists
(``pii.classify_reason``) read instead.

Measured on tests/data/forget_reasons.tsv (72 reasons written by hand
before this ran on them): see the CHANGELOG entry and
tests/test_forget_reasons.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import numpy as np

from halls.consolidate.pii import classify_reason, detect
from halls.errors import HallsError
from halls.redact import MARK

log = logging.getLogger("halls.consolidate")

PROTOTYPES = Path(__file__).resolve().parent / "data" / "forget_reasons.tsv"
CLASSES = ("pii", "wrong", "stale")

Embed = Callable[[list[str]], np.ndarray]

__all__ = ["CLASSES", "PROTOTYPES", "by_meaning", "classify", "prototypes"]


@cache
def prototypes() -> tuple[tuple[str, str], ...]:
    """(class, description) per line of the prototype file."""
    rows = []
    lines = PROTOTYPES.read_text(encoding="utf-8").splitlines()
    body = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    for line in body[1:]:  # the first is the header
        cls, text = line.split("\t", 1)
        if cls not in CLASSES:
            raise ValueError(f"{PROTOTYPES.name}: unknown class {cls!r}")
        rows.append((cls, text.strip()))
    return tuple(rows)


def by_meaning(reasons: Sequence[str], embed: Embed) -> list[str]:
    """The class of the nearest prototype, per reason (pure but for ``embed``)."""
    protos = prototypes()
    vectors = embed([text for _, text in protos] + list(reasons))
    known, asked = vectors[: len(protos)], vectors[len(protos) :]
    # Rows are unit length (Embedder.embed): the dot product is the cosine.
    nearest = np.argmax(asked @ known.T, axis=1) if len(asked) else []
    return [protos[int(n)][0] for n in nearest]


def classify(reasons: Sequence[str], embed: Embed) -> list[str | None]:
    """``pii``, ``wrong``, ``stale`` per reason; None only when the keywords find none."""
    out: list[str | None] = [None] * len(reasons)
    todo: list[int] = []
    for n, reason in enumerate(reasons):
        # PII written in the reason (or its redaction mark) is data, not a reading.
        if MARK.search(reason) or detect(reason):
            out[n] = "pii"
        else:
            todo.append(n)
    if not todo:
        return out
    try:
        found: list[str | None] = list(by_meaning([reasons[n] for n in todo], embed))
    except HallsError as exc:
        log.warning("forget reasons read by keyword: the embedder failed (%s)", exc.message)
        found = [classify_reason(reasons[n]) for n in todo]
    for n, cls in zip(todo, found, strict=True):
        out[n] = cls
    return out
