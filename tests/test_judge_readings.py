"""How the judge reads a sentence before it compares two: word order, the scope of a
negation, given names, values written one way; and how its readings are combined
(an ensemble's members, a cluster's phrasings, two facts a change may be of)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from halls.consolidate.consensus import _consensus
from halls.consolidate.judge import (
    LABELS,
    Judgement,
    LocalJudge,
    Pair,
    default_judge,
    names,
    values,
)
from halls.consolidate.judge.columns import (
    CHANGED_ALIKE as _CHANGED_ALIKE,
)
from halls.consolidate.judge.columns import (
    COUNTERPART as _COUNTERPART,
)
from halls.consolidate.judge.columns import (
    DENIES as _DENIES,
)
from halls.consolidate.judge.columns import (
    N_LEXICAL,
    N_MLP_LEXICAL,
)
from halls.consolidate.judge.columns import (
    OTHER_PERSON as _OTHER_PERSON,
)
from halls.consolidate.judge.columns import (
    RENUMBERED as _RENUMBERED,
)
from halls.consolidate.judge.columns import (
    RENUMBERED_ONLY as _RENUMBERED_ONLY,
)
from halls.consolidate.judge.columns import (
    SAME_VALUES as _SAME_VALUES,
)
from halls.consolidate.judge.columns import (
    SWAPPED_NAMES as _SWAPPED_NAMES,
)
from halls.consolidate.judge.flags import ALTERS
from halls.consolidate.judge.lexical import features
from halls.consolidate.judge.mlp import MLP, mlp_inputs
from halls.consolidate.judge.reading import _VOCAB, _subject_first, parse
from halls.consolidate.judge.rules import apply as _kind_rules
from halls.consolidate.judge.rules import decided
from halls.consolidate.reconcile import Known, decide


def _features(embedder: Any, pairs: list[tuple[str, str]]) -> np.ndarray:
    vecs = embedder.embed([t for p in pairs for t in p])
    return features([Pair(a, b, vecs[2 * n], vecs[2 * n + 1]) for n, (a, b) in enumerate(pairs)])


def _labels(embedder: Any, pairs: list[tuple[str, str]]) -> list[str]:
    vecs = embedder.embed([t for p in pairs for t in p])
    items = [Pair(a, b, vecs[2 * n], vecs[2 * n + 1]) for n, (a, b) in enumerate(pairs)]
    # The reading of the words (the first MLP and the rules), which this file is
    # about; the cross-encoder's is tests/test_judge_cross.py's.
    return [j.label for j in default_judge(cross_pairs=0).judge(items)]


def test_a_value_named_before_a_possessive_is_read_subject_first() -> None:
    assert _subject_first("Kotlin is Nadia's primary language") == (
        "Nadia's primary language is Kotlin"
    )
    assert _subject_first("Marcus is Paulo's manager.") == "Paulo's manager is Marcus."
    assert _subject_first("Rex is my dog") == "My dog is Rex"
    # A given name holding "the <role> of" something is that role's value.
    assert _subject_first("Jamal is the captain of our football team") == (
        "The captain of our football team is Jamal"
    )
    assert _subject_first("Running is the best part of my day") == (
        "Running is the best part of my day"
    )
    # Nothing up front but pronouns, or a clause after: left as written.
    assert _subject_first("This is my desk") == "This is my desk"
    assert _subject_first("Java is Nadia's language, not Python") == (
        "Java is Nadia's language, not Python"
    )
    assert _subject_first("Lena works at Siemens") == "Lena works at Siemens"


def test_the_new_value_of_an_attribute_named_after_it_is_a_change(embedder) -> None:
    assert _labels(
        embedder,
        [("Java is Nadia's primary language", "Kotlin is Nadia's primary language")],
    ) == ["update"]


def test_a_negation_covers_its_clause() -> None:
    def negated(text: str) -> list[str]:
        p = parse(text)
        word = {v: k for k, v in _VOCAB.items()}
        return [word[int(i)] for i, n in zip(p.ids, p.negated, strict=True) if n]

    assert negated("The user never goes by Samantha") == ["goe", "samantha"]  # stems
    assert negated("The user goes by Sam, not Samantha") == ["samantha"]
    assert negated("Sven no longer drinks green tea; he has rooibos") == ["drink", "green", "tea"]
    assert negated("I don't eat meat but I eat fish") == ["eat", "meat"]


def test_what_a_negation_denies_of_the_other_statement(embedder) -> None:
    x = _features(
        embedder,
        [
            ("Sven drinks green tea", "Sven no longer drinks green tea"),
            ("The user goes by Sam, not Samantha.", "The user never goes by Samantha."),
            ("The standup is at 9:30 every morning", "We hold standup at 9:30, not at 10"),
        ],
    )
    assert x[:, _DENIES].tolist() == [1.0, 0.0, 0.0]


def test_values_are_written_one_way() -> None:
    n = values.normalise
    assert n("Monthly rent: EUR 1450") == n("Monthly rent: 1450 euros") == "Monthly rent: 1450 euro"
    assert n("call 0171 555 2231") == n("call 0171-555-2231") == "call 01715552231"
    assert n("set to 21C") == n("set to 21 degrees") == n("set to 21°C") == "set to 21 degree"
    # Not every number in groups is one number, nor every C a temperature.
    assert n("lived there 2019-2020") == "lived there 2019-2020"
    assert n("released 2024-05-12") == "released 2024-05-12"
    assert n("rooms 12 14") == "rooms 12 14"
    assert n("Python 3 C") == "Python 3 C"


def test_a_given_name_opening_a_statement_is_a_name(embedder) -> None:
    assert names.is_name("Lena") and names.is_name("jonas")
    assert not names.is_name("Prefers") and not names.is_name("Production")
    assert not names.is_name("Will")  # a given name, and a common word
    x = _features(
        embedder,
        [
            ("Lena works at Siemens", "Jonas has a job at Siemens"),
            ("Prefers dark mode", "Likes dark themes everywhere"),
        ],
    )
    assert x[:, _SWAPPED_NAMES].tolist() == [1.0, 0.0]
    assert _labels(embedder, [("Lena works at Siemens", "Jonas has a job at Siemens")]) != ["same"]


def test_relations_are_compared_whole(embedder) -> None:
    """Relations share first letters ("grandmother", "grandfather"): they are compared
    whole."""
    assert parse("Grandpa keeps bees").roots[0] != parse("Grandma keeps bees").roots[0]


def test_counterpart_relations_are_never_the_same_fact(embedder) -> None:
    """Each names another of a pair of relations ("son" / "daughter", "Mom" / "Dad"):
    two people, even worded otherwise, never one fact; one relation said on both
    sides, or two relations of no one pair, is no such sign."""
    pairs = [
        (
            "The user's son plays football on Saturdays",
            "User's daughter has football every Saturday",
        ),
        ("Mom takes her pill every morning", "dad: pill each morning"),
        (
            "The user's son plays football on Saturdays",
            "Saturday is football day for the user's son",
        ),
        ("My sister lives in Porto", "My cousin lives in Porto"),
    ]
    x = _features(embedder, pairs)
    assert x[:, _COUNTERPART].tolist() == [1.0, 1.0, 0.0, 0.0]
    # Had the model read each pair as the same, the first two keep none of it.
    same = np.tile(np.eye(len(LABELS), dtype=np.float32)[LABELS.index("same")], (4, 1))
    same[:, LABELS.index("unrelated")] = 0.1
    ruled = [LABELS[int(k)] for k in _kind_rules(x, same).argmax(axis=1)]
    assert ruled[:2] == ["unrelated", "unrelated"] and ruled[2] == "same"
    assert _labels(embedder, pairs)[:2] == ["unrelated", "unrelated"]


def test_a_day_named_as_this_or_last_is_an_event_a_part_of_it_alone_a_habit() -> None:
    episodic = 4  # the flag's place in ``Parsed.flags``
    events = ["Ran 10k this morning", "We had sushi last weekend", "Dentist tomorrow"]
    habits = ["Plays guitar in the evenings", "Olu's weekend sport is tennis", "I run mornings"]
    assert [parse(t).flags[episodic] for t in events] == [1.0, 1.0, 1.0]
    assert [parse(t).flags[episodic] for t in habits] == [0.0, 0.0, 0.0]


def test_a_change_said_after_a_change_to_another_value_is_a_change(embedder) -> None:
    """Both statements say a change: the later one to a new value changes the
    earlier one, however few words they share; to the same value, it restates it."""
    pairs = [
        ("Switched our DNS to Route 53", "DNS is now on Cloudflare"),
        ("User now prefers dark mode", "prefers light mode now"),
        ("Now uses zsh", "now uses zsh"),
    ]
    assert _labels(embedder, pairs) == ["update", "update", "same"]


def test_a_many_valued_verb_after_a_determiner_is_a_noun() -> None:
    multi = 5  # the flag's place in ``Parsed.flags``
    assert parse("I play the piano").flags[multi] == 1.0
    assert parse("the cat sitter charges 25 a visit").flags[multi] == 0.0
    assert parse("my own car is a Golf").flags[multi] == 0.0


def test_the_subject_alone_is_no_value_in_common(embedder) -> None:
    """Two statements whose only value is the name they open with give no value in
    common: the model's reading of a change stands; a value past it is one."""
    pairs = [
        ("Yusuf is training for a triathlon", "Yusuf is training for a marathon"),
        ("Wiebke teaches maths", "Wiebke teaches physics"),
        ("The service exposes a REST API", "The service has a REST interface"),
    ]
    x = _features(embedder, pairs)
    assert x[:, _SAME_VALUES].tolist() == [0.0, 0.0, 1.0]
    assert _labels(embedder, pairs) == ["update", "update", "same"]


