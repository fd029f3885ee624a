"""The pair judge: the shipped local model on its held-out pairs, and the four issue cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from halls.consolidate.candidates import UNSURE
from halls.consolidate.judge import (
    LABELS,
    RETRACT,
    UPDATE,
    LocalJudge,
    Pair,
    default_judge,
    read,
    restates_change,
    same_change,
    synonyms,
)
from halls.consolidate.judge.columns import (
    ADDED_ALIKE as _ADDED_ALIKE,
)
from halls.consolidate.judge.columns import (
    ALSO_ALIKE as _ALSO_ALIKE,
)
from halls.consolidate.judge.columns import (
    OTHER_PERSON as _OTHER_PERSON,
)
from halls.consolidate.judge.columns import (
    RETRACT_B as _RETRACT_B,
)
from halls.consolidate.judge.columns import (
    SAME_VALUES as _SAME_VALUES,
)
from halls.consolidate.judge.columns import (
    SINGLE as _SINGLE,
)
from halls.consolidate.judge.columns import (
    SWAPPED_NAMES as _SWAPPED_NAMES,
)
from halls.consolidate.judge.columns import (
    SWAPPED_NUMBERS as _SWAPPED_NUMBERS,
)
from halls.consolidate.judge.flags import FLAG_ADDITIVE
from halls.consolidate.judge.lexical import (
    Statements,
    features,
    lexical,
    swapped_values,
)
from halls.consolidate.judge.reading import parse
from halls.consolidate.judge.rules import apply as _kind_rules
from judge_pairs import TRAINING, UNSEEN, held_out, load_pairs

# The shipped judge's accuracy, measured (docs/benchmarks.md): on the held-out
# quarter of pairs.txt, and on pairs_unseen.txt.
HELD_OUT, UNSEEN_MEASURED = 0.897, 0.909


def _pairs(embedder: Any, items: list[tuple[str, str, str]]) -> tuple[list[Pair], list[str]]:
    texts = sorted({t for _, a, b in items for t in (a, b)})
    vecs = dict(zip(texts, embedder.embed(texts), strict=True))
    return [Pair(a, b, vecs[a], vecs[b]) for _, a, b in items], [label for label, _, _ in items]


def _local(embedder: Any, items: list[tuple[str, str, str]]) -> tuple[LocalJudge, Any]:
    """The shipped local judge and the features of ``items``' pairs."""
    judge = default_judge()
    assert isinstance(judge, LocalJudge)
    pairs, _ = _pairs(embedder, items)
    return judge, (pairs, features(pairs))


def _own_reading(judge: LocalJudge, x: np.ndarray, row: int, column: int) -> str:
    """The judge's reading of pair ``row`` with rule column ``column`` cleared."""
    x = x.copy()
    x[row, column] = 0.0
    return LABELS[int(judge.probabilities(x)[row].argmax())]


def test_the_shipped_judge_on_held_out_pairs(embedder) -> None:
    """On the quarter of pairs.txt it was not trained on (about facts it never saw):
    at least the measured accuracy less two points."""
    pairs = load_pairs()
    held = held_out(pairs)
    test = [p for p in pairs if p[1] in held]
    assert len(test) > 100 and {label for label, _, _ in test} == set(LABELS)
    judge = default_judge()
    assert isinstance(judge, LocalJudge)
    items, labels = _pairs(embedder, test)
    local = np.mean([j.label == y for j, y in zip(judge.judge(items), labels, strict=True)])
    assert local >= HELD_OUT - 0.02, local


def test_the_issue_pairs(embedder) -> None:
    """The issue's examples, as pairs: paraphrase with 'never', change, retraction, addition."""
    items, labels = _pairs(
        embedder,
        [
            (
                "same",
                "Jonas writes all his notes in Markdown",
                "Jonas keeps notes in Markdown, never in Word",
            ),
            ("update", "Lena works at Siemens", "Lena's employer is Bosch"),
            ("retract", "Chad uses Vim", "Chad doesn't use Vim anymore"),
            ("unrelated", "Omar plays the guitar", "Omar also plays the piano"),
        ],
    )
    got = default_judge().judge(items)
    assert [j.label for j in got] == labels, got
    assert all(0.25 < j.confidence <= 1.0 for j in got)
    assert default_judge().judge([]) == []


