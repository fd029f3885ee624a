"""Journal to memory, end to end through the HTTP API of a live in-process server.

Real SQLite files and the real embedding model; only time is injected
(``clock_server.FakeClock``), so days pass without sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from clock_server import DAY, FakeClock, InProcessServer, serve
from halls import Memory, Settings
from halls.consolidate.distill import LocalExtractor, Utterance
from halls.consolidate.speaker import USER

S = {"store": "s"}
EMAIL = "ana.lima@example.org"
SAID = [
    "I prefer tabs over spaces in Python code.",
    "For the record, I prefer tabs over spaces when I write Python.",
    "Again: I prefer tabs over spaces in Python.",
]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_server(
    tmp_path: Path, embedder: Any, clock: FakeClock
) -> Iterator[Callable[..., InProcessServer]]:
    with ExitStack() as stack:

        def make(**consolidator: Any) -> InProcessServer:
            settings = Settings(
                data_dir=tmp_path / "data", consolidator={"mode": "external", **consolidator}
            )
            memory = Memory(settings, embedder=embedder, clock=clock)
            return stack.enter_context(serve(memory))

        yield make


def journal(c: httpx.Client, events: list[dict[str, Any]]) -> list[str]:
    r = c.post("/journal/batch", params=S, json={"items": events})
    assert r.status_code == 201, r.text
    return list(r.json()["ids"])


def run(c: httpx.Client) -> dict[str, Any]:
    r = c.post("/consolidate/run", params=S)
    assert r.status_code == 201, r.text
    return dict(r.json())


def session(day: int, said: str) -> list[dict[str, Any]]:
    """One day's session: a greeting, a request, the preference, an answer, a farewell."""
    sid = f"day-{day}"
    return [
        {
            "content": "Hi! Can you help me with the parser today?",
            "role": "user",
            "session_id": sid,
        },
        {"content": "Of course. Which file?", "role": "assistant", "session_id": sid},
        {"content": said, "role": "user", "session_id": sid},
        {"content": "Noted, I will use tabs.", "role": "assistant", "session_id": sid},
        {"content": "Thanks, bye!", "role": "user", "session_id": sid},
    ]


def _files(data: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in data.glob("s.sqlite3*") if "lock" not in p.name}


def test_a_preference_journaled_on_three_days_becomes_one_fact(
    make_server, clock, tmp_path
) -> None:
    """Three sessions on three days, a run each day: one fact, derived from the three events;
    a PII forget flag then purges the journal rows' bytes with it."""
    c = make_server().client
    ids: list[str] = []
    contact = journal(c, [{"content": f"You can reach me at {EMAIL}.", "role": "user"}])
    assert "[REDACTED:email]" in c.get("/journal", params=S).json()[0]["content"]
    runs = []
    for day, said in enumerate(SAID):
        events = journal(c, session(day, said))
        ids.append(events[2])
        runs.append(run(c))
        clock.advance(DAY)
    # Told to the assistant once, a lasting preference is kept (``promote_told``);
    # the contact line, its address redacted, is not kept on its word alone.
    [promote] = [a for a in runs[0]["actions"] if a["kind"] == "promote"]
    assert promote["after"]["content"] == "The user prefers tabs over spaces in Python code."
    assert promote["inputs"] == ids[:1]
    for day in (1, 2):
        [confirm] = [a for a in runs[day]["actions"] if a["kind"] == "confirm"]
        assert confirm["target_id"] == promote["target_id"] and confirm["inputs"] == [ids[day]]
    facts = c.get("/long", params=S).json()
    assert len(facts) == 1, [f["content"] for f in facts]  # no greeting, thanks or request
    fact = facts[0]
    assert sorted(fact["derived_from"]) == sorted(ids) and fact["evidence_count"] == 3

    # Consumed events are not read again: another run changes nothing.
    assert run(c)["actions"] == []

    assert any(b"I prefer tabs over spaces" in b for b in _files(tmp_path / "data").values())
    r = c.post(f"/long/{fact['id']}/forget", params=S, json={"reason": "that is my personal data"})
    assert r.status_code == 202
    [purge] = [a for a in run(c)["actions"] if a["kind"] == "purge"]
    assert purge["target_id"] == fact["id"]
    left = {e["id"] for e in c.get("/journal", params={**S, "limit": 1000}).json()}
    assert not left & set(ids) and contact[0] in left  # only the fact's sources went
    for name, data in _files(tmp_path / "data").items():
        assert b"I prefer tabs over spaces" not in data, name
        assert EMAIL.encode() not in data, name


