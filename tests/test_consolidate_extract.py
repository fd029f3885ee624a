"""Statement extraction: dialogue acts dropped, statements rewritten to stand alone.

The dialogue below is made up for these tests; the rules read sentence form,
never a list of known sentences.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from halls.consolidate import distill
from halls.consolidate.extract import statement, statements
from halls.consolidate.segment import sentences
from halls.consolidate.speaker import USER, speaker_of, speakers_in
from halls.consolidate.third_person import third_person
from halls.models import Brief, JournalEvent, ShortEntry


def said(text: str) -> list[str]:
    return [s.text for s in statements(text)]


@pytest.mark.parametrize(
    "turn",
    [
        "Priya: Hi Omar! Long time no see!",
        "Priya: Thanks so much, Omar! Have a great weekend!",
        "Omar: Bye! Talk soon.",
        "Omar: Sure thing, see ya.",
        "Priya: No worries at all.",
        "Omar: Congrats on the new job, Priya!",
        "Priya: Sorry, I was late again.",
        "Omar: What inspired you to start climbing?",
        "Omar: Did you finish the kitchen yet?",
        "Priya: How's the garden coming along",
        "Omar: Wow, Priya, that looks amazing!",
        "Priya: That's so cool. It was a great experience.",
        "Omar: You're such a great cook, your lasagna rocks.",
        "Priya: Let's grab coffee next week.",
        "Omar: Let me know how it goes.",
        "Priya: Glad I could help!",
        "Omar: I love it.",
        "Priya: I couldn't agree more.",
        "Omar: I'm so sorry to hear about the flood.",
        "Priya: The mountains were stunning.",
    ],
)
def test_chit_chat_questions_and_reactions_yield_nothing(turn: str) -> None:
    assert said(turn) == []


def test_a_turn_keeps_its_statements_and_drops_the_rest() -> None:
    turn = (
        "Priya: Hey Omar! Lately I've been looking into nursing as a career. "
        "What about you? I'm also learning Portuguese - my grandmother was from Lisbon."
    )
    assert said(turn) == [
        "Lately Priya has been looking into nursing as a career.",
        "Priya is also learning Portuguese.",
        "Priya's grandmother was from Lisbon.",
    ]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I am allergic to peanuts", "Priya is allergic to peanuts"),
        ("I'm moving to Leeds in March", "Priya is moving to Leeds in March"),
        ("I have two cats", "Priya has two cats"),
        ("I've adopted a greyhound", "Priya has adopted a greyhound"),
        ("I'd love to visit Japan", "Priya would love to visit Japan"),
        ("I'd been saving for a bike", "Priya had been saving for a bike"),
        ("I'll start the course in May", "Priya will start the course in May"),
        ("I love sourdough baking", "Priya loves sourdough baking"),
        ("I really enjoy long hikes", "Priya really enjoys long hikes"),
        ("I go swimming on Mondays", "Priya goes swimming on Mondays"),
        ("I study law at night", "Priya studies law at night"),
        ("I need a new laptop", "Priya needs a new laptop"),
        ("I went to Porto last week", "Priya went to Porto last week"),
        ("I finished my thesis", "Priya finished their thesis"),
        ("I don't eat meat", "Priya doesn't eat meat"),
        ("My brother taught me chess", "Priya's brother taught Priya chess"),
        ("We painted our fence", "Priya and others painted their fence"),
        ("I think I was wrong", "Priya thinks Priya was wrong"),
    ],
)
def test_first_person_becomes_the_speaker(sentence: str, expected: str) -> None:
    assert third_person(sentence, "Priya") == expected


def test_a_statement_ends_with_a_full_stop_and_a_capital() -> None:
    assert statement("so I'm running the Berlin marathon in May!!", "Omar") == (
        "Omar is running the Berlin marathon in May."
    )


def test_an_utterance_must_say_something_of_its_speaker() -> None:
    """A remark about the world in a chat is not the speaker's fact; first person is."""
    assert said("Omar: The new bakery on Elm makes great rye.") == []
    assert said("Omar: My sister opened a bakery on Elm.") == [
        "Omar's sister opened a bakery on Elm."
    ]


def test_notes_pass_through_unchanged() -> None:
    """Text without a speaker is a note: only questions and formulae go, nothing is rewritten."""
    assert said("Chad prefers tabs") == ["Chad prefers tabs"]
    assert said("Note: the API listens on port 8080") == ["Note: the API listens on port 8080"]
    assert said("Thanks! The deploy runs on Fridays. Should we move it?") == [
        "The deploy runs on Fridays."
    ]
    assert said("Should we move the deploy?") == []
    assert said("OK") == []


