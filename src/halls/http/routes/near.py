"""Near-term open loops: future intents with triggers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response

from halls.http.deps import (
    Limit,
    MemoryDep,
    NearId,
    Offset,
    ReadStore,
    Reinforce,
    WriteStore,
    one_of,
)
from halls.http.schemas import NearIn
from halls.models import LOOP_STATUSES, DueLoop, OpenLoop

router = APIRouter(prefix="/near", tags=["near"])
MAX_QUERY_PARAM = 2000


@router.post("", status_code=201, response_model=OpenLoop)
def add_loop(body: NearIn, memory: MemoryDep, store: WriteStore) -> OpenLoop:
    return memory.add_loop(store=store, **body.model_dump())


@router.get("", response_model=list[OpenLoop])
def list_loops(
    memory: MemoryDep,
    store: ReadStore,
    status: Annotated[str | None, one_of(LOOP_STATUSES)] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> list[OpenLoop]:
    return memory.list_loops(store=store, status=status, limit=limit, offset=offset)


@router.api_route("/due", methods=["DELETE"], include_in_schema=False)
def due_is_get_only() -> None:
    # Without this, DELETE /near/due would reach DELETE /near/{id} with the id "due".
    raise HTTPException(405)


@router.get("/due", response_model=list[DueLoop])
def due_loops(
    memory: MemoryDep,
    store: ReadStore,
    # A URL, not a body: longer queries go through POST /search, which also answers `due`.
    query: str | None = Query(
        default=None,
        max_length=MAX_QUERY_PARAM,
        description="What the conversation is about: topic triggers whose words appear fire.",
    ),
    project: str | None = Query(
        default=None, max_length=200, description="The session's project, e.g. a directory name."
    ),
) -> list[DueLoop]:
    """Open loops due now (time passed, session start, topic in the query), with why."""
    return memory.due_loops(store=store, query=query, project=project)


@router.get("/{id}", response_model=OpenLoop)
def get_loop(
    id: NearId, memory: MemoryDep, store: ReadStore, reinforce: Reinforce = True
) -> OpenLoop:
    return memory.get_loop(id, store=store, reinforce=reinforce)


@router.post("/{id}/complete", response_model=OpenLoop)
def complete_loop(id: NearId, memory: MemoryDep, store: WriteStore) -> OpenLoop:
    return memory.complete_loop(id, store=store)


@router.post("/{id}/cancel", response_model=OpenLoop)
def cancel_loop(id: NearId, memory: MemoryDep, store: WriteStore) -> OpenLoop:
    """Drop an open loop unraised; it is never shown as due again."""
    return memory.cancel_loop(id, store=store)


@router.delete("/{id}", status_code=204)
def delete_loop(id: NearId, memory: MemoryDep, store: WriteStore) -> Response:
    memory.delete_loop(id, store=store)
    return Response(status_code=204)