def test_a_phrase_of_change_marks_a_change() -> None:
    change = 0  # the flag's place in ``Parsed.flags``
    said = [
        "I mostly watch films on Mubi these days",
        "Aoife has taken over as captain",
        "Down to 76 kilos",
        "Back to full-time",
        "Zoe just turned 8",
    ]
    plain = ["I watch films on Mubi", "Aoife is the captain", "Weighs 76 kilos", "Zoe is 8"]
    assert [parse(t).flags[change] for t in said] == [1.0] * len(said)
    assert [parse(t).flags[change] for t in plain] == [0.0] * len(plain)


def test_a_british_spelling_is_the_american_word() -> None:
    assert parse("Her favourite colour is grey").roots.tolist() == (
        parse("Her favorite color is gray").roots.tolist()
    )
    assert parse("300 Mbps fibre").roots.tolist() == parse("300 Mbps fiber").roots.tolist()


def test_an_initialisms_plural_is_the_initialism() -> None:
    assert parse("I changed GPs").roots[-1] == parse("my GP").roots[-1]
    assert parse("staging runs three VMs").roots[-1] == parse("a VM").roots[-1]


def test_another_number_and_the_same_words_is_a_new_value(embedder) -> None:
    """Only a number differs, past the first word: a new value of the same thing,
    however the model reads it; opening the statement, a number names the subject."""
    pairs = [
        ("Dad takes 500 mg of metformin twice a day", "Dad takes 1000 mg of metformin twice a day"),
        ("The lease is 1450 euros a month", "The lease is 1600 euros a month"),
        ("the 38 bus runs every 10 minutes", "the 39 bus runs every 10 minutes"),
        ("Dad takes 500 mg of metformin", "Dad also takes 1000 mg of metformin"),  # an addition
        ("Dad takes 500 mg of metformin", "Mum takes 1000 mg of metformin"),  # a word too
    ]
    x = _features(embedder, pairs)
    assert x[:, _RENUMBERED_ONLY].tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]
    unrelated = np.tile(np.eye(len(LABELS), dtype=np.float32)[LABELS.index("unrelated")], (5, 1))
    ruled = [LABELS[int(k)] for k in _kind_rules(x, unrelated).argmax(axis=1)]
    assert ruled == ["update", "update", "unrelated", "unrelated", "unrelated"]
    assert _labels(embedder, pairs)[:2] == ["update", "update"]


