"""Redaction of secrets and personal data from what users write.

Every write of user text (journal events, short-term entries and their
edits, open loops, briefs, forget reasons, and the string values of
metadata) passes
through ``redact`` in the service layer, so that a pasted API key, a
social security number or a card number is never stored, and so never
promoted into long-term memory. Patterns are deliberately specific (known
key shapes, explicit ``password=``, an address with a domain, a number
that Google's libphonenumber reads as a valid phone number, an SSN with
valid parts, a card number whose Luhn check digit holds): a false positive
hides a word of a conversation, a false negative keeps a credential or
someone's personal data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import phonenumbers
from pydantic import BaseModel, computed_field

# The shapes of secrets, by kind: what the journal redacts, and what the
# consolidator's PII detection (halls.consolidate.pii) also looks for.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*")),
    ("api_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}")),
    ("api_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("api_key", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("api_key", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b")),
    ("api_key", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    (
        "password",
        re.compile(
            r"(?i)\b(?P<key>pass(?:word|wd)?|pwd|secret|api[_-]?key|(?:access|auth|refresh|api)[_-]?token|token)"
            r"(?P<sep>\s*[=:]\s*)(?P<val>\"[^\"]+\"|'[^']+'|\S+)"
        ),
    ),
)


# National identifiers and payment cards, checked so that an order number
# or a date survives: an SSN's parts by its pattern, a card's check digit by
# ``card_number`` before it is redacted.
# A US SSN: area not 000, 666 or 9xx, group not 00, serial not 0000 (the SSA
# never issues those); written 123-45-6789 or 123 45 6789, or nine bare
# digits right after the words that name one.
SSN = re.compile(
    r"(?<![\w-])(?!000|666|9\d\d)\d{3}(?P<sep>[- ])(?!00)\d{2}(?P=sep)(?!0000)\d{4}(?![\w-])"
    r"|(?i:\b(?:ssn|social security(?: number)?)\D{0,20}?)"
    r"(?<!\d)(?P<bare>(?!000|666|9\d\d)\d{3}(?!00)\d{2}(?!0000)\d{4})(?!\d)"
)
# A payment card: 13 to 19 digits, spaces or dashes between any of them,
# starting as the networks' numbers do (2-6: Mastercard, Amex, Diners, JCB,
# Visa, Discover, UnionPay); never the middle of a longer digit run.
CARD = re.compile(r"(?<![\w-])(?<!\d[ -])[2-6](?:[ -]?\d){12,18}(?![\w-])(?![ -]\d)")
CARD_DIGITS = range(13, 20)
ID_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (("ssn", SSN), ("credit_card", CARD))


def luhn(digits: str) -> bool:
    """Whether the last digit of ``digits`` is its Luhn check digit (as every card's is)."""
    total = 0
    for n, ch in enumerate(reversed(digits)):
        d = int(ch)
        if n % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_number(text: str) -> bool:
    """A matched run of digits is a card number if its length and check digit say so."""
    digits = re.sub(r"\D", "", text)
    return len(digits) in CARD_DIGITS and luhn(digits)


# Personal contact data: what writes redact besides secrets and identifiers,
# and what the consolidator's PII detection (halls.consolidate.pii) also looks for.
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
PII_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (("email", EMAIL),)

# Phone numbers are found by libphonenumber, not by a shape: a digit run
# is a phone only if it is a valid number in some country's numbering plan,
# so an order number, a millisecond timestamp or a build number survives.
# A number written with + and its country code (+44 20 7946 0958) is found
# whatever the region; a national one ((415) 555-2671, 020 7946 0958) is
# read in PHONE_REGION's plan alone. "US": halls has no locale setting, and
# redaction runs in pure functions that get no settings (every write path,
# the consolidator), so the region is fixed here; a national number of
# another country goes unredacted unless it is written with its +code,
# and a bare ten-digit id that is a valid US number reads as a phone.
PHONE_REGION = "US"
# VALID: the number must be valid for its plan (area code, length), not
# merely possible; STRICT_GROUPING would also miss a number typed with
# unusual spacing ("4155 55 2671"), which is still someone's number.
PHONE_LENIENCY = phonenumbers.Leniency.VALID


def phones(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds phone numbers: each one's (start, end), in order."""
    # Cost: redact() went from ~14 to ~50 us a chat sentence (10,000, one in
    # ten with a phone; a text without digits ~2 us), against ~2 ms of
    # embedding per memory written (docs/benchmarks.md): not worth a cache.
    matches = phonenumbers.PhoneNumberMatcher(text, PHONE_REGION, leniency=PHONE_LENIENCY)
    return [(m.start, m.end) for m in matches]


def _credential_like(value: str) -> bool:
    """A bare "token" value is a secret only if it looks generated: long, letters and digits."""
    value = value.strip("\"'")
    return len(value) >= 12 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def redact(text: str) -> tuple[str, int]:
    """Return the text with secrets and personal data replaced by ``[REDACTED:kind]``,
    and how many were replaced."""
    count = 0

    for kind, pattern in SECRET_PATTERNS:

        def _sub(m: re.Match[str], kind: str = kind) -> str:
            nonlocal count
            if m.group(0).startswith("[REDACTED"):
                return m.group(0)
            count += 1
            if kind == "password":
                if m.group("key").lower() == "token" and not _credential_like(m.group("val")):
                    count -= 1  # "max token: 512" is prose about tokens
                    return m.group(0)
                if m.group("val").startswith("[REDACTED"):
                    count -= 1
                    return m.group(0)
                return f"{m.group('key')}{m.group('sep')}[REDACTED:{kind}]"
            return f"[REDACTED:{kind}]"

        text = pattern.sub(_sub, text)

    def _personal(m: re.Match[str], kind: str) -> str:
        nonlocal count
        if kind == "credit_card" and not card_number(m.group(0)):
            return m.group(0)
        count += 1
        if kind == "ssn" and m.group("bare"):
            # "SSN: 123456789": the words stay, the number goes.
            return m.group(0)[: m.start("bare") - m.start()] + "[REDACTED:ssn]"
        return f"[REDACTED:{kind}]"

    # Identifiers before phones: a card's digits could otherwise read as a phone's.
    for kind, pattern in (*ID_PATTERNS, *PII_PATTERNS):
        text = pattern.sub(partial(_personal, kind=kind), text)
    found = phones(text)
    for start, end in reversed(found):  # from the end, so earlier spans keep their offsets
        text = f"{text[:start]}[REDACTED:phone]{text[end:]}"
    return text, count + len(found)


Scrub = Callable[[str], tuple[str, int]]


def redact_value(value: Any, scrub: Scrub = redact) -> tuple[Any, int]:
    """``value`` (a JSON value: metadata) with every string in it redacted, and the count.

    Keys are names a program chose, not what a user said: they are kept, so
    that two keys can never become one.
    """
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            out[key], n = redact_value(item, scrub)
            total += n
        return out, total
    if isinstance(value, list):
        items = [redact_value(item, scrub) for item in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


# What a redaction leaves in a text: a record shows how many it holds.
MARK = re.compile(r"\[REDACTED:[a-z_]+\]")


def marks(value: Any) -> int:
    """How many redaction marks ``value`` (a string or a JSON value) holds."""
    if isinstance(value, str):
        return len(MARK.findall(value))
    if isinstance(value, dict):
        return sum(marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(marks(v) for v in value)
    return 0


def redaction_count(*fields: str) -> Any:
    """A record's ``redactions`` (a pydantic computed field): the marks its ``fields`` hold.

    Read from the marks, never stored: an edit that replaces a text drops
    its marks with it, and the count follows without bookkeeping.
    """

    def count(self: BaseModel) -> int:
        return marks([getattr(self, f) for f in fields])

    return computed_field(  # type: ignore[call-overload]
        property(count),
        return_type=int,
        description="How many values were redacted (secrets, personal data) from what was written.",
    )


__all__ = [
    "ID_PATTERNS",
    "MARK",
    "PII_PATTERNS",
    "SECRET_PATTERNS",
    "card_number",
    "luhn",
    "marks",
    "phones",
    "redact",
    "redact_value",
    "redaction_count",
]