def test_the_same_names_and_numbers_are_no_new_value(embedder) -> None:
    """An update gives a new value: read as one, a statement naming exactly the
    earlier one's names, numbers and addresses says the same thing; a number
    word, an address or another subject is a new value, and stays an update."""
    judge, (items, x) = _local(
        embedder,
        [
            ("same", "Noah upgraded to a Pixel 8", "Noah has a Pixel 8 these days"),
            (
                "update",
                "The meeting room Atlas seats twelve people",
                "The meeting room Atlas seats twenty people",
            ),
            (
                "update",
                "The staging URL is staging.example.com",
                "The staging URL is stage.example.org",
            ),
        ],
    )
    assert x[:, _SAME_VALUES].tolist() == [1.0, 0.0, 0.0]
    got = judge.judge(items)
    assert [j.label for j in got] == ["same", "update", "update"], got
    # The rule alone: had the model read every pair as a change, the first is none.
    change = np.tile(np.eye(len(LABELS), dtype=np.float32)[LABELS.index("update")], (3, 1))
    ruled = _kind_rules(x, change)
    assert [LABELS[int(k)] for k in ruled.argmax(axis=1)] == ["same", "update", "update"]


def test_another_named_subject_is_not_the_same_values(embedder) -> None:
    items, _ = _pairs(embedder, [("unrelated", "Lena works at Siemens", "Jonas works at Siemens")])
    assert features(items)[0, _SAME_VALUES] == 0.0
    items, _ = _pairs(embedder, [("same", "Lena works at Siemens", "Lena has a job at Siemens")])
    assert features(items)[0, _SAME_VALUES] == 1.0


# The column of ``lexical``: the share of the earlier statement's words the later drops.
_DROPPED = 4


def test_give_retracts_only_as_give_up_or_away() -> None:
    """'Gives times in UTC' retracts nothing; 'gave up the cello' does."""
    earlier = ["Our API returns timestamps in UTC", "Ines plays the cello", "Ines keeps bees"]
    later = [
        "The API always gives times in UTC",
        "Ines gave up the cello",
        "Ines gave away her bees",
    ]
    x = lexical(earlier, later, np.full(3, 0.8))
    assert x[:, _RETRACT_B].tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("later", "retracts"),
    [
        ("Uninstalled the Prettier extension", True),
        ("Let the NYT subscription lapse", True),
        ("The home GitLab runner has been decommissioned", True),
        ("Diego stepped down as coach", True),
        ("Jonas handed back his company phone", True),
        ("The band split up last year", True),
        ("Maya stepped on a nail at the beach", False),
        ("The bill was split between the four of us", False),
        ("Jonas handed the report to his manager", False),
        ("The kids put their hands up to answer", False),
    ],
)
def test_words_that_end_a_thing_retract(later: str, retracts: bool) -> None:
    """Ending verbs ("lapse", "decommissioned", "stepped down") mark a retraction; the
    same verbs without their particle ("stepped on", "split between") do not."""
    x = lexical(["Something holds"], [later], np.full(1, 0.8))
    assert bool(x[0, _RETRACT_B]) is retracts


def test_a_negated_retraction_word_retracts_nothing() -> None:
    """'Never quit' and 'won't stop' affirm; 'no longer', 'not ... anymore', 'quit',
    'passed away' and 'shut down' retract; 'passed the interviews' and 'shuts at 6' do not."""
    later = [
        "I'm gonna keep on going and never quit",
        "We won't stop playing on Fridays",
        "I'm not gonna leave Berlin",
        "Tom no longer smokes",
        "Tom doesn't smoke anymore",
        "Tom quit smoking",
        "Anna's cat Miso passed away",
        "Caroline passed the adoption agency interviews",
        "The staging cluster was shut down",
        "The Paris office shuts at 6 pm",
    ]
    x = lexical(["Tom smokes"] * len(later), later, np.full(len(later), 0.8))
    assert x[:, _RETRACT_B].tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0]


def test_an_agent_noun_shares_its_verb() -> None:
    """'A guitar player' plays; 'a drummer' drums: the words count as shared."""
    x = lexical(
        ["Omar plays the guitar", "Teo drums in a band", "Ana plays chess"],
        ["Omar is a guitar player", "Teo is a drummer in a band", "Ana is a teacher"],
        np.full(3, 0.8),
    )
    assert x[:2, _DROPPED].tolist() == [0.0, 0.0] and x[2, _DROPPED] > 0


