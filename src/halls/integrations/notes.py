"""Agent memory files (CLAUDE.md, AGENTS.md, MEMORY.md, .cursorrules, Markdown notes) as memories.

Pure: files in, ``Note`` values out; ``halls import`` writes them through the
service. Markdown is parsed by markdown-it-py (CommonMark, plus tables), and
each top-level block becomes one note:

- a list item, whole (its sub-items, its code), without its bullet;
- a paragraph, a block quote or a table;
- a code block joins the note just before it under the same heading ("run
  the tests with:" and the command are one thing to remember); one that
  opens its section stands alone;
- headings are not notes: each note carries the path of headings it sat
  under. Thematic breaks and HTML blocks (comments, mostly) are skipped.

A note is known by the SHA-256 of its words (whitespace folded), so that
importing a file again writes only what is new or changed.
"""

from __future__ import annotations

import hashlib
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from halls.errors import InvalidInput

# Markdown files, and the plain-text rules files agents read from a project's
# root (Cursor, Windsurf, Cline), which are Markdown in practice.
SUFFIXES = (".md", ".markdown", ".mdc")
RULES_FILES = (".cursorrules", ".windsurfrules", ".clinerules")
# Never walked into: version control, dependencies, caches (their Markdown is
# someone else's README, not the user's memory).
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox",
     ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)  # fmt: skip

_SKIPPED = ("hr", "html_block")
_CODE = ("fence", "code_block")


@dataclass(frozen=True)
class Note:
    """One item of a file: what to remember and where it was found."""

    content: str
    path: str  # relative to the directory it was found in (or the file's name)
    headings: tuple[str, ...]
    line: int  # 1-based, where the item starts in the file
    sha256: str

    def metadata(self) -> dict[str, Any]:
        return {
            "import": {
                "path": self.path,
                "headings": list(self.headings),
                "line": self.line,
                "sha256": self.sha256,
            }
        }


def fingerprint(content: str) -> str:
    """The SHA-256 of ``content``'s words, whitespace folded (a re-wrapped line is no change)."""
    return hashlib.sha256(" ".join(content.split()).encode("utf-8")).hexdigest()


def supported(path: Path) -> bool:
    return path.name in RULES_FILES or path.suffix.lower() in SUFFIXES


def find_files(paths: list[Path]) -> list[tuple[Path, str]]:
    """Each file to read under ``paths``, with the name a note gives as its source.

    A file given is named by its name; a file found under a directory given,
    by its path relative to that directory.
    """
    found: list[tuple[Path, str]] = []
    for given in paths:
        if given.is_dir():
            under = [(f, f.relative_to(given).as_posix()) for f in _walk(given)]
            if not under:
                raise InvalidInput(f"no Markdown or agent rules files under {given} ({_kinds()})")
            found += under
        elif given.is_file():
            if not supported(given):
                raise InvalidInput(
                    f"cannot import {given.name}: not a Markdown or agent rules file ({_kinds()})"
                )
            found.append((given, given.name))
        else:
            raise InvalidInput(f"no such file or directory: {given}")
    return found


def _kinds() -> str:
    return ", ".join((*(f"*{s}" for s in SUFFIXES), *RULES_FILES))


def _walk(root: Path) -> Iterator[Path]:
    for path in sorted(root.iterdir()):
        if path.is_dir():
            if path.name not in SKIP_DIRS:
                yield from _walk(path)
        elif path.is_file() and supported(path):
            yield path


def read_notes(path: Path, name: str) -> list[Note]:
    """The notes of one file (UTF-8); ``name`` is what they give as their source."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"cannot import {name}: it is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {name}: {exc.strerror}") from None
    return parse(text, name)


def _front_matter(lines: list[str]) -> int:
    """How many lines a leading YAML front matter block (``---`` ... ``---``) takes; 0 if none.

    Cursor's .mdc rules and many note tools start with one; it says how the
    file is used, not what to remember.
    """
    if not lines or lines[0].strip() != "---":
        return 0
    for n, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return n + 1
    return 0


def parse(text: str, name: str) -> list[Note]:
    """The notes of Markdown ``text`` (see the module docstring for what one is)."""
    lines = text.splitlines()
    skip = _front_matter(lines)
    body = lines[skip:]
    tokens = MarkdownIt("commonmark").enable("table").parse("\n".join(body))
    notes: list[tuple[int, tuple[str, ...], str]] = []  # (line, headings, content)
    headings: list[tuple[int, str]] = []
    joinable = False  # whether a code block may join the last note
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        end = _closing(tokens, i)
        if tok.type == "heading_open":
            level = int(tok.tag[1])
            headings = [h for h in headings if h[0] < level]
            headings.append((level, _plain(tokens[i + 1])))
            joinable = False
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            for item in tokens[i + 1 : end]:
                if item.type == "list_item_open" and item.level == tok.level + 1 and item.map:
                    content = _item_text(body, item)
                    if content:
                        notes.append((item.map[0], _path(headings), content))
            joinable = True
        elif tok.type in _CODE and tok.map:
            code = _source(body, tok.map)
            if joinable and notes:
                line, where, before = notes[-1]
                notes[-1] = (line, where, f"{before}\n\n{code}")
            elif code:
                notes.append((tok.map[0], _path(headings), code))
            joinable = False
        elif tok.type not in _SKIPPED and tok.map:
            content = _source(body, tok.map)
            if content:
                notes.append((tok.map[0], _path(headings), content))
            joinable = True
        i = end + 1
    return [
        Note(content=c, path=name, headings=h, line=skip + n + 1, sha256=fingerprint(c))
        for n, h, c in notes
    ]


def _closing(tokens: list[Token], i: int) -> int:
    """The index of the token that closes the block opened at ``i`` (``i`` for a lone token)."""
    if tokens[i].nesting != 1:
        return i
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def _plain(inline: Token) -> str:
    """A heading's text without its markup (``**Style**`` -> ``Style``)."""
    words = [c.content for c in inline.children or [] if c.type in ("text", "code_inline")]
    return "".join(words).strip() or inline.content.strip()


def _path(headings: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(text for _, text in headings)


def _source(body: list[str], span: list[int]) -> str:
    return textwrap.dedent("\n".join(body[span[0] : span[1]])).strip()


def _item_text(body: list[str], item: Token) -> str:
    """A list item's source without its bullet or number, its continuation lines dedented."""
    assert item.map is not None
    first, *rest = body[item.map[0] : item.map[1]]
    marker = f"{item.info}{item.markup}"  # "-", "*", "1.", "2)"
    stripped = first.lstrip()
    head = stripped[len(marker) :].strip() if stripped.startswith(marker) else stripped
    tail = textwrap.dedent("\n".join(rest)).strip()
    return f"{head}\n{tail}".strip() if tail else head


__all__ = ["Note", "RULES_FILES", "SUFFIXES", "find_files", "fingerprint", "parse", "read_notes"]
