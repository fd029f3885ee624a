"""Secret and contact-data redaction for the journal.

The journal is the verbatim record, so it is the place a pasted API key
(or a phone number, an e-mail address) would otherwise live forever.
Patterns are deliberately specific (known key shapes, explicit
``password=``, an address with a domain, a number of at least ten digits):
a false positive hides a word of a conversation, a false negative keeps a
credential or someone's contact data.
"""

from __future__ import annotations

import re
from functools import partial

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


# Personal contact data: what the journal redacts besides secrets, and what
# the consolidator's PII detection (halls.consolidate.pii) also looks for.
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
PHONE = re.compile(
    r"(?<![\w-])(?<!\d[\s.])\+?\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{3,4}\b"
    r"(?![\s.-]?\d)"  # not the head of a longer digit run (a card number)
)
PHONE_MIN_DIGITS = 10
PII_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (("email", EMAIL), ("phone", PHONE))


def _credential_like(value: str) -> bool:
    """A bare "token" value is a secret only if it looks generated: long, letters and digits."""
    value = value.strip("\"'")
    return len(value) >= 12 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def redact(text: str) -> tuple[str, int]:
    """Return the text with secrets replaced by ``[REDACTED:kind]``, and the count."""
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

    def _contact(m: re.Match[str], kind: str) -> str:
        nonlocal count
        if kind == "phone" and sum(ch.isdigit() for ch in m.group(0)) < PHONE_MIN_DIGITS:
            return m.group(0)
        count += 1
        return f"[REDACTED:{kind}]"

    for kind, pattern in PII_PATTERNS:
        text = pattern.sub(partial(_contact, kind=kind), text)
    return text, count


__all__ = ["PII_PATTERNS", "SECRET_PATTERNS", "redact"]
