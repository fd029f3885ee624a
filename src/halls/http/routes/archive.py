"""Export, import and backup over HTTP: a whole store in or out, as one file.

- ``POST /export`` answers the archive (JSON Lines; encrypted when the body
  gives a passphrase), written to a temporary file first and streamed from
  it, so a large store is never one string in memory.
- ``POST /import`` takes the archive as the raw request body, streamed to a
  temporary file under ``server.max_import_bytes`` (not
  ``server.max_body_bytes``), and imports it: a damaged or altered archive, or
  a wrong passphrase, is 400 ``invalid_archive`` and imports nothing. The
  passphrase travels in the ``X-Halls-Passphrase`` header, never in the URL
  (URLs end up in logs).
- ``POST /backup`` answers a consistent copy of the store's SQLite file.

All three hand over or replace a whole store: they need the store's admin
grant (``AdminStore``), 403 ``forbidden`` otherwise.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import FileResponse
from pydantic import Field
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from halls.errors import InvalidInput
from halls.http.deps import AdminStore, MemoryDep
from halls.http.schemas import _Body
from halls.models import OnConflict

router = APIRouter(tags=["archive"])

IMPORT_PATH = "/import"


class ExportIn(_Body):
    # Encrypts the archive (AES-256-GCM, key from scrypt) when given.
    passphrase: str | None = Field(default=None, min_length=1, max_length=1024)


def _temporary() -> Path:
    fd, name = tempfile.mkstemp(prefix="halls-archive-")
    os.close(fd)
    return Path(name)


def _file(path: Path, filename: str, media_type: str) -> FileResponse:
    return FileResponse(
        path,
        media_type=media_type,
        filename=filename,
        background=BackgroundTask(path.unlink, missing_ok=True),
    )


@router.post(
    "/export",
    response_class=FileResponse,
    responses={200: {"content": {"application/x-ndjson": {}, "application/octet-stream": {}}}},
)
def export(memory: MemoryDep, store: AdminStore, body: ExportIn | None = None) -> Any:
    passphrase = body.passphrase if body is not None else None
    path = _temporary()
    try:
        with open(path, "wb") as out:
            memory.export_store(out, store=store, passphrase=passphrase)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    name = store or memory.settings.default_store
    if passphrase:
        return _file(path, f"{name}.halls.enc", "application/octet-stream")
    return _file(path, f"{name}.halls.jsonl", "application/x-ndjson")


@router.post(
    IMPORT_PATH,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {
                    "schema": {"type": "string", "format": "binary", "minLength": 1}
                }
            },
        }
    },
)
async def import_(
    request: Request,
    memory: MemoryDep,
    store: AdminStore,
    on_conflict: Annotated[OnConflict, Query()] = "keep-existing",
    overwrite: bool = False,
    dry_run: bool = False,
    reembed: bool = False,
    x_halls_passphrase: Annotated[str | None, Header(max_length=1024)] = None,
) -> dict[str, Any]:
    limit = memory.settings.server.max_import_bytes
    path = _temporary()
    try:
        size = 0
        with open(path, "wb") as spool:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise HTTPException(413, f"the request body is larger than {limit} bytes")
                spool.write(chunk)
        if size == 0:
            raise InvalidInput("the request body must be the archive")
        report = await run_in_threadpool(
            memory.import_store,
            path,
            store=store,
            passphrase=x_halls_passphrase or None,
            on_conflict=on_conflict,
            overwrite=overwrite,
            dry_run=dry_run,
            reembed=reembed,
        )
    finally:
        path.unlink(missing_ok=True)
    return report.as_dict()


@router.post(
    "/backup",
    response_class=FileResponse,
    responses={200: {"content": {"application/vnd.sqlite3": {}}}},
)
def backup(memory: MemoryDep, store: AdminStore) -> Any:
    path = _temporary()
    try:
        memory.backup_store(path, store=store, overwrite=True)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    name = store or memory.settings.default_store
    return _file(path, f"{name}.sqlite3", "application/vnd.sqlite3")