def test_a_brief_summary_is_a_source(make_server, clock) -> None:
    """A decision stated in briefs' summaries on two days becomes a fact derived from them."""
    c = make_server().client
    briefs = []
    for text in [
        "The CI pipeline runs on the two-core runner. Any blockers left?",
        "Thanks! Our CI pipeline runs on the two-core runner.",
    ]:
        r = c.post("/brief", params=S, json={"summary": text})
        assert r.status_code == 201, r.text
        briefs.append(r.json()["id"])
        clock.advance(DAY)
    record = run(c)
    made = [a for a in record["actions"] if a["kind"] == "promote"]
    assert len(made) == 1 and sorted(made[0]["inputs"]) == sorted(briefs)


def test_stats_count_only_briefs_and_flags_waiting_for_a_run(make_server, clock) -> None:
    c = make_server().client
    r = c.post("/short", params=S, json={"content": "Chad uses Vim", "pinned": True})
    assert r.status_code == 201
    assert c.post("/brief", params=S, json={"summary": "Set up Vim."}).status_code == 201
    assert c.get("/stats", params=S).json()["counts"]["briefs"] == 1
    clock.advance(60)  # a run reads briefs made at or after its start: be later
    run(c)
    [fact] = c.get("/long", params=S).json()
    counts = c.get("/stats", params=S).json()["counts"]
    assert counts["briefs"] == 0 and counts["forget_flags"] == 0  # read by the run
    clock.advance(60)
    c.post(f"/long/{fact['id']}/forget", params=S, json={"reason": "that is wrong"})
    c.post("/brief", params=S, json={"summary": "Nothing new."})
    counts = c.get("/stats", params=S).json()["counts"]
    assert counts["briefs"] == 1 and counts["forget_flags"] == 1
    clock.advance(60)
    run(c)
    counts = c.get("/stats", params=S).json()["counts"]
    assert counts["briefs"] == 0 and counts["forget_flags"] == 0


def test_statements_inside_longer_turns_become_one_fact(make_server, clock) -> None:
    """The statement a turn makes beside a marker, a directive or a second clause is drawn
    out of it ("By the way, I'm vegetarian, so ...", "Keep in mind I'm ..."): said on two
    days, it becomes one fact derived from both journal events."""
    c = make_server().client
    said = [
        "By the way, I'm vegetarian, so no meat in the meal plans please",
        "Keep in mind I'm vegetarian.",
    ]
    ids = []
    for day, text in enumerate(said):
        ids += journal(c, [{"content": text, "role": "user", "session_id": f"d{day}"}])
        clock.advance(DAY)
    record = run(c)
    [promote] = [a for a in record["actions"] if a["kind"] == "promote"]
    assert promote["after"]["content"] == "The user is vegetarian."
    [fact] = c.get("/long", params=S).json()
    assert sorted(fact["derived_from"]) == sorted(ids)


def test_what_the_user_tells_an_assistant_of_others_is_kept(make_server, clock) -> None:
    """Said to an assistant on two days, a fact about a named thing and a standing
    instruction become facts; a reaction, a one-off request and a statement about
    "this repo" (a pointer) do not."""
    c = make_server().client
    days = [
        [
            "the staging db is Postgres 15 on db-stg-2",
            "never commit to main directly",
            "nice, that worked",
            "run the tests again",
            "this repo uses yarn",
        ],
        [
            "The staging database is Postgres 15, host db-stg-2.",
            "Never commit directly to main.",
            "nice, that worked",
            "run the tests again",
            "this repo uses yarn",
        ],
    ]
    for n, said in enumerate(days):
        journal(c, [{"content": t, "role": "user", "session_id": f"d{n}"} for t in said])
        run(c)
        clock.advance(DAY)
    facts = sorted(f["content"] for f in c.get("/long", params=S).json())
    assert len(facts) == 2, facts
    assert "Postgres 15" in facts[1] and "db-stg-2" in facts[1]
    assert facts[0].lower().startswith("never commit")


