"""The promoted-fact benchmark on LoCoMo: its scoring, and one live run on made-up data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from halls.bench import dreams_locomo as bench
from halls.errors import InvalidInput


def test_precision_counts_facts_that_rest_on_a_cited_turn() -> None:
    facts = [
        bench.Fact("Ana is training for a marathon.", ("D1:2", "D2:2")),
        bench.Fact("Ana: Bye! See you!", ("D1:9",)),
        bench.Fact("What inspired it?", ("D2:5",)),
        bench.Fact("Ana keeps bees.", ("D3:1",)),
    ]
    scores = bench.score_facts(facts, {"D2:2", "D3:1", "D3:4"}, n_turns=12)
    assert scores == {
        "facts": 4,
        "substantive": 2,
        "precision": 0.5,
        "chance": 0.25,
        "junk": 2,
        "raw_turns": 1,
    }
    assert bench.score_facts([], {"D1:1"}, 4)["precision"] is None


@pytest.mark.parametrize("voice", ["friends", "assistant", "coding", "team"])
def test_the_shipped_blind_conversations_load(voice: str) -> None:
    """The team's conversations in LoCoMo's shape (``talk_*.json``, for
    ``--locomo``): every observation cites a turn of its conversation."""
    from importlib import resources

    data = resources.files("halls.bench").joinpath("data")
    with resources.as_file(data.joinpath(f"talk_{voice}.json")) as path:
        samples = bench.load(path)
        raw = json.loads(path.read_text("utf-8"))
    assert len(samples) == 2
    for sample, conv in zip(samples, raw, strict=True):
        turns = [t for s in sample.conversation.sessions for t in s]
        assert len(turns) >= 100
        cited = [
            ref
            for session in conv["observation"].values()
            for facts in session.values()
            for _, *refs in facts
            for ref in refs
        ]
        assert len(sample.observations) >= 50
        assert set(cited) <= {t.dia_id for t in turns}
        assert sample.cited == set(cited)


def test_citations_are_read_from_every_session_and_speaker() -> None:
    sample = {
        "sample_id": "x",
        "observation": {
            "session_1_observation": {"A": [["A runs.", "D1:2"], ["A bakes.", ["D1:3", "D1:4"]]]},
            "session_2_observation": {"B": [["B swims.", "D2:05"], ["?", "D"]]},
        },
    }
    cited, bad = bench.cited_turns(sample, {"D1:2", "D1:3", "D1:4", "D2:5"})
    assert cited == {"D1:2", "D1:3", "D1:4", "D2:5"} and bad == 1
    with pytest.raises(InvalidInput):
        bench.cited_turns({"sample_id": "y"}, set())


def _conversation() -> dict[str, object]:
    """Three sessions on three days: formulae recur, and so does one plan of Ana's."""
    conv: dict[str, object] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    lines = [
        ("Ana", "Hi Ben! How are you?"),
        ("Ana", "I'm training for the Lisbon marathon in October."),
        ("Ben", "Wow, that's amazing! What got you into running?"),
        ("Ana", "Thanks! Bye, see you soon!"),
    ]
    dates = ["2:14 pm on 9 May, 2023", "7:10 pm on 20 May, 2023", "9:00 am on 2 June, 2023"]
    observation = {}
    for n, when in enumerate(dates, start=1):
        conv[f"session_{n}_date_time"] = when
        conv[f"session_{n}"] = [
            {"speaker": who, "dia_id": f"D{n}:{k}", "text": text}
            for k, (who, text) in enumerate(lines, start=1)
        ]
        observation[f"session_{n}_observation"] = {
            "Ana": [["Ana is training for the Lisbon marathon.", f"D{n}:2"]]
        }
    return {"sample_id": "made-up", "conversation": conv, "qa": [], "observation": observation}


def test_one_run_over_http_promotes_the_plan_not_the_formulae(server, tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    sample = _conversation()
    sample["sample_id"] = f"made-up-{tmp_path.name}"
    path.write_text(json.dumps([sample]))
    result = bench.run(server.url, bench.load(path))
    (conv,) = result["per_conversation"]
    assert conv["turns"] == 12 and conv["cited_turns"] == 3
    assert conv["chance"] == 0.25
    assert [f["text"] for f in conv["promoted"]] == [
        "Ana is training for the Lisbon marathon in October."
    ]
    assert sorted(conv["promoted"][0]["turns"]) == ["D1:2", "D2:2", "D3:2"]
    assert conv["precision"] == 1.0 and conv["junk"] == 0 and conv["raw_turns"] == 0
    assert result["overall"]["min_facts_per_conversation"] == 1
