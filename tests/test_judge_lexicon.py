"""The judge's word lists as data (``halls.consolidate.judge.lexicon``): headers, shapes, use."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from halls.consolidate.judge import lexicon

JUDGE = Path(str(resources.files("halls.consolidate.judge")))
FILES = sorted((JUDGE / "lexicon").glob("*.txt"))
# How a module names a list it reads: words("x"), table("x"), groups("x"), alternation('x').
READ = re.compile(r"""\b(?:words|table|groups|alternation)\(["'](\w+)["']\)""")


def _header(path: Path) -> list[str]:
    lines = path.read_text("utf-8").splitlines()
    return lines[: next(n for n, line in enumerate(lines) if not line.startswith("#"))]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_list_says_what_it_means_and_where_it_is_read(path: Path) -> None:
    """Each file opens with 1-3 ``#`` lines, the last naming the module that reads it."""
    header = _header(path)
    assert 1 <= len(header) <= 3
    assert re.search(r"read by \w+(\.py)?", header[-1])


def test_every_list_is_read_and_every_read_list_exists() -> None:
    """No list file lies unread, and no module reads a list that is not there."""
    sources = "".join(p.read_text("utf-8") for p in JUDGE.glob("*.py"))
    read = set(READ.findall(sources))
    assert read == {p.stem for p in FILES}


def test_table_splits_on_a_tab_and_keeps_file_order() -> None:
    """A table is word -> value in file order; a word with no tab has the value ""."""
    assert list(lexicon.table("months"))[:3] == ["January", "February", "March"]
    assert lexicon.table("beside")["besides"] == ""
    assert lexicon.table("beside")["top"] == "on"


def test_number_reads_fractions() -> None:
    """Table values that are numbers parse as the literals they replaced (1/24 exactly)."""
    assert lexicon.number("1/24") == 1 / 24
    assert lexicon.number("1e-6") == 1e-6
    assert lexicon.number("14") == 14.0


def test_groups_keep_their_order() -> None:
    """A group's place in its file is its identity (counterparts, alternations)."""
    assert lexicon.groups("counterparts")[0] == ("son", "daughter")
