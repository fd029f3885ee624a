"""PII and secret detection, and the class of a forget flag (pure).

A forget flag is acted on by class:

- ``pii``: the reason is about PII or a secret (read by meaning in
  ``consolidate.reasons``; by the keyword lists below only when the
  embedder fails), or the fact's content matches a detector below -> purge
  (the one true deletion; a writer's flag demotes instead, ``plan``);
- ``wrong``: the reason disputes the fact -> demote (kept for history);
- ``stale``: the reason says it is out of date -> decay;
- anything else -> demote, the reversible choice.

The detectors err towards purging: keeping an SSN by mistake is worse than
purging a fact someone could state again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from halls.redact import EMAIL, MARK, SECRET_PATTERNS, luhn, phones  # shared

# Broader than what a write redacts (halls.redact.ID_PATTERNS): any
# 3-2-4 digits, any card-length run, since a flagged fact is purged, not hidden.
_PII: list[tuple[str, re.Pattern[str]]] = [
    ("ssn", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    ("ssn", re.compile(r"(?i)\b(?:ssn|social security(?: number)?)\D{0,20}(\d{9})\b")),
    ("email", EMAIL),
    ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b")),
    (
        "address",
        re.compile(
            r"(?i)\b\d{1,5}\s+(?:[A-Z][\w'-]*\s+){1,4}(?:street|st|avenue|ave|road|rd|lane|ln|"
            r"drive|dr|boulevard|blvd|court|ct|way|place|pl|terrace|strasse|straße)\b\.?"
        ),
    ),
]
_CARD = re.compile(r"\b(?:\d[ -]?){12,18}\d\b")

PII_WORDS = re.compile(
    r"(?i)\b(?:pii|ssn|social security|passwords?|passcodes?|passphrases?|pins?|api[ _-]?keys?|"
    r"tokens?|secrets?|private[ _-]?keys?|credentials?|credit[ _-]?cards?|card numbers?|cvv|"
    r"iban|bank account|account numbers?|addresse?s?|home address|phone(?: numbers?)?|"
    r"mobile numbers?|e-?mails?|passports?|driver'?s licen[cs]e|date of birth|birth ?date|"
    r"medical|diagnos\w*|health record|personal (?:data|information|info)|sensitive|"
    r"confidential)\b"
)
WRONG_WORDS = re.compile(
    r"(?i)\b(?:wrong|incorrect|false|untrue|not true|not right|mistaken|mistake|inaccurate|"
    r"disputed?|error|erroneous|hallucinat\w*|made up|never said|bogus|nonsense|misunderstood)\b"
)
STALE_WORDS = re.compile(
    r"(?i)\b(?:stale|outdated|out of date|old|obsolete|no longer|not relevant|irrelevant|"
    r"expired|deprecated|superseded|no longer true|not anymore)\b"
)


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    value: str


def detect(text: str) -> list[Finding]:
    """PII and secrets in ``text``: each kind and the exact matched text."""
    found: list[Finding] = []
    for kind, pattern in _PII:
        for m in pattern.finditer(text):
            value = m.group(m.lastindex or 0)
            found.append(Finding(kind, value.strip()))
    found += [Finding("phone", text[start:end]) for start, end in phones(text)]
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and luhn(digits):
            found.append(Finding("credit_card", m.group(0)))
    for kind, pattern in SECRET_PATTERNS:
        for m in pattern.finditer(text):
            found.append(Finding(kind, m.group(0)))
    # Longest first, so that scrubbing a value never leaves a longer one half-done.
    unique = {f.value: f for f in found if f.value}
    return sorted(unique.values(), key=lambda f: -len(f.value))


def classify_reason(reason: str) -> str | None:
    """``pii``, ``wrong``, ``stale`` or None, from a forget flag's reason alone."""
    # A reason is redacted when it is written: a mark is where its PII was.
    if PII_WORDS.search(reason) or MARK.search(reason) or detect(reason):
        return "pii"
    if WRONG_WORDS.search(reason):
        return "wrong"
    if STALE_WORDS.search(reason):
        return "stale"
    return None


def forget_class(reason: str, content: str, cls: str | None = None) -> tuple[str, str]:
    """(class, why) for a flagged fact: purge, demote or decay.

    ``cls`` is the reason's class as read by meaning (``consolidate.reasons``);
    without one, the keyword lists above read the reason.
    """
    found = detect(content)
    if found:
        kinds = ", ".join(sorted({f.kind for f in found}))
        return "purge", f"content contains {kinds}"
    cls = cls or classify_reason(reason)
    if cls == "pii":
        return "purge", "the reason names PII or a secret"
    if cls == "stale":
        return "decay", "the reason says it is stale"
    if cls == "wrong":
        return "demote", "the reason disputes it"
    return "demote", "the reason names no PII and no staleness; demoted (kept for history)"
