"""Write ``training/pairs_subjects.txt``: statements about one subject that say
different things of it, labelled ``unrelated``, drawn from the training pairs.

    python scripts/synth_pairs.py

The cross-encoder learned "same subject, different value" as an update and
over-learned it: it read "Raj is in Bangalore" / "Raj bumped httpx" as an
update (0.96), and "uses Neovim as their editor" / "their manager is Tomasz
Nowak" as one (0.90), so a fact about one attribute superseded a fact about
another. The hand-written training pairs hold few pairs whose subject
matches and whose attribute does not, so this draws them from sentences the
training pairs already hold: two sentences of *different* pairs whose
grammatical subject is the same (its possessor where it has one: "User's
editor" is about the user, attribute "editor"), whose attributes differ
(the possessed noun, or the verb and its object), which share no other
content word, and whose embeddings are far apart (cosine below ``FAR``).
Such pairs say two things of one subject and neither changes the other.

Deterministic (``SEED``): a rerun over the same training files writes the
same file. At most ``PER_SUBJECT`` pairs a subject, so "User" and "I" do not
make up the whole file, and ``TOTAL`` in all.

Not trained on yet: the file is not among ``pairs.TRAINING``. Two retrains
with it and ``pairs_attributes.txt`` (1,200 and 600 pairs; add both names to
``pairs.TRAINING``, then ``python scripts/train_cross.py``) read the
attribute pairs nobody trained on better (the cross-encoder alone 67.5% ->
79.5%) and kept more good LoCoMo facts, but each lost 4 of the 73 planted
facts of the never-read ``dreams_blind3b.yaml`` (docs/benchmarks.md), so
neither shipped.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pairs import HERE, load  # noqa: E402

from halls.embed.onnx import OnnxEmbedder  # noqa: E402
from halls.nlp import pipeline  # noqa: E402

SOURCES = ("pairs.txt", "pairs_voices.txt", "pairs_cross.txt", "pairs_attributes.txt")
OUT = HERE / "pairs_subjects.txt"
SEED = 7
FAR = 0.45  # below the cosine of most restatements and changes of one attribute
PER_SUBJECT = 40
TOTAL = 600
# Subjects whose referent the sentence alone does not fix: two sentences of
# "it" may well be about one thing's one attribute ("it is broken" / "it works").
VAGUE = {"it", "this", "that", "there", "they", "these", "those", "which", "who", "what"}
SUBJECT_DEPS = ("nsubj", "nsubjpass")
CONTENT = {"NOUN", "PROPN", "VERB", "ADJ", "NUM"}


def subject_and_attribute(doc) -> tuple[str, str, set[str]] | None:
    """(subject, attribute, content words) of a parsed sentence, or None."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    subj = next((c for c in root.children if c.dep_ in SUBJECT_DEPS), None)
    if subj is None:
        return None
    poss = next((c for c in subj.children if c.dep_ == "poss"), None)
    if poss is not None and poss.pos_ in ("PROPN", "NOUN"):
        key = " ".join(t.text.lower() for t in poss.subtree if t.dep_ != "case")
        attribute = subj.text.lower()
        named = {t.i for t in poss.subtree} | {subj.i}
    else:
        words = [t for t in subj.subtree if t.dep_ not in ("det", "punct")]
        key = " ".join(t.text.lower() for t in words)
        obj = next((c for c in root.children if c.dep_ in ("dobj", "attr", "acomp", "prep")), None)
        attribute = root.text.lower() + (" " + obj.text.lower() if obj is not None else "")
        named = {t.i for t in words}
    if not key or key in VAGUE or len(key.split()) > 3:
        return None
    content = {t.text.lower() for t in doc if t.pos_ in CONTENT and t.i not in named}
    content.discard("be")
    return key, attribute, content


def main() -> int:
    rng = random.Random(SEED)
    source: dict[str, int] = {}  # sentence -> the index of the first pair holding it
    for name in SOURCES:
        for _, a, b in load(name):
            for s in (a, b):
                source.setdefault(s, len(source))
    sentences = sorted(source, key=source.__getitem__)
    pair_of = {}
    n = 0
    for name in SOURCES:
        for _, a, b in load(name):
            pair_of.setdefault(a, n)
            pair_of.setdefault(b, n)
            n += 1
    nlp = pipeline()
    read = {}
    for s, doc in zip(sentences, nlp.pipe(sentences, batch_size=256), strict=True):
        got = subject_and_attribute(doc)
        if got is not None:
            read[s] = got
    vectors = OnnxEmbedder().embed(list(read))
    row = {s: i for i, s in enumerate(read)}
    by_subject: dict[str, list[str]] = defaultdict(list)
    for s, (key, _, _) in read.items():
        by_subject[key].append(s)
    out: list[tuple[str, str]] = []
    for key in sorted(by_subject):
        group = by_subject[key]
        if len(group) < 2:
            continue
        candidates = []
        for i, s in enumerate(group):
            for t in group[i + 1 :]:
                _, att_s, words_s = read[s]
                _, att_t, words_t = read[t]
                if pair_of[s] == pair_of[t] or att_s == att_t or words_s & words_t:
                    continue
                if float(vectors[row[s]] @ vectors[row[t]]) >= FAR:
                    continue
                candidates.append((s, t) if rng.random() < 0.5 else (t, s))
        rng.shuffle(candidates)
        out.extend(candidates[:PER_SUBJECT])
    rng.shuffle(out)
    out = out[:TOTAL]
    header = [
        "# Statement pairs about one subject that say different things of it, labelled",
        "# unrelated; drawn by scripts/synth_pairs.py from the sentences of "
        + ", ".join(SOURCES)
        + ".",
        "# Generated: do not edit by hand (rerun the script). Format: LABEL | earlier | later.",
    ]
    lines = [f"unrelated | {a} | {b}" for a, b in out]
    OUT.write_text("\n".join(header + lines) + "\n", "utf-8")
    print(f"{len(lines)} pairs over {len({read[a][0] for a, _ in out})} subjects -> {OUT.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
