"""Build the judge's table of given names from Faker's person providers.

A capitalised word opening a statement is a name ("Lena works at Siemens")
or a common word ("Prefers dark mode", "Production runs Postgres"): notes
often leave the subject out, so capitals alone cannot tell. The judge reads
an opening word as a name when it is a given name of this table and no
common English word (``halls.consolidate.judge.names``).

The first names of every locale of Faker (MIT licence, kept at the head of
the table) are read from its PyPI source distribution, pinned here by its
SHA-256, without importing it: the literal strings of each
``first_names*`` assignment of ``faker/providers/person/*/__init__.py``.
Names are folded to ASCII (the judge's words are ASCII) and lower-cased;
names of one or two letters, and names in other scripts, are left out.

Rerun (writes src/halls/consolidate/judge/data/names.txt.gz)::

    python scripts/build_names.py
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import re
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/halls/consolidate/judge/data/names.txt.gz"
SDIST = "faker-40.54.0.tar.gz"
SDIST_SHA256 = "38fba73e32699a9f1071724d67e5a66a84bf057987cffb27c9d0c979fda3f135"
PERSON = re.compile(r"^faker-40\.54\.0/faker/providers/person/[a-z]{2}(?:_[A-Z]{2})?/__init__\.py$")
NAME = re.compile(r"^[a-z]{3,}$")


def download(into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        + ["-d", str(into), "faker==40.54.0"],
        check=True,
    )
    path = into / SDIST
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{SDIST}: sha256 {digest}, expected {SDIST_SHA256}")
    return path


def first_names(source: str) -> set[str]:
    """The literal strings assigned to ``first_names*`` in a provider module."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assign):
            continue
        if not any(
            isinstance(t, ast.Name) and t.id.startswith("first_names") for t in node.targets
        ):
            continue
        for leaf in ast.walk(node.value):
            if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                out.add(leaf.value)
    return out


def fold(name: str) -> str:
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        names: set[str] = set()
        with tarfile.open(download(Path(tmp))) as tar:
            licence = tar.extractfile("faker-40.54.0/LICENSE.txt")
            assert licence is not None
            notice = licence.read().decode()
            for member in tar.getmembers():
                if PERSON.match(member.name):
                    fh = tar.extractfile(member)
                    assert fh is not None
                    names |= {fold(n) for n in first_names(fh.read().decode())}
    kept = sorted(n for n in names if NAME.match(n))
    head = "".join(f"# {line}\n".replace("# \n", "#\n") for line in notice.splitlines())
    body = head + f"# Given names of every locale of {SDIST}, folded to ASCII.\n"
    body += "\n".join(kept) + "\n"
    OUT.write_bytes(gzip.compress(body.encode(), mtime=0))
    print(f"{len(kept)} names -> {OUT.name} ({OUT.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