def test_what_people_say_of_others_in_a_conversation_stays_out(make_server, clock) -> None:
    """Between named people (not to an assistant), a sentence without its speaker in
    it is what one says of the other's news: not kept, however often said."""
    c = make_server().client
    for n in range(2):
        events = [
            {
                "content": "The staging db is Postgres 15 on db-stg-2.",
                "metadata": {"speaker": "Ana"},
            },
            {"content": "Mia owns the billing service now.", "metadata": {"speaker": "Ana"}},
        ]
        journal(c, [{**e, "role": "user", "session_id": f"d{n}"} for e in events])
        run(c)
        clock.advance(DAY)
    assert c.get("/long", params=S).json() == []


def test_a_retraction_retires_its_fact_and_is_no_evidence_for_it(make_server, clock) -> None:
    """Issue 51's climbing gym: "I cancelled my climbing gym membership" retires the
    membership the user stated on two days, and counts toward no active fact; the
    user's other facts stay."""
    c = make_server().client
    days = [
        ["I'm a member at the climbing gym on Elm Street", "My sister Ana lives in Porto"],
        ["i'm a member of the Elm Street climbing gym", "my sister Ana lives in Porto"],
        ["I cancelled my climbing gym membership"],
    ]
    ids: list[list[str]] = []
    for n, said in enumerate(days):
        ids.append(
            journal(c, [{"content": t, "role": "user", "session_id": f"d{n}"} for t in said])
        )
        run(c)
        clock.advance(DAY)
    facts = c.get("/long", params={**S, "status": "active"}).json()
    assert [f["content"] for f in facts] == ["The user's sister Ana lives in Porto."], facts
    cancelled = ids[2][0]
    assert all(cancelled not in f["derived_from"] for f in facts)
    retired = [f for f in c.get("/long", params=S).json() if "climbing gym" in f["content"]]
    assert [f["status"] for f in retired] == ["superseded"], retired


def test_a_pronoun_is_resolved_across_a_session(make_server, clock) -> None:
    """Issue 51: "she" in the user's next message is the one person the message before
    named, so what is said of her becomes a fact about her by name; a "she" that opens
    the next day's session names nobody and makes no fact."""
    c = make_server().client
    days = [
        ["My sister Ana moved to Porto last year", "she works at the Santo Antonio hospital"],
        ["she is on nights this month"],
    ]
    runs = []
    for n, said in enumerate(days):
        journal(c, [{"content": t, "role": "user", "session_id": f"d{n}"} for t in said])
        runs.append(run(c))
        clock.advance(DAY)
    [made] = [a for a in runs[0]["actions"] if a["kind"] == "promote"]
    assert made["after"]["content"] == "Ana works at the Santo Antonio hospital.", made
    assert not [a for a in runs[1]["actions"] if a["kind"] == "promote"], runs[1]["actions"]
    facts = [f["content"] for f in c.get("/long", params={**S, "status": "active"}).json()]
    assert not any(f.lower().startswith(("she ", "he ")) for f in facts), facts


def test_a_pronoun_with_two_people_before_it_is_not_resolved() -> None:
    """The user's previous message names the person "he" or "she" is, if just one."""
    got = LocalExtractor().extract(
        [
            Utterance("My mum Rita and my dad Joe visited", USER),
            Utterance("she loves orchids", USER),
        ]
    )
    assert got == [["The user's mum Rita and their dad Joe visited."], []]
    got = LocalExtractor().extract(
        [
            Utterance("my brother-in-law Stefan is coming over", USER),
            Utterance("he loves orchids", USER),
        ]
    )
    assert got[1] == ["Stefan loves orchids."]