def test_two_changes_to_one_value_are_one_change(embedder) -> None:
    """Both say the thing changed, to a value both give: neither changes the other."""
    assert {"swapped", "transferred", "upped", "replaced"} <= ALTERS
    assert not {"port", "lower", "trades"} & ALTERS  # nouns and adjectives too
    pairs = [
        ("Dev swapped his Kindle for a Kobo Clara", "Dev now reads on a Kobo Clara"),
        ("We upgraded the office line to 300Mbps", "The office line is now 300 Mbps"),
        # Two new values: two changes.
        ("Dev swapped his Kindle for a Kobo Clara", "Dev now reads on a Kobo Libra"),
    ]
    x = _features(embedder, pairs)
    assert x[:, _CHANGED_ALIKE].tolist() == [1.0, 1.0, 1.0]
    # Had the model read each as a change of the other, the first two are none;
    # the third names another value, and is never the same.
    change = np.tile(np.eye(len(LABELS), dtype=np.float32)[LABELS.index("update")], (3, 1))
    ruled = [LABELS[int(k)] for k in _kind_rules(x, change).argmax(axis=1)]
    assert ruled[:2] == ["same", "same"] and ruled[2] != "same"
    labels = _labels(embedder, pairs)
    assert labels[1] == "same" and labels[2] != "same"