def test_an_acronym_of_a_kind_of_thing_is_no_name(embedder) -> None:
    """'A REST API' is 'a REST interface': API names a kind of thing, not a value;
    a format or product in capitals (CSV, JSON) still is one."""
    judge, (items, x) = _local(
        embedder,
        [
            ("same", "The service exposes a REST API", "The service has a REST interface"),
            ("update", "Exports are written as CSV", "Exports are written as JSON"),
        ],
    )
    assert x[:, _SAME_VALUES].tolist() == [1.0, 0.0]
    assert [j.label for j in judge.judge(items)] == ["same", "update"]


def test_swapped_numbers_are_never_the_same(embedder) -> None:
    """Each statement claiming a number the other lacks (number words read as numbers)
    is a change or another fact, not a restatement; a number word and its digits, or a
    number only in a contrast, is no swap."""
    judge, (_, x) = _local(
        embedder,
        [
            ("update", "We release every two weeks", "We release every three weeks"),
            ("same", "The cache expires after five minutes", "The cache TTL is 5 minutes"),
            (
                "same",
                "Our invoices are due within 30 days",
                "Payment is due 30 days after the invoice, not 60",
            ),
        ],
    )
    assert x[:, _SWAPPED_NUMBERS].tolist() == [1.0, 0.0, 0.0]
    p = judge.probabilities(x.copy())
    assert p[0, LABELS.index("same")] == 0.0 and abs(float(p[0].sum()) - 1.0) < 1e-5
    # The rule alone: had the model read every pair as mostly the same, the first
    # pair keeps none of it (the rest of its odds, renormalised, stand).
    mostly_same = np.tile(np.array([0.7, 0.2, 0.0, 0.1], dtype=np.float32), (3, 1))
    ruled = _kind_rules(x, mostly_same)
    assert ruled[0, LABELS.index("same")] == 0.0
    assert ruled[0, LABELS.index("update")] == pytest.approx(2 / 3, abs=1e-5)
    assert [LABELS[int(k)] for k in ruled[1:].argmax(axis=1)] == ["same", "same"]


def test_the_one_someone_sees_for_a_service_is_one_at_a_time(embedder) -> None:
    """A GP, a landlord, an insurer: one at a time, so a new name for one is a
    change, however little else the two statements share ("GP" and "Dr" read as
    names, the pair shares only names)."""
    judge, (_, x) = _local(
        embedder,
        [
            ("update", "Our GP is Dr Okonkwo", "Our GP is Dr Haddad"),
            ("update", "Our landlord is Mr Okafor", "Our landlord is Greystar"),
            ("update", "Mina's car insurer is Aviva", "Mina's car insurer is Direct Line"),
        ],
    )
    assert x[:, _SINGLE].tolist() == [1.0, 1.0, 1.0]
    got = judge.probabilities(x.copy()).argmax(axis=1)
    assert [LABELS[int(k)] for k in got] == ["update", "update", "update"]


def test_an_ended_thing_is_the_cross_encoders_to_read(embedder) -> None:
    """Where the later statement says something ended and the cross-encoder reads a
    change, its reading stands, beside a word of addition too: the words alone read
    this pair as one statement, in clustering and in reconciliation."""
    earlier = "Pinecrest also wants a weekly status email every monday."
    later = "Pinecrest said drop the weekly status emails, they'll just check the board."
    items, _ = _pairs(embedder, [("update", earlier, later)])
    (got,) = default_judge().judge(items)
    assert got.label in ("update", "retract"), got
    v = np.stack([items[0].earlier_vec, items[0].later_vec])
    r = read(default_judge(), [earlier, later], v, np.array([0]), np.array([1]))
    assert int(r.labels[0]) in (UPDATE, RETRACT)
    words = default_judge(cross_pairs=0).judge(items)[0]
    assert words.label == "same"  # what the words alone read


