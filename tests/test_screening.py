"""Every write of user text is screened, over the live HTTP API.

Journal events, short-term entries (created, batched, edited), open loops,
briefs, forget reasons and the string values of metadata: an SSN or a
Luhn-valid card number is redacted before anything is stored, the record
says how many values were (``redactions``), and the bytes never reach the
store (its SQLite files and WAL, or its PostgreSQL rows). Numbers that only
look like one are kept. Last, end to end: a secret said on two days never
becomes, nor reaches, a long-term fact, even when it was stored before
writes were screened.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, serve
from conftest import LiveServer
from halls import Memory, Settings
from halls.config import StorageSettings
from halls.models import ShortEntry, new_id, to_datetime
from halls.store import open_backend
from http_helpers import created

# Look-alikes in the shapes users paste; none is a real person's or card.
SSN = "536-22-8143"
CARD = "4539 1488 0343 6467"  # Luhn-valid
CARD_DIGITS = CARD.replace(" ", "")
AMEX = "3714-496353-98431"  # Luhn-valid
# Kept: a 16-digit number whose check digit fails, an order number, an
# SSN-shaped id the SSA never issues.
NOT_A_CARD = "4716 2088 3461 7721"
ORDER = "112-4810577-2039451"
NOT_AN_SSN = "000-12-3456"
API_KEY = "sk-proj-Q7vX2mN9pL4kR8tY1wZ6bC3dF5gH0jKs"
# Numbers libphonenumber reads as valid (a US one written nationally, a UK
# one with its code), and long digit runs that are in no numbering plan.
PHONE_US = "(415) 555-2671"
PHONE_UK = "+44 20 7946 0958"
ORDER_ID = "40021787364521"
MILLIS = "1732790400000"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"


@pytest.fixture(scope="session")
def server(api_server: LiveServer) -> LiveServer:
    """These HTTP API tests run on both backends (conftest's ``api_server``)."""
    return api_server


def stored(server: LiveServer, store: str, *needles: str) -> list[str]:
    """Which ``needles`` are anywhere in what the store keeps (files and WAL, or rows)."""
    with server.store(store) as handle:
        return [n for n in needles if handle.holds(n)]


def test_journal_redacts_ssn_and_card_in_content_and_metadata(server, store_name) -> None:
    """POST /journal: SSN and card hidden in content and metadata, counted, never stored."""
    c = server.client()
    body = created(
        c, "/journal", store_name,
        {"content": f"user: my SSN is {SSN} and my card {CARD}", "role": "user",
         "metadata": {"note": f"card {AMEX}", "turn": 3}},
    )  # fmt: skip
    assert body["content"] == "user: my SSN is [REDACTED:ssn] and my card [REDACTED:credit_card]"
    assert body["metadata"] == {"note": "card [REDACTED:credit_card]", "turn": 3}
    assert body["redactions"] == 3
    assert c.get("/journal", params={"store": store_name}).json() == [body]
    assert stored(server, store_name, "my SSN is") == ["my SSN is"]  # the check can fail
    assert stored(server, store_name, SSN, CARD, CARD_DIGITS, AMEX) == []


def test_short_term_create_redacts_and_reports(server, store_name) -> None:
    """POST /short: content, topic, source and metadata redacted; GET says the same count."""
    c = server.client()
    body = created(
        c, "/short", store_name,
        {"content": f"Ana's SSN is {SSN}; her card is {CARD}", "topic": f"ana {CARD_DIGITS}",
         "source": "chat", "metadata": {"ids": [SSN, {"card": AMEX}], "n": 1}},
    )  # fmt: skip
    assert body["content"] == "Ana's SSN is [REDACTED:ssn]; her card is [REDACTED:credit_card]"
    assert body["topic"] == "ana [REDACTED:credit_card]"
    assert body["metadata"] == {
        "ids": ["[REDACTED:ssn]", {"card": "[REDACTED:credit_card]"}],
        "n": 1,
    }
    assert body["redactions"] == 5
    got = c.get(f"/short/{body['id']}", params={"store": store_name}).json()
    assert got == body
    # Search finds the entry by its words, never by the number.
    query = {"query": "Ana's SSN card"}
    hits = c.post("/search", params={"store": store_name}, json=query).json()["results"]
    assert [h["content"] for h in hits] == [body["content"]]
    assert stored(server, store_name, "Ana's SSN is") == ["Ana's SSN is"]
    assert stored(server, store_name, SSN, CARD, CARD_DIGITS, AMEX) == []


def test_short_term_batch_redacts_each_item(server, store_name) -> None:
    """POST /short/batch: each item is redacted; only the one with numbers counts any."""
    c = server.client()
    items = [{"content": f"card on file: {CARD}"}, {"content": "nothing personal here"},
             {"content": f"SSN {SSN}", "metadata": {"k": AMEX}}]  # fmt: skip
    ids = created(c, "/short/batch", store_name, {"items": items})["ids"]
    got = [c.get(f"/short/{i}", params={"store": store_name}).json() for i in ids]
    assert [(g["content"], g["redactions"]) for g in got] == [
        ("card on file: [REDACTED:credit_card]", 1),
        ("nothing personal here", 0),
        ("SSN [REDACTED:ssn]", 2),
    ]
    assert stored(server, store_name, SSN, CARD, CARD_DIGITS, AMEX) == []


def test_patch_redacts_new_content_and_metadata(server, store_name) -> None:
    """PATCH /short/{id}: new content and metadata are redacted; the count follows the marks."""
    c = server.client()
    entry = created(c, "/short", store_name, {"content": "Ana pays by card"})
    assert entry["redactions"] == 0
    url, params = f"/short/{entry['id']}", {"store": store_name}

    r = c.patch(url, params=params, json={"content": f"Ana pays with card {CARD}"})
    assert r.status_code == 200, r.text
    assert (r.json()["content"], r.json()["redactions"]) == (
        "Ana pays with card [REDACTED:credit_card]",
        1,
    )
    r = c.patch(url, params=params, json={"metadata": {"ssn": SSN}})
    assert r.json()["metadata"] == {"ssn": "[REDACTED:ssn]"} and r.json()["redactions"] == 2
    # New content replaces the old marks with it: only the metadata's is left.
    r = c.patch(url, params=params, json={"content": "Ana pays cash now"})
    assert (r.json()["content"], r.json()["redactions"]) == ("Ana pays cash now", 1)
    assert c.get(url, params=params).json() == r.json()
    assert stored(server, store_name, "Ana pays cash now") == ["Ana pays cash now"]
    assert stored(server, store_name, SSN, CARD, CARD_DIGITS) == []


def test_loops_and_briefs_are_redacted(server, store_name) -> None:
    """POST /near, POST /brief: every text and metadata value is screened and counted."""
    c = server.client()
    loop = created(
        c, "/near", store_name,
        {"intent": f"ask Ana whether card {CARD} was replaced", "trigger_type": "topic",
         "trigger_value": f"ssn {SSN}", "metadata": {"card": AMEX}},
    )  # fmt: skip
    assert loop["intent"] == "ask Ana whether card [REDACTED:credit_card] was replaced"
    assert loop["trigger_value"] == "ssn [REDACTED:ssn]"
    assert loop["redactions"] == 3
    said = {"summary": f"Ana gave her SSN {SSN}.", "promote_hints": [f"Ana's card is {CARD}"]}
    brief = created(c, "/brief", store_name, said)
    assert brief["summary"] == "Ana gave her SSN [REDACTED:ssn]."
    assert brief["promote_hints"] == ["Ana's card is [REDACTED:credit_card]"]
    assert brief["redactions"] == 2
    assert stored(server, store_name, SSN, CARD, CARD_DIGITS, AMEX) == []


def test_phone_numbers_are_redacted_and_long_ids_kept(server, store_name) -> None:
    """POST /journal, /short: valid phone numbers hidden and counted; long ids and times stay."""
    c = server.client()
    tail = f"about order #{ORDER_ID}, logged at {MILLIS}"
    text = f"call Ana on {PHONE_US} or {PHONE_UK} {tail}"
    kept = f"call Ana on [REDACTED:phone] or [REDACTED:phone] {tail}"
    for path in ("/journal", "/short"):
        got = created(c, path, store_name, {"content": text, "metadata": {"desk": PHONE_UK}})
        assert (got["content"], got["metadata"]) == (kept, {"desk": "[REDACTED:phone]"}), path
        assert got["redactions"] == 3, path
    assert stored(server, store_name, PHONE_US, PHONE_UK) == []
    assert stored(server, store_name, ORDER_ID, MILLIS) == [ORDER_ID, MILLIS]


def test_numbers_that_only_look_alike_are_kept(server, store_name) -> None:
    """A Luhn-invalid 16-digit number, an order number, an unissued SSN: stored as written."""
    c = server.client()
    text = f"tracking {NOT_A_CARD}, Amazon order {ORDER}, test id {NOT_AN_SSN}"
    meta = {"tracking": NOT_A_CARD.replace(" ", ""), "order": ORDER}
    for path, body in (
        ("/journal", {"content": text, "metadata": meta}),
        ("/short", {"content": text, "metadata": meta}),
        ("/near", {"intent": text, "metadata": meta}),
    ):
        got = created(c, path, store_name, body)
        assert (got.get("content", got.get("intent")), got["metadata"]) == (text, meta), path
        assert got["redactions"] == 0, path
    entry = created(c, "/short", store_name, {"content": "Ana's parcel"})
    r = c.patch(f"/short/{entry['id']}", params={"store": store_name}, json={"content": text})
    assert (r.json()["content"], r.json()["redactions"]) == (text, 0)
    assert stored(server, store_name, NOT_A_CARD, ORDER, NOT_AN_SSN) == [
        NOT_A_CARD,
        ORDER,
        NOT_AN_SSN,
    ]


# -- end to end: what is said twice is promoted, but never a secret --------------


@pytest.fixture
def dreamer(tmp_path: Path, embedder: Any) -> Iterator[tuple[httpx.Client, FakeClock]]:
    """A live server on real SQLite files whose clock a test moves (days pass)."""
    clock = FakeClock()
    settings = Settings(data_dir=tmp_path / "data", consolidator={"mode": "external"})
    with serve(Memory(settings, embedder=embedder, clock=clock)) as live:
        yield live.client, clock


def test_a_secret_said_on_two_days_never_reaches_long_term(dreamer, tmp_path) -> None:
    """A key and an SSN said on two days: the facts made carry marks, no byte of either."""
    c, clock = dreamer
    s = {"store": "s"}
    said = [
        f"The staging API key is {API_KEY}",
        f"Lena's social security number is {SSN}",
        "Lena prefers tea over coffee",
    ]
    for _ in range(2):
        for text in said:
            r = c.post("/short", params=s, json={"content": text})
            assert r.status_code == 201, r.text
        c.post("/journal", params=s, json={"content": f"user: {said[0]}", "role": "user"})
        clock.advance(DAY)
    r = c.post("/consolidate/run", params=s, json={"dry_run": False})
    assert r.status_code == 201, r.text
    run = r.json()
    facts = c.get("/long", params={**s, "limit": 1000}).json()
    contents = sorted(f["content"] for f in facts)
    # Said on two days, each statement became a fact: the plain one as said,
    # the others with their marks where the secret was.
    assert contents == [
        "Lena prefers tea over coffee",
        "Lena's social security number is [REDACTED:ssn]",
        "The staging API key is [REDACTED:api_key]",
    ], run
    everything = "\n".join(
        [r.text, c.get("/long", params=s).text, c.get("/short", params=s).text]
        + [c.get("/journal", params=s).text, c.get("/consolidate/runs", params=s).text]
    )
    assert API_KEY not in everything and SSN not in everything
    files = {p.name: p.read_bytes() for p in (tmp_path / "data").glob("s.sqlite3*")}
    assert any(b"Lena prefers tea" in data for data in files.values())  # the check can fail
    for name, data in files.items():
        assert API_KEY.encode() not in data, name
        assert SSN.encode() not in data and SSN.replace("-", "").encode() not in data, name


def test_a_forget_reason_is_redacted_and_still_purges(dreamer) -> None:
    """POST /long/{id}/forget: the reason's secret is redacted; its mark still reads as PII."""
    c, clock = dreamer
    s = {"store": "s"}
    for _ in range(2):
        created(c, "/short", "s", {"content": "Lena's locker code is in the blue notebook"})
        clock.advance(DAY)
    c.post("/consolidate/run", params=s, json={"dry_run": False})
    [fact] = c.get("/long", params=s).json()
    r = c.post(f"/long/{fact['id']}/forget", params=s, json={"reason": f"drop it, it was {JWT}"})
    assert r.status_code == 202, r.text
    assert (r.json()["reason"], r.json()["redactions"]) == ("drop it, it was [REDACTED:jwt]", 1)
    run = c.post("/consolidate/run", params=s, json={"dry_run": False}).json()
    assert [(a["kind"], a["target_id"]) for a in run["actions"]] == [("purge", fact["id"])]
    assert JWT not in c.get("/consolidate/runs", params=s).text


def test_a_secret_stored_before_screening_is_redacted_from_the_fact(tmp_path, embedder) -> None:
    """Entries an older version stored verbatim: the fact made of them carries a mark, no key."""
    clock = FakeClock()
    data = tmp_path / "data"
    text = f"The staging API key is {API_KEY}"
    backend = open_backend(StorageSettings(), data)
    handle = backend.open("s", True)
    handle.add_short(
        [
            ShortEntry(
                id=new_id("short"),
                content=text,
                created_at=to_datetime(clock() + n * DAY),
                occurred_at=to_datetime(clock() + n * DAY),
                expires_at=to_datetime(clock() + 8 * DAY),
            )
            for n in range(2)
        ],
        embedder.embed([text, text]),
    )
    assert handle.holds(API_KEY)  # as an older version left it
    handle.close()
    backend.close()
    clock.advance(2 * DAY)
    settings = Settings(data_dir=data, consolidator={"mode": "external"})
    with serve(Memory(settings, embedder=embedder, clock=clock)) as live:
        r = live.client.post("/consolidate/run", params={"store": "s"}, json={"dry_run": False})
        assert r.status_code == 201, r.text
        [promote] = [a for a in r.json()["actions"] if a["kind"] == "promote"]
        assert promote["after"]["content"] == "The staging API key is [REDACTED:api_key]"
        facts = live.client.get("/long", params={"store": "s"}).json()
        assert [f["content"] for f in facts] == ["The staging API key is [REDACTED:api_key]"]
        assert API_KEY not in r.text