def test_a_new_number_of_the_same_thing_is_a_change(embedder) -> None:
    """ "Grade 2" / "Grade 3" count the same thing: a change, though the two share only
    capitalised words (which alone would make them two facts about Noor)."""
    pairs = [("Noor is in Grade 2 at school", "Noor is in Grade 3")]
    assert _features(embedder, pairs)[:, _RENUMBERED].tolist() == [1.0]
    assert _labels(embedder, pairs) == ["update"]
    assert values.normalise("300Mbps") == values.normalise("300 mbps") == "300 mbps"


def test_an_address_is_compared_whole(embedder) -> None:
    x = _features(
        embedder,
        [("The staging URL is staging.example.com", "The staging URL is stage.example.org")],
    )
    assert x[0, _SWAPPED_NAMES] == 1.0


def test_an_ensemble_averages_its_members() -> None:
    rng = np.random.default_rng(3)
    k, h = len(LABELS), 5

    def member() -> dict[str, np.ndarray]:
        return {
            "w1": rng.normal(size=(N_MLP_LEXICAL, h)),
            "b1": rng.normal(size=h),
            "w2": rng.normal(size=(h, k)),
            "b2": rng.normal(size=k),
        }

    common = {"mean": np.zeros(N_MLP_LEXICAL), "std": np.ones(N_MLP_LEXICAL)}
    one, two = member(), member()
    both = {**common, **{n: np.stack([one[n], two[n]]) for n in one}}
    x = np.zeros((4, N_LEXICAL), dtype=np.float32)
    x[:, :8] = rng.normal(size=(4, 8))

    def raw(weights: dict[str, np.ndarray]) -> np.ndarray:
        m = mlp_inputs(x)
        z = np.maximum(m @ weights["w1"] + weights["b1"], 0) @ weights["w2"] + weights["b2"]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]

    got = LocalJudge(MLP(both)).probabilities(x)
    want = _kind_rules(x, ((raw(one) + raw(two)) / 2).astype(np.float32))
    assert np.allclose(got, want, atol=1e-5)
    assert np.allclose(
        LocalJudge(MLP({**common, **one})).probabilities(x), _kind_rules(x, raw(one))
    )


def test_a_clusters_readings_count_with_their_whole_distributions() -> None:
    """0.72 a change in one phrasing, 0.32 (its second choice) in another: likelier than not."""
    first = Judgement("update", 0.72, "local", (0.0, 0.72, 0.0, 0.28))
    second = Judgement("unrelated", 0.68, "local", (0.0, 0.32, 0.0, 0.68))
    got = _consensus([first, second])
    assert got.label == "update" and abs(got.confidence - 0.52) < 1e-6
    # A phrasing sure of the change: the one that sees no relation abstains.
    sure = Judgement("update", 0.92, "local", (0.0, 0.92, 0.0, 0.08))
    other = Judgement("unrelated", 0.95, "local", (0.0, 0.05, 0.0, 0.95))
    got = _consensus([sure, other])
    assert got.label == "update" and abs(got.confidence - 0.92) < 1e-6
    # ... not a sure "same": chatty statements would gather into one fact.
    same = Judgement("same", 0.92, "local", (0.92, 0.0, 0.0, 0.08))
    assert _consensus([same, other]).label == "unrelated"
    # Without distributions (a judge that gives only its label): votes, as before.
    bare = _consensus([Judgement("update", 0.92, "llm"), Judgement("unrelated", 0.68, "llm")])
    assert bare.label == "update" and abs(bare.confidence - 0.46) < 1e-6