def test_yesterday_is_stored_as_a_date(make_server, clock) -> None:
    """Issue 51: a fact made of "yesterday" says the day it meant, from when it was
    said ("yesterday" is false the day after), and is read again a week later."""
    c = make_server().client
    r = c.post(
        "/short",
        params=S,
        json={"content": "I adopted a cat named Miso yesterday", "pinned": True},
    )
    assert r.status_code == 201, r.text
    run(c)
    clock.advance(7 * DAY)
    facts = [f["content"] for f in c.get("/long", params={**S, "status": "active"}).json()]
    assert len(facts) == 1, facts
    assert "Miso" in facts[0] and "on 27 May 2026" in facts[0], facts
    assert "yesterday" not in facts[0].lower(), facts
    hits = c.post("/search", params=S, json={"query": "When did I adopt Miso?"}).json()
    assert any("27 May 2026" in h["content"] for h in hits["results"]), hits


@pytest.mark.parametrize("told", [True, False])
def test_what_the_user_tells_the_assistant_once_is_kept_if_it_lasts(
    make_server, clock, told: bool
) -> None:
    """``consolidator.promote_told``: a standing rule or a state told to an assistant
    once is kept; an episode ("work was insane today"), a mood with no verb, and what
    one person tells another in a conversation still wait for a second mention."""
    c = make_server(promote_told=told).client
    journal(
        c,
        [
            {"content": "always add type hints", "role": "user", "session_id": "a"},
            {"content": "our dog Biscuit is a beagle", "role": "user", "session_id": "a"},
            {"content": "work was insane today", "role": "user", "session_id": "a"},
            {"content": "big news", "role": "user", "session_id": "a"},
            {"content": "Lena: I live in Graz now", "session_id": "b"},
        ],
    )
    made = [a["after"]["content"] for a in run(c)["actions"] if a["kind"] == "promote"]
    if told:
        assert sorted(made) == [
            "Always add type hints.",
            "The user's dog Biscuit is a beagle.",
        ]
    else:
        assert made == []


@pytest.mark.parametrize("visibility", ["summary", "private"])
def test_only_full_events_are_distilled(make_server, clock, visibility) -> None:
    """A statement journaled as summary or private on several days becomes no fact (a fact
    would show its words in search); the same statements journaled full do."""
    c = make_server().client
    said = ["By the way, I'm vegetarian, so no meat in the meal plans please",
            "Keep in mind I'm vegetarian."]  # fmt: skip
    for day, text in enumerate(said):
        item = {"content": text, "role": "user", "session_id": f"d{day}"}
        journal(c, [{**item, "visibility": visibility}])
        clock.advance(DAY)
    run(c)
    assert c.get("/long", params=S).json() == []
    for day, text in enumerate(said):
        journal(c, [{"content": text, "role": "user", "session_id": f"e{day}"}])
        clock.advance(DAY)
    run(c)
    assert [f["content"] for f in c.get("/long", params=S).json()] == ["The user is vegetarian."]


def test_a_user_turn_that_repeats_its_role_as_a_label_is_the_same_words() -> None:
    """A transcript line "user: ..." journaled with role user: the label is not content,
    so the turn and the same words written to short-term memory are one statement."""
    from halls.consolidate.distill import utterance

    got = utterance("user: The staging DB is Postgres 15", {}, "user")
    assert got == Utterance("The staging DB is Postgres 15", "The user")
    assert utterance("The staging DB is Postgres 15", {}, "user") == got


def test_another_fact_of_the_same_project_retires_nothing(make_server, clock) -> None:
    """Issue 51's wrong supersessions ("Raj is in Bangalore" superseded by "Raj
    bumped httpx"): told once, "the buildkite pipeline for helix is red" is no new
    value of "helix CI runs on buildkite", nor "rebase onto trunk" of "the main
    branch is trunk" (the cross-encoder retrained with same-topic pairs, session 42;
    before, both were read as changes). A change said so still retires the fact."""
    c = make_server().client
    days = [
        ["helix CI runs on buildkite, not github actions", "helix's main branch is called trunk"],
        ["remember helix ci is buildkite", "main branch in helix = trunk"],
        ["the buildkite pipeline for helix is red, check it", "rebase onto trunk in helix"],
    ]
    for n, said in enumerate(days):
        journal(c, [{"content": t, "role": "user", "session_id": f"d{n}"} for t in said])
        run(c)
        clock.advance(DAY)
    active = [f["content"] for f in c.get("/long", params={**S, "status": "active"}).json()]
    assert any("buildkite" in f.lower() and "runs on" in f.lower() for f in active), active
    assert any("trunk" in f and "main branch" in f for f in active), active
    assert not [f for f in c.get("/long", params=S).json() if f["status"] != "active"]
    journal(c, [{"content": "we moved helix CI to github actions now", "role": "user"}])
    run(c)
    facts = c.get("/long", params=S).json()
    retired = [f["content"] for f in facts if f["status"] == "superseded"]
    assert len(retired) == 1 and "buildkite" in retired[0].lower(), facts