def test_the_same_words_about_another_person_are_another_fact(embedder) -> None:
    """'Marek's wife teaches at the university' is not Marek: statements that differ
    only in a relation to someone are two facts; other words, or two words for one
    relation ("boss", "manager"), leave the reading to the model."""
    judge, (_, x) = _local(
        embedder,
        [
            ("unrelated", "I drive a Honda Civic", "My dad drives a Honda Civic"),
            ("unrelated", "Marek teaches at university", "Marek's wife teaches at university"),
            ("unrelated", "Dan's boss is Fiona", "Dan's mentor is Fiona"),
            ("same", "Tom's manager is Ana", "Tom's boss is Ana"),
            ("same", "Paulo's manager is Ingrid", "Paulo reports to Ingrid"),
        ],
    )
    assert x[:, _OTHER_PERSON].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    p = judge.probabilities(x.copy())
    assert p[:3, LABELS.index("unrelated")].tolist() == [1.0, 1.0, 1.0]


def test_a_time_of_day_is_the_same_words_however_written() -> None:
    """'2am', '2 am' and '2 a.m.' are one time; 'I am 5' and 'amazing' are no time."""
    x = lexical(
        ["The nightly backup runs at 2am", "The office closes at 6pm", "Ana is 5"],
        ["The nightly backup runs at 2 a.m.", "The office closes at 6 pm", "Ana is 5 amazing"],
        np.full(3, 0.8),
    )
    assert x[:2, _DROPPED].tolist() == [0.0, 0.0] and x[:2, 3].tolist() == [0.0, 0.0]
    assert x[2, 3] > 0  # "amazing" is a new word, not "am" + "azing"


def test_a_synonym_stands_for_the_word() -> None:
    """WordNet's frequent senses: 'shuts' is 'closes', 'couch' is 'sofa'; a co-hyponym
    ('truck' for 'car') and a name ('Java' for 'tea') are other words."""
    earlier = [
        "The library closes at 8pm",
        "Noah bought a sofa",
        "Noah drives a car",
        "Ana drinks tea",
    ]
    later = [
        "The library shuts at 8pm",
        "Noah bought a couch",
        "Noah drives a truck",
        "Ana drinks Java",
    ]
    x = lexical(earlier, later, np.full(4, 0.8))
    assert x[:2, _DROPPED].tolist() == [0.0, 0.0] and x[:2, 3].tolist() == [0.0, 0.0]
    assert (x[2:, _DROPPED] > 0).all() and (x[2:, 3] > 0).all()


def test_synonyms_come_from_the_packaged_table_and_read_regular_endings() -> None:
    assert synonyms.synonyms("closing", "shut") and synonyms.synonyms("films", "movie")
    assert synonyms.synonyms("stopped", "quit") and synonyms.synonyms("used", "utilized")
    assert not synonyms.synonyms("car", "truck") and not synonyms.synonyms("black", "white")
    assert not synonyms.synonyms("close", "close")  # a word is itself, not its synonym
    assert synonyms.senses("us") == synonyms.NONE  # short words: acronyms in WordNet


def test_a_cadence_is_one_word_however_written() -> None:
    """'every two weeks' is 'biweekly' (and still two), 'once a month' is 'monthly': a
    changed cadence is another word or another number."""
    x = lexical(
        ["We release every two weeks", "We release once a month", "We release every two weeks"],
        ["The release is biweekly", "Releases ship monthly", "We release once a month"],
        np.full(3, 0.8),
    )
    assert x[:2, _DROPPED].tolist() == [0.0, 0.0] and x[:2, _SWAPPED_NUMBERS].tolist() == [0, 0]
    assert x[2, _DROPPED] > 0 and x[2, 3] > 0
    x = lexical(["We release biweekly"], ["We release every three weeks"], np.full(1, 0.8))
    assert x[0, _SWAPPED_NUMBERS] == 1.0


