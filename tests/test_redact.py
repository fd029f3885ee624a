"""Redaction of secrets and personal data (halls.redact)."""

from __future__ import annotations

import pytest

from halls.redact import luhn, marks, phones, redact, redact_value

SECRETS = [
    ("openai key", "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0kLmN", "api_key"),
    ("anthropic key", "sk-ant-" + "api03-Zx9Yw8Vu7Ts6Rq5Po4", "api_key"),
    ("aws access key", "AKIAIOSFODNN7EXAMPLE", "api_key"),
    ("github token", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "api_key"),
    ("github pat", "github_pat_" + "11ABCDEFG0" * 5, "api_key"),
    ("slack token", "xoxb-123456789012-abcdefABCDEF", "api_key"),
    ("google key", "AIza" + "SyD-abcdefghijklmnopqrstuvwxyz01234", "api_key"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "jwt"),
    ("bearer", "Bearer abcDEF123456ghiJKL", "bearer_token"),
]


@pytest.mark.parametrize(("label", "secret", "kind"), SECRETS, ids=[s[0] for s in SECRETS])
def test_each_secret_kind_is_redacted(label: str, secret: str, kind: str) -> None:
    """The secret is gone, replaced by a marker naming its kind; the prose around stays."""
    text, count = redact(f"here is my {label}: {secret} thanks")
    assert secret not in text
    assert f"[REDACTED:{kind}]" in text
    assert text.startswith("here is my ") and text.endswith(" thanks")
    assert count == 1


def test_private_key_block_is_redacted_whole() -> None:
    """A PEM private key block, header to footer, becomes one marker."""
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nxyz==\n-----END RSA PRIVATE KEY-----"
    text, count = redact(f"key:\n{pem}\ndone")
    assert text == "key:\n[REDACTED:private_key]\ndone"
    assert count == 1


def test_truncated_private_key_is_redacted_to_the_end() -> None:
    """A pasted key with no footer is still hidden, to the end of the text."""
    text, count = redact("oops -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk")
    assert text == "oops [REDACTED:private_key]"
    assert count == 1


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("password=hunter2 ok", "password=[REDACTED:password] ok"),
        ("PASSWORD: hunter2", "PASSWORD: [REDACTED:password]"),
        ("pwd = 'correct horse battery'", "pwd = [REDACTED:password]"),
        ('secret="a b c" end', "secret=[REDACTED:password] end"),
        ("api_key=abc123", "api_key=[REDACTED:password]"),
        ("access-token: zzz", "access-token: [REDACTED:password]"),
    ],
)
def test_password_assignments_keep_the_key(source: str, expected: str) -> None:
    """`password=...`-style assignments hide only the value, quoted values whole."""
    assert redact(source) == (expected, 1)


@pytest.mark.parametrize(
    "prose",
    [
        "I passed the test and the password is required on login.",
        "The token ring network was popular in the 80s.",
        "Use skip-list or sk-short; AKIA is a prefix.",
        "Bearer bonds are rare.",
        "We met at the café at 10:30, bring the keys.",
        "",
    ],
)
def test_normal_prose_is_untouched(prose: str) -> None:
    """Ordinary text, even near-miss words, comes back identical with count 0."""
    assert redact(prose) == (prose, 0)


def test_count_is_the_number_of_secrets() -> None:
    """Several secrets in one text are each redacted and counted once."""
    source = (
        "keys: sk-" + "x" * 24 + " and AKIAIOSFODNN7EXAMPLE, "
        "password=pw1 and Authorization: Bearer tok_abcdefgh12345"
    )
    text, count = redact(source)
    assert count == 4
    assert "pw1" not in text and "tok_abcdefgh12345" not in text
    assert text.count("[REDACTED:") == 4


def test_key_in_an_assignment_is_counted_once() -> None:
    """`api_key: sk-...` is one secret, not two, however the patterns overlap."""
    text, count = redact("api_key: sk-" + "q" * 30)
    assert count == 1
    assert text == "api_key: [REDACTED:api_key]"


def test_redaction_is_idempotent() -> None:
    """Redacting redacted text changes nothing and counts nothing."""
    source = "password=hunter2, sk-" + "x" * 24 + ", Bearer abcdefghijkl, AKIAIOSFODNN7EXAMPLE"
    once, n1 = redact(source)
    twice, n2 = redact(once)
    assert n1 == 4
    assert (twice, n2) == (once, 0)


def test_a_bare_token_count_is_not_a_secret() -> None:
    """'max token: 512' is prose about tokens, not a credential: it stays."""
    text = "set max token: 512 and token=4 per step"
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("mail me at ana.lima@example.org please", "mail me at [REDACTED:email] please"),
        ("my cell is +1 415 555 0134.", "my cell is [REDACTED:phone]."),
        ("office: +49 30 1234 5678", "office: [REDACTED:phone]"),
    ],
)
def test_contact_data_is_redacted(source: str, expected: str) -> None:
    """E-mail addresses and phone numbers are personal data the journal must not keep."""
    assert redact(source) == (expected, 1)