def test_a_second_instrument_retires_nothing(make_server, clock) -> None:
    """Issue 51: a predicate that holds many values adds ("plays the violin", then
    "started learning piano", each said twice): the words read "started" as a
    change, surely; the cross-encoder, now asked about such pairs too, reads two
    facts (session 43; before, the violin was superseded by the piano)."""
    c = make_server().client
    days = [
        "Hana plays the violin",
        "my daughter Hana plays violin in the school orchestra",
        "Hana started learning piano",
        "Hana has started piano lessons",
    ]
    for n, said in enumerate(days):
        journal(c, [{"content": said, "role": "user", "session_id": f"d{n}"}])
        run(c)
        clock.advance(DAY)
    facts = c.get("/long", params=S).json()
    active = [f["content"] for f in facts if f["status"] == "active"]
    assert any("violin" in f for f in active), facts
    assert any("piano" in f for f in active), facts
    assert not [f for f in facts if f["status"] != "active"], facts


def test_a_retraction_and_the_new_value_said_apart_are_one_change(make_server, clock) -> None:
    """A fact ended on one day ("Marta quit Globex") and its new value said once on
    another, read in one run: alone, the new value lacks the evidence of a change,
    and once the retraction is read it finds no fact to change. Together they are one
    change: the fact is superseded by the new value (session 43; before, it was
    retracted and the new value waited)."""
    c = make_server().client
    for n, said in enumerate(["Marta works at Globex", "Marta is an engineer at Globex"]):
        journal(c, [{"content": said, "role": "user", "session_id": f"d{n}"}])
        run(c)
        clock.advance(DAY)
    journal(c, [{"content": "Marta quit Globex", "role": "user", "session_id": "d2"}])
    clock.advance(DAY)
    later = "Marta started at Initech last Monday"
    journal(c, [{"content": later, "role": "user", "session_id": "d3"}])
    run(c)
    facts = c.get("/long", params=S).json()
    active = [f for f in facts if f["status"] == "active"]
    assert len(active) == 1 and "Initech" in active[0]["content"], facts
    old = [f for f in facts if "Globex" in f["content"]]
    assert old and all(f["superseded_by"] == active[0]["id"] for f in old), facts


def test_a_retraction_said_twice_makes_no_new_fact(make_server, clock) -> None:
    """A second retraction of a fact the run retracts ("No antihistamines for
    Oluwaseun these days") ends something and names nothing new: it is not the
    fact's new value, so nothing replaces the fact (the judge reads it as a change,
    0.89; dreams_blind.yaml's b26-ret-7)."""
    c = make_server().client
    said = [
        "Oluwaseun takes 10 mg of cetirizine daily for hay fever",
        "Oluwaseun is on cetirizine, 10mg a day",
    ]
    for n, text in enumerate(said):
        journal(c, [{"content": text, "role": "user", "session_id": f"d{n}"}])
        run(c)
        clock.advance(DAY)
    for n, text in enumerate(
        [
            "Oluwaseun quit the cetirizine, pollen season is over",
            "No antihistamines for Oluwaseun these days",
        ]
    ):
        journal(c, [{"content": text, "role": "user", "session_id": f"e{n}"}])
        clock.advance(DAY)
    run(c)
    facts = c.get("/long", params=S).json()
    assert not [f for f in facts if f["status"] == "active"], facts
    assert [f["superseded_by"] for f in facts] == [None], facts