def test_names_each_lacks_are_the_models_to_read(embedder) -> None:
    """Each statement naming something the other lacks is most often another subject
    or another value, but not always (a name added in passing restates): ``same``
    keeps the models' probability; a capital opening a note ("Prefers", "User") is
    no name. Two numbers each lacks are never the same."""
    judge, (_, x) = _local(
        embedder,
        [
            (
                "unrelated",
                "The team in London meets on Mondays",
                "The team in Berlin meets on Mondays",
            ),
            ("update", "Lena works at Siemens", "Lena works at Bosch"),
            ("same", "Prefers aisle seats on flights", "User always books an aisle seat"),
            ("same", "The production database is PostgreSQL 16", "Production runs Postgres 16"),
            ("update", "We release every 2 weeks", "We release every 3 weeks"),
        ],
    )
    assert x[:, _SWAPPED_NAMES].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert x[:, _SWAPPED_NUMBERS].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    p = judge.probabilities(x.copy())
    same = LABELS.index("same")
    assert (p[:2, same] > 0.0).all() and p[4, same] == 0.0
    assert [LABELS[int(p[r].argmax())] for r in (0, 1, 4)] == ["unrelated", "update", "update"]
    # The model reads the two teams as unrelated, but barely sure (about
    # ``UNSURE``): clustering would join two statements this close were they not
    # also read apart by the names they swap, as clustering does from parsed
    # statements.
    assert p[0].max() < UNSURE + 0.1
    texts = ["The team in London meets on Mondays", "The team in Berlin meets on Mondays"]
    texts.append("Our London team meets every Monday")  # the same names: no swap
    swapped = swapped_values(Statements(texts), np.array([0, 0]), np.array([1, 2]))
    assert swapped.tolist() == [True, False]


def test_a_name_and_its_initials_are_no_swap() -> None:
    """Clustering reads which values each statement lacks as the judge's features do:
    a word in capitals and the run of names it shortens are one value ("WSJ" /
    "the Wall Street Journal"), so the two are not held apart as two names; another
    paper is still another name, and an addition beside the first names nothing the
    first lacks, so it is left to the judge."""
    texts = [
        "Mira reads the Wall Street Journal",
        "Mira has a WSJ subscription",
        "Mira reads the Financial Times",
        "Mira reads the FT in addition to the Wall Street Journal",
    ]
    statements = Statements(texts)
    swapped = swapped_values(statements, np.array([0, 0, 1, 0]), np.array([1, 2, 2, 3]))
    assert swapped.tolist() == [False, True, True, False]
    # The judge's own features agree: nothing the one names is missing from the other.
    x = lexical(texts[:1], texts[1:2], np.array([0.7]))
    assert x[0, _SWAPPED_NAMES] == 0.0


def test_a_name_glued_from_openings_is_no_swap() -> None:
    """A short name spelled by the openings of the words it shortens is that name:
    the parts of a word in camel case ("PS5" / "PlayStation 5"), openings glued in
    camel case ("FedEx" / "Federal Express") or not ("Amex" / "American Express").
    A given name is no shortening ("Anna" / "Ana Navarro"), nor is a common word,
    and another brand is still another name."""
    pairs = [
        ("Kofi games on a PlayStation 5", "Kofi plays on his PS5"),
        ("Dara ships parcels with FedEx", "Dara uses Federal Express for parcels"),
        ("Ines opened an Amex Gold card", "Ines carries an American Express Gold card"),
        ("Anna lives in Oslo", "Ana Navarro lives in Oslo"),
        ("Ines lives on Pearl Street", "Ines lives on Peter Arlington Street"),
        ("Ines opened an Amex Gold card", "Ines carries a Capital One card"),
        ("Kofi games on a PlayStation 5", "Kofi games on his PC"),
    ]
    statements = Statements([t for pair in pairs for t in pair])
    first = np.arange(0, 2 * len(pairs), 2)
    swapped = swapped_values(statements, first, first + 1)
    assert swapped.tolist() == [False, False, False, True, True, True, True]
    x = lexical([p[0] for p in pairs[:3]], [p[1] for p in pairs[:3]], np.full(3, 0.7))
    assert (x[:, _SWAPPED_NAMES] == 0.0).all()


def test_a_value_written_two_ways_is_the_same_words() -> None:
    """Numbers, units, sums and times however written ("108 cm", "a hundred and
    eight centimetres"); another value stays another word."""
    earlier = [
        "Hannah keeps her desk at 108 cm",
        "The laptop has 16GB of RAM",
        "Rent is €1,150 a month",
        "The office closes at 18:00",
        "Standup is at half past nine",
        "The laptop has 16GB of RAM",
    ]
    later = [
        "Hannah keeps her desk at a hundred and eight centimetres",
        "The laptop has sixteen gigs of RAM",
        "Rent is 1150 euros per month",
        "The office closes at 6pm",
        "Standup is at 9:30",
        "The laptop has thirty-two gigabytes of RAM",
    ]
    x = lexical(earlier, later, np.full(len(earlier), 0.8))
    assert x[:5, _DROPPED].tolist() == [0.0] * 5 and x[:5, 3].tolist() == [0.0] * 5
    assert x[5, _DROPPED] > 0 and x[5, _SWAPPED_NUMBERS] == 1.0