def test_a_change_read_of_two_facts_is_of_the_nearer() -> None:
    near, far = Known("l_near", "a", 0.9), Known("l_far", "b", 0.56)
    got = decide(
        [near, far],
        [(far, Judgement("update", 1.0, "local")), (near, Judgement("update", 0.98, "local"))],
        True,  # "Reports now go to Pia as Word files": a word of change
    )
    assert (got.kind, got.target_id) == ("UPDATE", "l_near")


def test_the_pairs_the_rules_decide_do_not_train_the_model(embedder) -> None:
    x = _features(
        embedder,
        [
            ("Eli is allergic to cats", "Eli's son is allergic to cats"),
            ("Eli is allergic to cats", "Eli is allergic to dogs"),
        ],
    )
    assert x[:, _OTHER_PERSON].tolist() == [1.0, 0.0]
    assert decided(x).tolist() == [True, False]


def _words(text: str, mark: str = "contrast") -> dict[str, bool]:
    parsed = parse(text)
    names_of = {i: w for w, i in _VOCAB.items()}
    return {
        names_of[int(i)]: bool(m) for i, m in zip(parsed.ids, getattr(parsed, mark), strict=True)
    }


def test_the_value_beside_an_addition_or_before_a_change_is_no_claim() -> None:
    """ "The Economist in addition to The Atlantic" claims The Economist; "switched from
    Python 3.9 to Python 3.12" claims 3.12; "Ana is from Spain" claims Spain."""
    assert _words("I subscribe to The Economist in addition to The Atlantic") == {
        "subscribe": False,
        "economist": False,
        "atlantic": True,
    }
    assert _words("plays the cello as well as the piano")["piano"]
    assert _words("switched from Python 3.9 to Python 3.12") == {
        "python": False,  # said again after "to"
        "3.9": True,
        "3.12": False,
    }
    assert parse("switched from Python 3.9 to Python 3.12").numbers == {3.12}
    assert _words("Ana is from Spain") == {"ana": False, "spain": False}


def test_a_departure_or_a_side_is_no_retraction() -> None:
    retracts = {
        t: bool(parse(t).flags[3])
        for t in (
            "the flight leaves May 2nd",
            "the train leaves at 7:40",
            "I write with my left hand",
            "Dan left Google in 2022",
            "I left the band",
        )
    }
    assert retracts == {
        "the flight leaves May 2nd": False,
        "the train leaves at 7:40": False,
        "I write with my left hand": False,
        "Dan left Google in 2022": True,
        "I left the band": True,
    }


def test_a_shortening_is_read_as_its_word() -> None:
    assert list(_words("checkout svc region: us-east-1")) == [
        "checkout",
        "service",
        "region",
        "us-east-1",
    ]
    assert list(_words("ana's bday")) == ["ana", "birthday"]
    assert list(_words("team docs")) == list(_words("team documentation"))
    assert list(_words("my bike")) == list(_words("my bicycle"))
    # "DB" read as "database" stays a common noun, no name.
    assert _words("the billing DB", "name") == {"billing": False, "database": False}


def _roots(text: str) -> list[int]:
    return parse(text).roots.tolist()


def test_the_forms_of_a_word_are_one_word() -> None:
    # Stems before the first letters: "swimming" is no "swimm", "cycling" no "cycli".
    assert _roots("swimming every morning") == _roots("I swim every morning")
    assert _roots("cycling") == _roots("cycles") == _roots("cycle")
    assert _roots("speaks Spanish fluently")[-1] == _roots("fluent")[0]
    # A name is only itself, opening the statement or not, written small or not
    # (the stem of "emily" would be "emili").
    assert _roots("Emily has a peanut allergy")[0] == _roots("the cat belongs to Emily")[-1]
    assert _roots("emily - peanut allergy")[0] == _roots("Emily")[0]