def test_a_note_opening_with_the_letters_of_a_greeting_is_kept() -> None:
    """A greeting is a whole word: "History ..." and "Hiking ..." are statements."""
    assert said("History books are another thing Tom reads") == [
        "History books are another thing Tom reads"
    ]
    assert said("Hiking is what Mia does on Sundays") == ["Hiking is what Mia does on Sundays"]
    assert said("Hi there") == [] and said("Hey!") == [] and said("Bye for now") == []


def test_speaker_labels_and_sentences() -> None:
    assert speaker_of("Ana Lima: I code in Rust") == ("Ana Lima", "I code in Rust")
    assert speaker_of("TODO: write the docs") == (None, "TODO: write the docs")
    assert sentences("Dr. Okafor set it. I agreed; we start Monday [image: a photo of a cat]") == [
        "Dr. Okafor set it.",
        "I agreed",
        "we start Monday",
    ]


@pytest.mark.parametrize(
    "note",
    [
        "User: vegetarian",
        "User: editor theme dark, not light, in every editor they open",
        "Emma: cat allergy",
        "ISP: Virgin Media",
        "Mia: swim practice Tue 4pm",
    ],
)
def test_a_label_heading_a_short_note_about_it_is_no_speaker(note: str) -> None:
    """An agent's note under a name ("Emma: cat allergy") is kept whole as a note;
    read as a turn, it spoke of no one and was dropped."""
    assert speaker_of(note) == (None, note)
    assert [s.text for s in statements(note)] == [note]
    assert distill.utterance(note, {}) == distill.Utterance(note, None)


@pytest.mark.parametrize(
    "turn",
    [
        "User: I moved to Leeds",
        "Caroline: Wow, great pic!",
        "Emma: you should come along",
        "Melanie: The kids loved the camping trip and want to go back next summer",
    ],
)
def test_a_turn_in_the_first_person_exclaiming_or_long_keeps_its_speaker(turn: str) -> None:
    label, rest = turn.split(": ", 1)
    assert speaker_of(turn) == (label, rest)


def test_a_label_that_speaks_in_the_batch_speaks_in_all_its_entries() -> None:
    """A conversation's short reply under a full name ("Leila Haddad: nooo") is her
    turn, not a note about her, when she speaks elsewhere in the same run: it says
    nothing, so it makes no statement (it was kept whole as a "note" and, said on two
    days, promoted). A label that never speaks still heads a note; "User" always may."""
    turns = ["Leila Haddad: I moved to Austin in May", "Leila Haddad: nooo", "Emma: cat allergy"]
    assert speakers_in([*turns, "User: I moved to Leeds"]) == {"Leila Haddad"}
    assert speaker_of("Leila Haddad: nooo", {"Leila Haddad"}) == ("Leila Haddad", "nooo")
    entries = [
        ShortEntry(id=f"s_{n}", content=t, created_at=_at(1), occurred_at=_at(1))
        for n, t in enumerate(turns)
    ]
    units = distill.from_entries(entries, [0, 1, 2], distill.LocalExtractor())
    assert [(u.content, u.entries) for u in units] == [
        ("Leila Haddad moved to Austin in May.", ["s_0"]),
        ("Emma: cat allergy", ["s_2"]),
    ]


def _at(day: int, hour: int = 9) -> datetime:
    return datetime(2025, 3, day, hour, tzinfo=UTC)


def test_journal_statements_come_from_the_user_only_with_their_ids() -> None:
    """A user's turn is rewritten for 'the user'; the assistant's and tools' events are skipped."""
    events = [
        JournalEvent(
            id="j_1",
            content="I prefer dark roast coffee. Can you order some?",
            role="user",
            session_id="a",
            created_at=_at(1),
            occurred_at=_at(1),
        ),
        JournalEvent(
            id="j_2",
            content="I have ordered dark roast coffee for you.",
            role="assistant",
            session_id="a",
            created_at=_at(1),
            occurred_at=_at(1),
        ),
        JournalEvent(
            id="j_3",
            content="exit code 0",
            role="tool",
            session_id="a",
            created_at=_at(1),
            occurred_at=_at(1),
        ),
        JournalEvent(
            id="j_4",
            content="The deploy moved to Thursdays.",
            role=None,
            created_at=_at(2),
            occurred_at=_at(2),
        ),
    ]
    units = distill.from_journal(events, distill.LocalExtractor())
    assert [(u.content, u.journal) for u in units] == [
        ("The user prefers dark roast coffee.", ["j_1"]),
        ("The deploy moved to Thursdays.", ["j_4"]),
    ]