def test_an_amount_in_another_unit_is_the_same_words() -> None:
    """An amount and the same amount in another unit, as people round it ("12 km" /
    "7.5 miles", "90 minutes" / "an hour and a half"), share their number and unit and
    claim no number the other lacks; in one unit, or far apart, they are two values."""
    earlier = [
        "The loop trail is 12 km",
        "The film runs 90 minutes",
        "The fibre plan is 1 Gbps",
        "The loop trail is 12 km",
        "I weigh 82 kg",
    ]
    later = [
        "The loop trail is ~7.5 miles",
        "The film runs an hour and a half",
        "The fibre plan is 1000 Mbps",
        "The loop trail is 9 miles",
        "I weigh 78 kg",
    ]
    x = lexical(earlier, later, np.full(len(earlier), 0.8))
    assert x[:3, _DROPPED].tolist() == [0.0] * 3 and x[:3, 3].tolist() == [0.0] * 3
    assert x[:3, _SWAPPED_NUMBERS].tolist() == [0.0] * 3
    assert x[3:, _SWAPPED_NUMBERS].tolist() == [1.0, 1.0]
    statements = Statements(earlier + later)
    rows = np.arange(len(earlier))
    assert (
        swapped_values(statements, rows, rows + len(earlier)).tolist() == [False] * 3 + [True] * 2
    )


def _changes(embedder: Any, fact: str, *said: str) -> list[Any]:
    """The shipped judge's judgements of (fact, s) for each statement s."""
    v = embedder.embed([fact, *said])
    return default_judge().judge([Pair(fact, t, v[0], v[n]) for n, t in enumerate(said, 1)])


def test_two_changes_agree_when_they_give_the_same_new_value(embedder) -> None:
    """From the judgements alone (what each says beyond the fact), two changes agree."""
    fact = "We release every two weeks"
    assert same_change(
        *_changes(embedder, fact, "We release once a month", "Releases ship monthly")
    )
    fact = "The production database is PostgreSQL 13"
    said = ("The production database is PostgreSQL 16", "We run Postgres 16")
    assert same_change(*_changes(embedder, fact, *said))
    fact = "Noah's phone is an iPhone 12"
    said = ("Noah's phone is a Pixel 8", "Noah's phone is a Pixel 9")
    assert not same_change(*_changes(embedder, fact, *said))
    assert not same_change(*_changes(embedder, fact, "Noah got a Pixel 8", "Noah got a Galaxy S24"))


def test_a_change_said_again_names_no_value_beside_the_two(embedder) -> None:
    """What restates a change names the old value and the new one at most; a value
    beside them is a change more."""
    fact = "Ana works at Zalando"
    changed = "Ana switched jobs, she's at Adyen now"
    for text, again in (
        ("Ana left Zalando and joined Adyen", True),
        ("Ana is at Adyen these days", True),
        ("Ana left Adyen for Mollie", False),
        ("Ana joined Mollie", False),
    ):
        assert restates_change(*_changes(embedder, fact, changed, text)) is again, text


def test_the_user_of_a_note_is_the_first_person() -> None:
    """An agent's note calls the memory's owner "the user" or names no subject:
    "User has a peanut allergy", "I have a peanut allergy" and "Has a peanut
    allergy" compare the same words; a user who is not the owner stays a word."""
    words = [parse(t).ids.tolist() for t in ("User has a peanut allergy", "Has a peanut allergy")]
    assert words[0] == words[1] == parse("I have a peanut allergy").ids.tolist()
    assert (
        parse("Spaces only, per the user").ids.tolist() == parse("Spaces only, per me").ids.tolist()
    )
    assert len(parse("Every user gets a quota").ids) == len(parse("Every member gets a quota").ids)


def test_the_shipped_judge_on_pairs_written_by_others(embedder) -> None:
    """Pairs written by helpers who saw neither the judge nor its training pairs, never
    trained on: at least the measured accuracy less two points."""
    items = load_pairs(UNSEEN)
    assert len(items) > 1000 and {label for label, _, _ in items} == set(LABELS)
    trained = {(a, b) for name in TRAINING for _, a, b in load_pairs(name)}
    assert not {(a, b) for _, a, b in items} & trained
    pairs, labels = _pairs(embedder, items)
    local = np.mean(
        [j.label == y for j, y in zip(default_judge().judge(pairs), labels, strict=True)]
    )
    assert local >= UNSEEN_MEASURED - 0.02, local


