"""A whole store to and from files on the server's machine: export, import, backup.

These tools take a path on the machine this MCP server runs on, so
``halls.mcp.edge`` allows them only to an admin of every store.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from halls.mcp.backend import JSON
from halls.mcp.tools.base import ADD, DESTROY, Store, Tools, run
from halls.models import OnConflict

FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="A file path on the machine this MCP server runs on.",
    ),
]
Passphrase = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=1024,
        description="Encrypts (export) or unlocks (import) the archive; omit for a plain one.",
    ),
]


def register(tools: Tools) -> None:
    backend, pick = tools.backend, tools.pick

    # Export, import and backup hand over or replace a whole store: admin only.
    @tools.tool(ADD, "admin")
    async def export_store(
        path: FilePath,
        passphrase: Passphrase = None,
        overwrite: Annotated[bool, Field(description="Replace the file if it exists.")] = False,
        store: Store = None,
    ) -> JSON:
        """Write a whole store to one archive file: every tier with its history, the journal,
        briefs, forget flags, consolidation runs, and each memory's vector. Encrypted
        (AES-256-GCM) when a passphrase is given. Call it only when the user asks to export or
        move their memory. Returns the path and the archive's size."""
        return await run(
            backend.export_store,
            path,
            store=pick(store),
            passphrase=passphrase,
            overwrite=overwrite,
        )

    @tools.tool(DESTROY, "admin")
    async def import_store(
        path: FilePath,
        passphrase: Passphrase = None,
        on_conflict: Annotated[
            OnConflict,
            Field(description="For a record whose id the store already holds."),
        ] = "keep-existing",
        overwrite: Annotated[
            bool, Field(description="Allow importing into a store that already holds records.")
        ] = False,
        dry_run: Annotated[
            bool, Field(description="Check the archive and count; change nothing.")
        ] = False,
        reembed: Annotated[
            bool, Field(description="Embed the records again with this server's embedder.")
        ] = False,
        store: Store = None,
    ) -> JSON:
        """Import an archive written by export_store into a store. A damaged or altered archive,
        or a wrong passphrase, imports nothing and says why. Call it only when the user asks to
        restore or move memory; try dry_run first. Returns how many records were added,
        replaced and kept."""
        return await run(
            backend.import_store,
            path,
            store=pick(store),
            passphrase=passphrase,
            on_conflict=on_conflict,
            overwrite=overwrite,
            dry_run=dry_run,
            reembed=reembed,
        )

    @tools.tool(ADD, "admin")
    async def backup_store(
        path: FilePath,
        overwrite: Annotated[bool, Field(description="Replace the file if it exists.")] = False,
        store: Store = None,
    ) -> JSON:
        """Copy a store's database file, consistent as of one instant, while halls keeps
        serving. Call it only when the user asks for a backup. Returns the path and size."""
        return await run(backend.backup_store, path, store=pick(store), overwrite=overwrite)
