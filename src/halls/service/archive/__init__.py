"""Export, import and backup of a store: the user owns their memory and can move it.

``Archives`` is what the ``Memory`` service calls; each of its three verbs
lives in a module of its own:

- ``exporter``: every record of every tier with its history, the journal,
  briefs, forget flags, run records, the edges and each searchable record's
  vector and reinforcement, into one archive, read through the ``Store``
  protocol only, so any backend exports the same way;
- ``importer``: the archive read twice, once to check all of it, then to
  write; a damaged, altered or wrongly-unlocked archive is refused by the
  first pass, before anything is written;
- ``backup``: the backend's own consistent file copy (SQLite's online
  backup API), for a backend that has one;

and ``format`` holds the archive's bytes (JSON Lines, checksum, AES-256-GCM
chunks under a scrypt key), ``progress`` the callback both report to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO

from halls.embed import Embedder
from halls.errors import InvalidInput
from halls.models import ON_CONFLICT
from halls.service import graph
from halls.service.archive import backup, exporter, importer
from halls.service.archive.format import is_encrypted, read_archive
from halls.service.archive.importer import ImportReport
from halls.service.archive.progress import Progress, Ticker
from halls.service.stores import Stores
from halls.store import check_store_name

__all__ = ["Archives", "ImportReport", "Progress", "archive_encrypted"]


class Archives:
    """Export, import and backup over the service's stores."""

    def __init__(
        self,
        stores: Stores,
        embedder: Callable[[], Embedder],
        clock: Callable[[], float],
    ) -> None:
        self._stores = stores
        self._embedder = embedder
        self._clock = clock

    def export(
        self,
        out: IO[bytes],
        *,
        store: str | None = None,
        passphrase: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """Write the whole store to ``out``: ``exporter.export``."""
        if passphrase is not None and not passphrase:
            raise InvalidInput("the passphrase must not be empty")
        s = self._stores.open(store)
        return exporter.export(s, out, passphrase=passphrase, progress=progress, clock=self._clock)

    def import_archive(
        self,
        path: Path,
        *,
        store: str | None = None,
        passphrase: str | None = None,
        on_conflict: str = "keep-existing",
        overwrite: bool = False,
        dry_run: bool = False,
        reembed: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import the archive at ``path`` into ``store`` (created if missing).

        A store that already holds records is refused unless ``overwrite``;
        then records whose id is already there are settled by
        ``on_conflict``. ``dry_run`` checks everything and counts what would
        change, writing nothing. ``reembed`` embeds the records with the
        configured embedder instead of taking the archive's vectors (required
        when the archive came from another embedder).
        """
        if on_conflict not in ON_CONFLICT:
            raise InvalidInput(f"on_conflict must be one of {', '.join(ON_CONFLICT)}")
        name = check_store_name(self._stores.name(store))
        header, archived = importer.verify(path, passphrase, reembed, self._embedder)
        s = importer.target(self._stores, name, overwrite, dry_run)
        report = ImportReport(name, dry_run, reembed, archived)
        with open(path, "rb") as source:
            lines = read_archive(source, passphrase)
            next(lines)  # the header, checked by the first pass
            items = importer.items(lines, header)
            tick = Ticker(progress, sum(archived.values()))
            importer.Importer(s, report, on_conflict, reembed, self._embedder, tick).run(items)
        if s is not None and not dry_run:
            # An archive from before the association graph has no mention
            # edges; linking is idempotent, so a newer one gains nothing here.
            graph.link_names(s)
        return report

    def backup(self, out: Path, *, store: str | None = None, overwrite: bool = False) -> int:
        """A consistent copy of the store's file(s) at ``out``: ``backup.backup``."""
        return backup.backup(self._stores.open(store), out, overwrite=overwrite)


def archive_encrypted(path: Path) -> bool:
    """Whether the archive at ``path`` needs a passphrase."""
    with open(path, "rb") as f:
        return is_encrypted(f)