def test_off_that_starts_or_forbids_retracts_nothing() -> None:
    """'Kicks off at 2am' starts, 'off limits' forbids; 'taken off the rotation' retracts."""
    later = [
        "The NAS backup job kicks off at 2am every night",
        "Peanuts are off limits for Tomasz's kid",
        "Rosa was taken off the on-call rotation",
    ]
    x = lexical(["Backups run nightly"] * 3, later, np.full(3, 0.8))
    assert x[:, _RETRACT_B].tolist() == [0.0, 0.0, 1.0]


def test_the_words_that_mark_an_addition_claim_nothing() -> None:
    """'As well', 'in addition' and 'besides' mark an addition (the flag reads them);
    they are no new words: two statements of one addition share all their words."""
    for later in (
        "Plays the piano as well",
        "In addition, plays the piano",
        "Besides, plays piano",
    ):
        assert parse(later).ids.tolist() == parse("Also plays piano").ids.tolist(), later
        assert parse(later).flags[FLAG_ADDITIVE] == 1.0, later
    assert parse("Plays piano well").ids.tolist() != parse("Plays piano").ids.tolist()
    # ... as written, not only as stemmed ("besides" stems to "besid").
    assert parse("There's a Prius in the driveway besides the Outback").flags[FLAG_ADDITIVE] == 1.0
    assert parse("Plays piano well").flags[FLAG_ADDITIVE] == 0.0
    # "A second" adds one more; the second of a series ("the club's second
    # eleven", "the second floor", "every second Saturday") adds nothing.
    assert parse("We bought a second car, a Toyota Prius").flags[FLAG_ADDITIVE] == 1.0
    for text in (
        "Noor plays for the club's second eleven",
        "Our flat is on the second floor",
        "Bins go out every second Saturday",
    ):
        assert parse(text).flags[FLAG_ADDITIVE] == 0.0, text


def test_two_statements_of_one_addition_change_nothing_of_each_other() -> None:
    """Two statements that each say a word of addition and name one value past
    their subjects add it, the one as the other: a change read between them is
    a restatement. Not where each gives a number the other lacks, or one
    negates."""
    earlier = [
        "We bought a second car, a Toyota Prius",
        "Priya also teaches the under-9s",
        "We bought a second car, a Toyota Prius",
        "We bought a second car, a Toyota Prius",
    ]
    later = [
        "There's a Prius in the driveway now besides the Outback",
        "Priya moved up to teach the under-11s too",
        "We also have two bikes in the shed",
        "We don't have a second car anymore, the Prius went too",
    ]
    x = lexical(earlier, later, np.full(len(earlier), 0.6, dtype=np.float32))
    assert x[:, _ADDED_ALIKE].tolist() == [1.0, 1.0, 0.0, 1.0]
    # The model's reading as given: a change, more likely than not.
    p = np.tile(np.array([0.3, 0.6, 0.0, 0.1], dtype=np.float32), (len(earlier), 1))
    got = [LABELS[int(r.argmax())] for r in _kind_rules(x, p)]
    assert got[0] == "same" and got[1] == "update" and got[3] != "same"


def test_two_statements_that_say_also_of_one_value_are_one_addition() -> None:
    """Read as two facts, two statements that each say "also", "too", "as well"...
    of one value past their subjects are one addition; "another" or "more",
    which chat says of anything, do not make them one."""
    earlier = ["Lars speaks Finnish too, he studied in Tampere.", "Lena bought another Leica"]
    later = ["Lars gets by in Finnish as well", "Lena has more Leica lenses than ever"]
    x = lexical(earlier, later, np.full(2, 0.6, dtype=np.float32))
    assert x[:, _ADDED_ALIKE].tolist() == [1.0, 1.0]
    assert x[:, _ALSO_ALIKE].tolist() == [1.0, 0.0]
    p = np.tile(np.array([0.1, 0.0, 0.0, 0.9], dtype=np.float32), (2, 1))
    got = [LABELS[int(r.argmax())] for r in _kind_rules(x, p)]
    assert got == ["same", "unrelated"]