def test_a_name_glued_to_its_number_is_the_name_and_the_number() -> None:
    assert list(_words("staging db: pg14")) == ["staging", "database", "postgresql", "14"]
    assert list(_words("The staging database runs Postgres 14")) == [
        "staging",
        "database",
        "run",
        "postgresql",
        "14",
    ]
    assert list(_words("k8s")) == list(_words("Kubernetes"))


def test_any_more_closing_a_clause_retracts() -> None:
    retracts = 3  # the flag of a retraction word (``_parse``)
    assert parse("Leo isn't part of the platform team any more").flags[retracts] == 1.0
    assert parse("Leo is no longer on the platform team").flags[retracts] == 1.0
    assert parse("I don't want any more coffee").flags[retracts] == 0.0  # a quantity


def test_a_detail_more_is_the_same_fact(embedder) -> None:
    # Read as two facts (``unrelated`` 0.80) before the judge was trained on pairs of
    # one fact said with a detail more or less.
    assert _labels(embedder, [("Yusuf speaks Spanish", "Yusuf speaks Spanish fluently")]) == [
        "same"
    ]


def test_the_value_a_swap_gives_up_is_no_claim() -> None:
    """ "Swapped his Kindle for a Kobo" claims the Kobo, as "from X to Y" claims Y."""
    assert _words("Dev swapped his Kindle for a Kobo Clara", "contrast") == {
        "dev": False,
        "kindle": True,
        "kobo": False,
        "clara": False,
    }
    assert _words("We replaced Bitwarden with 1Password", "contrast") == {
        "bitwarden": True,
        "1password": False,
    }
    # "Swap" with no "for" or "with" after it names no old value.
    assert not any(_words("We swapped the shifts", "contrast").values())


def test_an_attribute_and_the_verb_giving_its_value_stand_for_each_other(embedder) -> None:
    """ "Lena's manager is Tom" says "Lena reports to Tom" (``synonyms.ALTERNATIONS``);
    the words of another attribute do not ("Lena's mentor is Tom")."""
    x = _features(
        embedder,
        [
            ("Lena's manager is Tom Becker", "Lena reports to Tom Becker"),
            ("Priya's birthday is March 14", "priya was born on the 14th of march"),
            ("My sister's car is a blue Camry", "my sister drives a blue Camry"),
            ("Lena's mentor is Tom Becker", "Lena reports to Tom Becker"),
        ],
    )
    novel, dropped = 5, 6  # the counts of words one statement has and the other lacks
    assert (x[:3, novel] + x[:3, dropped]).tolist() == [0.0, 0.0, 0.0]
    assert x[3, novel] > 0 and x[3, dropped] > 0
    assert _labels(
        embedder,
        [
            ("Lena's manager is Tom Becker", "Lena reports to Tom Becker"),
            ("User speaks Spanish", "I'm fluent in Spanish"),
        ],
    ) == ["same", "same"]


def test_capitals_shortening_a_run_of_words_are_those_words(embedder) -> None:
    """ "NYT" is "New York Times", "BP" "blood pressure"; other capitals stay themselves."""
    x = _features(
        embedder,
        [
            ("User pays for the New York Times", "User pays for the NYT"),
            ("Mom takes a blood pressure pill", "Mom takes a BP pill"),
            ("User pays for the New York Times", "User pays for the WSJ"),
            ("The house router is a Ubiquiti Dream Router", "The house router is a Ubiquiti UDR"),
        ],
    )
    novel, dropped = 5, 6
    assert (x[[0, 1, 3], novel] + x[[0, 1, 3], dropped]).tolist() == [0.0, 0.0, 0.0]
    # "WSJ" spells no run of the other: one word in, three out (of five, scaled).
    assert x[2, novel] == pytest.approx(1 / 5) and x[2, dropped] == pytest.approx(3 / 5)
    assert x[2, _SWAPPED_NAMES] == 1.0
    # "US" and "IT" in capitals are a country and a department, "us" a pronoun.
    assert "us" in _words("User has a US passport")
    assert "us" not in _words("Send us the report")


