"""`halls import FILE|DIR`: agent memory files become short-term memories.

The sample files in tests/data/agent_notes are one of each kind (CLAUDE.md,
AGENTS.md, MEMORY.md with front matter, .cursorrules, a Markdown note with
setext headings, a quote and a table, and a file that is not Markdown). The
CLI runs as a subprocess on a real data directory or against a live server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from halls import Memory, Settings
from halls.integrations.notes import parse

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "tests" / "data" / "agent_notes"
PER_FILE = {".cursorrules": 3, "AGENTS.md": 6, "CLAUDE.md": 7, "MEMORY.md": 4, "notes/deploy.md": 4}
TOTAL = sum(PER_FILE.values())


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("HALLS_")}
    return subprocess.run(
        [sys.executable, "-m", "halls", "import", *args],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def entries(data: Path, store: str = "default") -> list[dict[str, Any]]:
    with Memory(Settings(data_dir=data)) as memory:
        return [e.model_dump(mode="json") for e in memory.list_short(store=store, limit=1000)]


def by_content(found: list[dict[str, Any]], start: str) -> dict[str, Any]:
    matches = [e for e in found if e["content"].startswith(start)]
    assert len(matches) == 1, [e["content"] for e in found]
    return matches[0]


def test_import_a_directory_writes_each_item_with_its_source(tmp_path: Path) -> None:
    """Every item of every kind of file is one entry with its file, headings, line and hash."""
    data = tmp_path / "data"
    proc = run(str(SAMPLES), "--data-dir", str(data))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"imported {TOTAL} memories from 5 files into 'default' (0 already there)"
    )
    found = entries(data)
    assert Counter(e["metadata"]["import"]["path"] for e in found) == PER_FILE
    assert {e["source"] for e in found} == {"import"}
    money = by_content(found, "Money is an integer number of cents")
    assert money["metadata"]["import"]["headings"] == ["billing-api", "Code style"]
    assert money["metadata"]["import"]["line"] == 20
    assert len(money["metadata"]["import"]["sha256"]) == 64
    assert not money["pinned"] and money["expires_at"] is not None
    # A numbered item loses its number; a code block stays whole in its item
    # or joins the paragraph before it.
    assert by_content(found, "Install uv and run")["metadata"]["import"]["line"] == 5
    fmt = by_content(found, "Format and lint before every commit:")
    assert "ruff format && ruff check --fix" in fmt["content"]
    suite = by_content(found, "Run the whole suite before opening a pull request:")
    assert suite["content"].endswith("```sh\nuv run pytest -q\n```")
    # Setext headings, a quote, a table; the thematic break is no item.
    table = by_content(found, "| environment | cluster | namespace |")
    assert table["metadata"]["import"] == {
        **table["metadata"]["import"], "path": "notes/deploy.md",
        "headings": ["Deploy notes", "Rollback"],
    }  # fmt: skip
    by_content(found, "> If the error rate passes 2%")
    # Front matter, HTML comments and the file that is not Markdown are left out.
    text = "\n".join(e["content"] for e in found)
    assert "updated: 2026-11-20" not in text
    assert "Reviewed by Mia" not in text
    assert "not really a png" not in text


def test_import_again_writes_only_what_is_new_or_changed(tmp_path: Path) -> None:
    """A second import writes nothing; after one item is edited, only that item is written."""
    data = tmp_path / "data"
    notes = tmp_path / "project"
    shutil.copytree(SAMPLES, notes)
    assert run(str(notes), "--data-dir", str(data)).returncode == 0
    again = run(str(notes), "--data-dir", str(data))
    assert again.returncode == 0, again.stderr
    expected = f"imported 0 memories from 5 files into 'default' ({TOTAL} already there)"
    assert expected in again.stdout
    assert len(entries(data)) == TOTAL
    claude = notes / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("never a float", "never a float or a Decimal"))
    # Re-wrapping a paragraph changes no words: not a change.
    cursor = notes / ".cursorrules"
    cursor.write_text(cursor.read_text().replace("pure\nwhere", "pure where"))
    changed = run(str(notes / "CLAUDE.md"), str(cursor), "--data-dir", str(data))
    assert changed.returncode == 0, changed.stderr
    assert "imported 1 memory from 2 files into 'default' (9 already there)" in changed.stdout
    found = entries(data)
    assert len(found) == TOTAL + 1
    assert by_content(found, "Money is an integer number of cents, never a float or a Decimal.")


def test_dry_run_shows_what_it_would_write_and_writes_nothing(tmp_path: Path) -> None:
    """--dry-run prints the count and the first items, and creates no store or file."""
    data = tmp_path / "data"
    proc = run(str(SAMPLES), "--data-dir", str(data), "--store", "notes", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"would import {TOTAL} memories from 5 files into 'notes' (0 already there):"
    assert lines[1] == (
        "  .cursorrules:1  You are working on the billing-api service. Keep functions small and pu…"
    )
    assert "  AGENTS.md:5 [AGENTS.md > Setup]  Install uv and run `uv sync --all-extras`." in lines
    assert lines[-1] == f"  … and {TOTAL - 10} more"
    assert not data.exists() or not any(data.iterdir())
    # After a real import, a dry run counts what is already there.
    assert run(str(SAMPLES / "MEMORY.md"), "--data-dir", str(data)).returncode == 0
    dry = run(str(SAMPLES), "--data-dir", str(data), "--dry-run")
    assert dry.stdout.startswith(f"would import {TOTAL - 4} memories from 5 files into 'default'")
    assert "(4 already there):" in dry.stdout
    assert len(entries(data)) == 4


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing/CLAUDE.md", "Error: no such file or directory: missing/CLAUDE.md"),
        (
            "tests/data/agent_notes/notes/diagram.png",
            "Error: cannot import diagram.png: not a Markdown or agent rules file "
            "(*.md, *.markdown, *.mdc, .cursorrules, .windsurfrules, .clinerules)",
        ),
        ("src/halls/embed", "Error: no Markdown or agent rules files under src/halls/embed"),
    ],
)
def test_bad_path_or_unsupported_file_is_one_line_error(
    tmp_path: Path, target: str, message: str
) -> None:
    """A missing path, a file that is not Markdown or a directory without any: one line, exit 1."""
    data = tmp_path / "data"
    proc = run(target, "--data-dir", str(data))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), proc.stderr
    assert not data.exists()


def test_files_and_archive_options_do_not_mix(tmp_path: Path) -> None:
    """Files with --in, or an archive-only flag with files, is a usage error (exit 2)."""
    archive = tmp_path / "a.halls"
    archive.write_text("x")
    both = run(str(SAMPLES), "--in", str(archive), "--data-dir", str(tmp_path))
    assert both.returncode == 2 and "not both" in both.stderr
    flag = run(str(SAMPLES), "--reembed", "--data-dir", str(tmp_path))
    assert flag.returncode == 2 and "--reembed is for archives" in flag.stderr
    neither = run("--data-dir", str(tmp_path))
    assert neither.returncode == 2 and "give files to import" in neither.stderr


def test_import_through_a_running_server(tmp_path: Path, server_factory) -> None:
    """With --server-url the items go through the server's API, once however often imported."""
    live = server_factory()
    url = f"http://127.0.0.1:{live.port}"
    first = run(str(SAMPLES), "--server-url", url, "--store", "notes", "--pinned")
    assert first.returncode == 0, first.stderr
    assert f"imported {TOTAL} memories from 5 files into 'notes'" in first.stdout
    again = run(str(SAMPLES), "--server-url", url, "--store", "notes")
    assert f"imported 0 memories from 5 files into 'notes' ({TOTAL} already there)" in again.stdout
    listed = httpx.get(f"{url}/short", params={"store": "notes", "limit": 1000}).json()
    assert len(listed) == TOTAL
    assert all(e["pinned"] and e["expires_at"] is None for e in listed)
    hit = httpx.post(f"{url}/search", params={"store": "notes"},
                     json={"query": "who must approve a pull request?"}).json()  # fmt: skip
    assert hit["results"][0]["content"] == "One reviewer from the payments team must approve."


def test_parse_keeps_a_list_item_whole_and_a_leading_code_block_alone() -> None:
    """Sub-items stay in their item; a code block with nothing before it is its own item."""
    notes = parse("# A\n\n```\nmake\n```\n\n- top\n  - sub one\n  - sub two\n- next\n", "x.md")
    assert [n.content for n in notes] == ["```\nmake\n```", "top\n- sub one\n- sub two", "next"]
    assert all(n.headings == ("A",) for n in notes)