def test_journal_sessions_split_by_id_or_by_gap() -> None:
    def ev(i: str, hour: int, session: str | None) -> JournalEvent:
        return JournalEvent(
            id=i, content="x", session_id=session, created_at=_at(1, hour), occurred_at=_at(1, hour)
        )

    groups = distill.journal_sessions(
        [ev("j_1", 9, None), ev("j_2", 9, "s"), ev("j_3", 10, None), ev("j_4", 12, "s")]
    )
    assert [[e.id for e in g] for g in groups] == [["j_1"], ["j_2", "j_4"], ["j_3"]]


def test_entries_and_briefs_become_units_with_provenance() -> None:
    entries = [
        ShortEntry(id="s_1", content="Chad prefers tabs", created_at=_at(1), occurred_at=_at(1)),
        ShortEntry(
            id="s_2",
            content="Omar: Bye! I'm learning the cello.",
            source="j_9",
            created_at=_at(1),
            occurred_at=_at(1),
        ),
        ShortEntry(id="s_3", content="Omar: Thanks!", created_at=_at(1), occurred_at=_at(1)),
    ]
    units = distill.from_entries(entries, [0, 1, 2], distill.LocalExtractor())
    assert [(u.content, u.entries, u.journal, u.row) for u in units] == [
        ("Chad prefers tabs", ["s_1"], [], 0),  # its own text: the stored vector is reused
        ("Omar is learning the cello.", ["s_2"], ["j_9"], None),
    ]
    brief = Brief(
        id="b_1", summary="Moved CI to the 2-core runner. Any questions?", created_at=_at(3)
    )
    (unit,) = distill.from_briefs([brief], distill.LocalExtractor())
    assert (unit.content, unit.journal) == ("Moved CI to the 2-core runner.", ["b_1"])


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        # A leading multi-word discourse marker carries nothing.
        ("Omar: By the way, I moved to Porto in May", ["Omar moved to Porto in May."]),
        # ", so" joins two statements; a directive after it is no statement.
        ("Omar: I'm diabetic, so leave the sugar out of my recipes", ["Omar is diabetic."]),
        (
            "Omar: I live in Denver, so I'm on Mountain time",
            ["Omar lives in Denver.", "Omar is on Mountain time."],
        ),
        # A leading reason clause is a statement of its own.
        (
            "Omar: Since I'm in Porto now, calls before 9am my time are hard",
            ["Omar is in Porto now.", "Calls before 9am Omar's time are hard."],
        ),
        # A leading role ("As a nurse, I ...") states the role; not a past one.
        (
            "Omar: As a nurse I work twelve-hour shifts",
            ["Omar is a nurse.", "Omar works twelve-hour shifts."],
        ),
        ("Omar: As a teenager I loved skateboarding", ["As a teenager Omar loved skateboarding."]),
        # A comma splice before a first-person clause: two sentences.
        ("Omar: Again, it's Ozzy, I never answer to Oswald", ["Omar never answers to Oswald."]),
        # "Call me X" is the speaker's name.
        ("Omar: Please call me Ozzy", ["Omar goes by Ozzy."]),
        # A request to remember keeps what follows, first person or not.
        (
            "Omar: Remember, two-space indentation in YAML files",
            ["Two-space indentation in YAML files."],
        ),
        ("Omar: Keep in mind I'm on Lisbon time", ["Omar is on Lisbon time."]),
        ("Omar: Remember when we hiked the ridge", []),
        # An apposition after a name is no vocative.
        (
            "Omar: Rita, my sister, lives in Quito",
            ["Rita, Omar's sister, lives in Quito."],
        ),
        # One content word is enough for an attribute, not for a passing state.
        ("Omar: I'm vegan", ["Omar is vegan."]),
        ("Omar: I'm so tired", []),
        ("Omar: I'm excited!", []),
    ],
)
def test_clauses_markers_and_requests_to_remember(turn: str, expected: list[str]) -> None:
    assert said(turn) == expected


