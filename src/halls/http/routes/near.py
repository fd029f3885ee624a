"""Near-term open loops: future intents with triggers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response

from halls.http.deps import Limit, MemoryDep, NearId, Offset, ReadStore, WriteStore, one_of
from halls.http.schemas import NearIn
from halls.models import LOOP_STATUSES, OpenLoop

router = APIRouter(prefix="/near", tags=["near"])


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


@router.get("/{id}", response_model=OpenLoop)
def get_loop(id: NearId, memory: MemoryDep, store: ReadStore) -> OpenLoop:
    return memory.get_loop(id, store=store)


@router.post("/{id}/complete", response_model=OpenLoop)
def complete_loop(id: NearId, memory: MemoryDep, store: WriteStore) -> OpenLoop:
    return memory.complete_loop(id, store=store)


@router.delete("/{id}", status_code=204)
def delete_loop(id: NearId, memory: MemoryDep, store: WriteStore) -> Response:
    memory.delete_loop(id, store=store)
    return Response(status_code=204)
