"""``halls import FILE|DIR ...``: agent memory files become short-term memories.

Each item ``halls.integrations.notes`` reads (a list item, a paragraph) is
remembered as a short-term entry, ``source: "import"``, with where it was
found and its SHA-256 in ``metadata.import``. The store's entries are read
first: an item whose SHA-256 one of them carries is not written again, so
importing the same files twice writes nothing the second time, and an
edited item is written as a new entry (the old one stays until it ages out
or is deleted). Through a running server when one answers (as ``remember``
does), else into the data directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from halls.cli._app import _memory, _remote, _translated
from halls.config import Settings
from halls.errors import HallsError, NotFound
from halls.integrations.notes import Note, find_files, read_notes
from halls.models import MAX_CONTENT_CHARS, MAX_LIST, NewShort

SOURCE = "import"
# POST /short/batch takes 1000 items, within server.max_body_bytes (8 MiB by
# default): a batch closes at whichever it reaches first.
BATCH_ITEMS = 1000
BATCH_CHARS = 2_000_000
SHOWN = 10


def _notes(paths: list[Path]) -> tuple[list[Note], int]:
    """Every note of the files under ``paths`` (each once), and how many files held them."""
    files = find_files(paths)
    seen: set[str] = set()
    notes = []
    for path, name in files:
        for note in read_notes(path, name):
            if len(note.content) > MAX_CONTENT_CHARS:
                click.echo(
                    f"halls: warning: skipped {note.path}:{note.line}: longer than "
                    f"{MAX_CONTENT_CHARS} characters",
                    err=True,
                )
            elif note.sha256 not in seen:
                seen.add(note.sha256)
                notes.append(note)
    return notes, len(files)


def _pages(fetch: Any) -> Iterator[dict[str, Any]]:
    offset = 0
    while True:
        try:
            page = fetch(MAX_LIST, offset)
        except NotFound:
            return  # no such store yet: nothing imported into it
        yield from page
        if len(page) < MAX_LIST:
            return
        offset += len(page)


def _imported(entries: Iterator[dict[str, Any]]) -> set[str]:
    """The SHA-256 of every imported item the store's short-term entries hold."""
    out = set()
    for entry in entries:
        mark = (entry.get("metadata") or {}).get("import")
        if isinstance(mark, dict) and isinstance(mark.get("sha256"), str):
            out.add(mark["sha256"])
    return out


def _batches(notes: list[Note]) -> Iterator[list[Note]]:
    batch: list[Note] = []
    size = 0
    for note in notes:
        if batch and (len(batch) == BATCH_ITEMS or size + len(note.content) > BATCH_CHARS):
            yield batch
            batch, size = [], 0
        batch.append(note)
        size += len(note.content)
    if batch:
        yield batch


def _item(note: Note, pinned: bool) -> dict[str, Any]:
    return {
        "content": note.content,
        "source": SOURCE,
        "pinned": pinned,
        "metadata": note.metadata(),
    }


def _show(notes: list[Note]) -> None:
    for note in notes[:SHOWN]:
        where = " > ".join(note.headings)
        first = note.content.splitlines()[0]
        first = first if len(first) <= 72 else first[:71] + "…"
        click.echo(f"  {note.path}:{note.line}" + (f" [{where}]" if where else "") + f"  {first}")
    if len(notes) > SHOWN:
        click.echo(f"  … and {len(notes) - SHOWN} more")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def import_notes(
    settings: Settings,
    data_dir: Path | None,
    server_url: str | None,
    token: str | None,
    paths: list[Path],
    store: str | None,
    dry_run: bool,
    pinned: bool,
) -> None:
    try:
        notes, files = _notes(paths)
    except HallsError as exc:
        raise click.ClickException(exc.message) from None
    remote = _remote(settings, data_dir, server_url, token)
    name = store or (None if remote is not None else settings.default_store)
    shown = f"'{name}'" if name else "the server's default store"
    if remote is not None:
        with remote, _translated():
            # Reading a store that is not there would create it (the default
            # one is made on first use): a dry run must leave no trace.
            there = store is None or store in remote.call("GET", "/stores", None)["stores"]
            listed = _pages(lambda n, o: remote.call("GET", "/short", store, limit=n, offset=o))
            known = _imported(listed) if there else set()
            new = [n for n in notes if n.sha256 not in known]
            if not dry_run:
                for batch in _batches(new):
                    items = [_item(n, pinned) for n in batch]
                    remote.call("POST", "/short/batch", store, {"items": items})
    else:
        with _memory(settings) as memory:

            def page(n: int, o: int) -> list[dict[str, Any]]:
                found = memory.list_short(store=name, limit=n, offset=o)
                return [e.model_dump(mode="json") for e in found]

            known = _imported(_pages(page)) if name in memory.stores() else set()
            new = [n for n in notes if n.sha256 not in known]
            if not dry_run:
                for batch in _batches(new):
                    memory.remember_many([NewShort(**_item(n, pinned)) for n in batch], store=name)
    had = len(notes) - len(new)
    verb = "would import" if dry_run else "imported"
    click.echo(
        f"{verb} {_count(len(new), 'memory', 'memories')} from {_count(files, 'file', 'files')} "
        f"into {shown} "
        f"({had} already there)" + (":" if dry_run and new else "")
    )
    if dry_run:
        _show(new)
