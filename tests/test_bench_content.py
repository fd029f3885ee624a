"""The content measure of ``halls bench dreams --locomo``, on the real encoder."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from halls.bench import content


@pytest.fixture(scope="module")
def encoder() -> content.Encoder:
    """sentence-transformers all-MiniLM-L6-v2, float32, loaded once."""
    return content.load_encoder()


@pytest.mark.torch
def test_a_paraphrase_is_said_and_an_unrelated_or_vague_sentence_is_not(encoder) -> None:
    """Cosines of the real encoder: paraphrases at 0.80 or more, the rest below."""
    said = ["Ana is training for the Lisbon marathon.", "Ana is exploring counseling as a career."]
    facts = [
        "Ana is training for the Lisbon marathon in October.",
        "Ana has been looking into counseling lately.",
        "Ana keeps bees.",
        "Ana is doing well.",
    ]
    sims = content.best_cosines(facts, said, encoder)
    assert sims.shape == (4, 2) and sims.dtype == np.float32
    best = sims.max(axis=1)
    assert best[0] >= 0.9 and best[1] >= 0.8
    assert best[2] < 0.6 and best[3] < 0.7


@pytest.mark.torch
def test_figures_over_conversations(encoder) -> None:
    """Precision over all facts, the mean over conversations with facts, coverage of all."""
    facts = {
        "a": ["Ana is training for the Lisbon marathon in October.", "Ana keeps bees."],
        "b": [],
    }
    said = {
        "a": ["Ana is training for the Lisbon marathon.", "Ana moved to Porto."],
        "b": ["Ben plays the cello."],
    }
    got = content.score(facts, said, encoder)
    assert got["encoder"] == {
        "library": "sentence-transformers",
        "model": "all-MiniLM-L6-v2",
        "dtype": "float32",
        "threshold": 0.8,
    }
    assert (got["facts"], got["good"], got["precision"]) == (2, 1, 0.5)
    assert got["good_per_conversation"] == 1.0  # "b" has no fact: left out of the mean
    assert (got["observations"], got["covered"], got["coverage"]) == (3, 1, 0.3333)
    a = got["per_conversation"]["a"]
    assert a["said"] == [True, False] and a["cosines"][0] >= 0.9 > 0.6 > a["cosines"][1]
    assert got["per_conversation"]["b"] == {
        "facts": 0,
        "good": 0,
        "observations": 1,
        "covered": 0,
        "cosines": [],
        "said": [],
    }


def test_observations_are_read_from_every_session_and_speaker() -> None:
    """The text of each [text, evidence] item; empty items and other fields left out."""
    sample = {
        "observation": {
            "session_1_observation": {"A": [["A runs.", "D1:2"], [" ", "D1:3"]]},
            "session_2_observation": {"B": [["B swims.", ["D2:1"]]], "A": []},
        }
    }
    assert content.observations(sample) == ["A runs.", "B swims."]
    assert content.observations({}) == []


def test_without_sentence_transformers_the_extra_is_named(monkeypatch) -> None:
    """No traceback: MissingExtra says which pip install brings the encoder."""
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(content.MissingExtra, match=r"pip install 'halls\[torch\]'"):
        content.load_encoder()