@pytest.mark.parametrize(
    "phone",
    [
        "(415) 555-2671",  # national, read in the US plan (PHONE_REGION)
        "415-555-2671",
        "415.555.2671",
        "4155552671",
        "1-800-555-0199",
        "+1 415-555-2671",
        "+1 (212) 456-7890",
        "+44 20 7946 0958",  # any country, written with its code
        "+33 1 42 68 53 00",
        "+91 98765 43210",
        "+4915123456789",
        "011 44 20 7946 0958",  # the US prefix for dialling abroad
    ],
)
def test_phone_numbers_in_many_formats_are_redacted(phone: str) -> None:
    """A number valid in its country's plan is hidden whole, however it is grouped."""
    assert redact(f"call {phone} after six") == ("call [REDACTED:phone] after six", 1)


def test_a_national_number_of_another_country_is_read_in_the_us_plan() -> None:
    """'020 7946 0958' (London, no +44) is not a US number: it is kept, as documented."""
    text = "office 020 7946 0958"
    assert redact(text) == (text, 0)


@pytest.mark.parametrize(
    "prose",
    [
        "order 12345 shipped",
        "on 2023-05-08 at 10:30",
        "v1.2.3",
        "Order #40021787364521 shipped",  # 14 digits
        "logged at 1732790400000",  # a timestamp in milliseconds
        "unix time 1732790400",  # in seconds: no US area code starts with 1 or 7
        "build 20261128153012 passed",
        "ticket 900213774 and job 123456789012",
        "deploy on 2026-11-28, again on 28/11/2026 at 14:30",
        "upgrade to 10.2.14 or 2.1.3",
        "server at 10.0.4.12 and 192.168.100.200",
        "it was $1,299.99, or 1 299,99 EUR",
        "call 555-2671",  # seven digits, no area code: not a valid number
    ],
)
def test_numbers_that_are_not_phones_are_kept(prose: str) -> None:
    """Digit runs, dates, versions, IPs and prices are not in any numbering plan: they stay."""
    assert redact(prose) == (prose, 0)


def test_phones_gives_each_numbers_span() -> None:
    """``phones`` (shared with halls.consolidate.pii) finds every number, in order."""
    text = "home (415) 555-2671, work +44 20 7946 0958, order 40021787364521"
    assert [text[s:e] for s, e in phones(text)] == ["(415) 555-2671", "+44 20 7946 0958"]
    assert redact(text) == ("home [REDACTED:phone], work [REDACTED:phone], order 40021787364521", 2)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("my SSN is 536-22-8143.", "my SSN is [REDACTED:ssn]."),
        ("ssn 536 22 8143 ok", "ssn [REDACTED:ssn] ok"),
        ("SSN: 536228143", "SSN: [REDACTED:ssn]"),
        ("social security number is 078051120", "social security number is [REDACTED:ssn]"),
        ("card 4539 1488 0343 6467 exp 12/29", "card [REDACTED:credit_card] exp 12/29"),
        ("mc 5425-2334-3010-9903", "mc [REDACTED:credit_card]"),
        ("amex 3714 496353 98431 ok", "amex [REDACTED:credit_card] ok"),
        ("paid with 2223000048410010", "paid with [REDACTED:credit_card]"),
    ],
)
def test_ssns_and_card_numbers_are_redacted(source: str, expected: str) -> None:
    """An SSN (with dashes, spaces, or named) and a Luhn-valid card number are hidden whole."""
    assert redact(source) == (expected, 1)


@pytest.mark.parametrize(
    "prose",
    [
        "tracking 4716 2088 3461 7721",  # 16 digits, Luhn check fails
        "order #4716208834617721 shipped",
        "Amazon order 112-4810577-2039451 arrives Friday",
        "the build 123456789 passed",  # nine digits, no word naming an SSN
        "ids 000-12-3456, 666-12-3456, 912-12-3456, 536-00-8143, 536-22-0000",  # never issued
        "ISBN 978-3-16-148410-0, on 2023-05-08",
        "a run of 41111111111111111111111 digits",  # longer than any card
        "4539 1488 0343 6467 8812 5",  # a valid card's digits inside a longer run
    ],
)
def test_look_alike_numbers_are_kept(prose: str) -> None:
    """Numbers that only look like an SSN or a card (invalid parts, bad check digit) stay."""
    assert redact(prose) == (prose, 0)


def test_luhn() -> None:
    """The Luhn check accepts a card's check digit and refuses any other."""
    assert luhn("4539148803436467") and luhn("371449635398431")
    assert not any(luhn(f"453914880343646{d}") for d in "012345689")


def test_json_values_are_redacted_keys_kept() -> None:
    """Every string in a JSON value is redacted, at any depth; keys and other values stay."""
    value = {"ssn": "536-22-8143", "cards": [{"n": "4539 1488 0343 6467"}, 7], "ok": None}
    out, count = redact_value(value)
    assert out == {
        "ssn": "[REDACTED:ssn]",
        "cards": [{"n": "[REDACTED:credit_card]"}, 7],
        "ok": None,
    }
    assert count == 2 and marks(out) == 2
    assert redact_value(out) == (out, 0)