def test_a_later_statement_dropping_nothing_is_no_update(embedder) -> None:
    """A statement that keeps all of the earlier one's words and adds some says more of
    it (or another fact); only a word of change makes it a change."""
    pairs = [
        ("Ben has swim practice on Tuesdays", "ben: swimming practice every tuesday at 5"),
        ("Ben has swim practice on Tuesdays", "Ben's swim practice now starts at 5"),
    ]
    x = _features(embedder, pairs)
    update = np.tile(np.eye(len(LABELS), dtype=np.float32)[LABELS.index("update")], (2, 1))
    assert [LABELS[int(k)] for k in _kind_rules(x, update).argmax(axis=1)] == ["same", "update"]


def test_a_word_of_many_values_naming_a_measure_holds_one(embedder) -> None:
    """The word "interest" may hold many values ("an interest in chess, and in go"), an "interest
    rate" one at a time: a new rate is a change, not a second rate."""
    pairs = [
        ("The interest rate on our mortgage is 6.8%", "mortgage interest rate: 5.9%"),
        ("Aru has an interest in chess", "Aru has an interest in go"),
    ]
    assert parse(pairs[0][0]).flags[5] == 0.0 and parse(pairs[1][0]).flags[5] == 1.0
    assert _labels(embedder, pairs) == ["update", "unrelated"]


def test_a_preference_said_as_the_preferred_one_holds_one(embedder) -> None:
    """ "Likes" may hold many values; "likes ... best" and a "favourite" one at a time:
    another restaurant liked best is a change, not a second favourite."""
    pairs = [
        (
            "Out of all the places in town, Tove likes Casa Lupo best",
            "Out of all the places in town, Tove likes Pho Saigon best",
        ),
        ("Tove likes Casa Lupo", "Tove likes Pho Saigon"),
    ]
    assert parse(pairs[0][0]).flags[5] == 0.0 and parse(pairs[1][0]).flags[5] == 1.0
    assert parse("Tove's favourite restaurant is Casa Lupo").flags[6] == 1.0
    assert _labels(embedder, pairs) == ["update", "unrelated"]


def test_off_before_a_time_rings_and_retracts_nothing() -> None:
    """An alarm that "goes off at 7:15" sets a time; "the alarm is off" retracts one."""
    assert parse("My weekday alarm goes off at 7:15").flags[3] == 0.0
    assert parse("My weekday alarm is off now").flags[3] == 1.0


def test_a_new_holder_of_a_role_is_a_change(embedder) -> None:
    """One person at a time is "the captain of our team"; "a member" is one of many."""
    pairs = [
        ("Jamal is the captain of our football team", "Luis is the captain of our football team"),
        ("Jamal is a member of the chess club", "Luis is a member of the chess club"),
    ]
    assert _labels(embedder, pairs) == ["update", "unrelated"]


def test_leaving_for_a_place_at_a_time_is_a_journey() -> None:
    """ "Leaves for Lisbon on March 12" departs; "left for a job at Bosch" leaves one."""
    assert parse("Priya leaves for Lisbon on March 12th at 7:45").flags[3] == 0.0
    assert parse("Marta left for a job at Bosch").flags[3] == 1.0


def test_a_rescheduled_appointment_is_a_change() -> None:
    assert parse("The dentist rescheduled me to Monday at 10 am").flags[0] == 1.0
    assert parse("The dentist is on Monday at 10 am").flags[0] == 0.0


def test_well_and_every_second_add_nothing() -> None:
    """ "Speaks French well" says how, "every second Saturday" when; "a second cat" adds."""
    assert parse("Hugo speaks French well").flags[2] == 0.0
    assert parse("Jakub plays D&D every second Saturday").flags[2] == 0.0
    assert parse("Aiko got a second cat").flags[2] == 1.0
    assert parse("Hugo speaks French as well").flags[2] == 1.0


def test_a_javascript_name_is_read_without_its_suffix() -> None:
    js, plain = parse("the web app is on Node.js 22"), parse("the web app is on Node 22")
    assert js.ids.tolist() == plain.ids.tolist()