def test_a_note_sentence_pointing_back_stays_with_the_one_before() -> None:
    """A note's "he", "its", "they" point at what the sentence before named: one statement."""
    assert said("Marco never drives to the office; he commutes by bicycle") == [
        "Marco never drives to the office; he commutes by bicycle"
    ]
    assert said("billing-svc isn't on MySQL - its db is postgres v15") == [
        "billing-svc isn't on MySQL - its db is postgres v15"
    ]
    # After a question (dropped), and as a list's item, a sentence stands alone;
    # "there" opens a statement of its own.
    assert said("The deploy runs on Fridays. Should we move it? It is slow.") == [
        "The deploy runs on Fridays.",
        "It is slow.",
    ]
    listed = "- Lena works at Bosch\n- she likes tea"
    assert said(listed) == ["Lena works at Bosch", "she likes tea"]
    assert said("The office is in Leeds. There is a gym downstairs.") == [
        "The office is in Leeds.",
        "There is a gym downstairs.",
    ]


def test_notes_are_not_cut_into_clauses() -> None:
    """A note (no speaker) passes through whole: only utterances are cut at clause joins."""
    assert said("The cache is slow, so we added Redis") == ["The cache is slow, so we added Redis"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An addition or a change said at the start is what reconciliation reads.
        ("Also plays the piano.", ["Also plays the piano."]),
        ("Plus a cat, Pepper.", ["Plus a cat, Pepper."]),
        ("Now works at Bosch", ["Now works at Bosch"]),
        # "No" without a comma is a determiner, not an answer.
        ("No prawns or mussels for Sven", ["No prawns or mussels for Sven"]),
        ("No, the deploy runs on Fridays", ["The deploy runs on Fridays."]),
        # A note addresses no one: a name after a comma is what it speaks of.
        ("We've got a cat too, Pepper", ["We've got a cat too, Pepper"]),
    ],
)
def test_a_note_keeps_the_openers_and_names_that_carry_meaning(
    text: str, expected: list[str]
) -> None:
    assert said(text) == expected


def test_an_utterance_still_drops_vocatives_and_answers() -> None:
    assert said("Omar: No, I work at Bosch, Mel!") == ["Omar works at Bosch."]
    assert said("Omar: Also, I play the piano") == ["Also, Omar plays the piano."]


def test_a_standing_request_is_a_preference_a_one_time_one_is_not() -> None:
    """What a note or the user asks for from now on is kept, without its "please";
    in a note a one-time request is not, nor a request one person makes of
    another in a conversation."""
    for speaker in (None, USER):
        said = [s.text for s in statements("please always give me the report in PDF", speaker)]
        assert said == ["Always give me the report in PDF."]
        said = [s.text for s in statements("Don't ever push to main on a Friday", speaker)]
        assert said == ["Don't ever push to main on a Friday."]
        said = [s.text for s in statements("Please, from now on reply in German", speaker)]
        assert said == ["From now on reply in German."]
    assert statements("Please fix the build") == []
    assert statements("Don't worry about the flaky test") == []
    assert statements("Mel: Don't ever give up!") == []
    assert statements("Please always bring snacks", "Mel") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A request: what recurs of it is promoted, what is said once ages out.
        ("Please fix the build", ["Fix the build."]),
        ("in ledgerly-api use poetry pls", ["In ledgerly-api use poetry."]),
        ("dont touch anything under vendor/", ["Dont touch anything under vendor/."]),
        # "You" is the assistant.
        ("keep your explanations short", ["Keep your explanations short."]),
        # Statements about what is not the user, however the parser reads them.
        ("priya reviews all the android PRs", ["Priya reviews all the android PRs."]),
        ("atlas-web deploys to heroku", ["Atlas-web deploys to heroku."]),
        ("type hints pls, even on the little helpers", ["Type hints, even on the little helpers."]),
        # Chat's lower-case "i" is the first person.
        ("i use fish shell on my mac", ["The user uses fish shell on their mac."]),
        ("i'm lactose intolerant", ["The user is lactose intolerant."]),
        # Chat leaves out "I" before a past or progressive verb.
        (
            "booked the flights for the kyoto trip",
            ["The user booked the flights for the kyoto trip."],
        ),
        ("planning a trip to Kyoto with Hana", ["The user is planning a trip to Kyoto with Hana."]),
        # Still not statements: questions, formulae, a pointing subject.
        ("what does p99 mean here", []),
        ("haha fair", []),
        ("that's great", []),
    ],
)
def test_what_the_user_says_to_an_assistant(text: str, expected: list[str]) -> None:
    assert [s.text for s in statements(text, USER)] == expected
