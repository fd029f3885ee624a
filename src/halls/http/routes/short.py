"""Short-term working memory: free read, write and delete."""

from __future__ import annotations

from fastapi import APIRouter, Response

from halls.http.deps import Limit, MemoryDep, Offset, StoreParam
from halls.http.schemas import IdsOut, ShortBatchIn, ShortIn, ShortPatch
from halls.models import NewShort, ShortEntry

router = APIRouter(prefix="/short", tags=["short"])


@router.post("", status_code=201, response_model=ShortEntry)
def remember(body: ShortIn, memory: MemoryDep, store: StoreParam = None) -> ShortEntry:
    return memory.remember_many([NewShort(**body.model_dump())], store=store)[0]


@router.post("/batch", status_code=201, response_model=IdsOut)
def remember_batch(body: ShortBatchIn, memory: MemoryDep, store: StoreParam = None) -> IdsOut:
    items = [NewShort(**item.model_dump()) for item in body.items]
    return IdsOut(ids=[e.id for e in memory.remember_many(items, store=store)])


@router.get("", response_model=list[ShortEntry])
def list_short(
    memory: MemoryDep, store: StoreParam = None, limit: Limit = 50, offset: Offset = 0
) -> list[ShortEntry]:
    return memory.list_short(store=store, limit=limit, offset=offset)


@router.get("/{id}", response_model=ShortEntry)
def get_short(id: str, memory: MemoryDep, store: StoreParam = None) -> ShortEntry:
    return memory.get_short(id, store=store)


@router.patch("/{id}", response_model=ShortEntry)
def edit_short(
    id: str, body: ShortPatch, memory: MemoryDep, store: StoreParam = None
) -> ShortEntry:
    """Change the fields given (an explicit null clears topic); new content is re-embedded."""
    return memory.edit_short(id, body.model_dump(exclude_unset=True), store=store)


@router.delete("/{id}", status_code=204)
def delete_short(id: str, memory: MemoryDep, store: StoreParam = None) -> Response:
    memory.delete_short(id, store=store)
    return Response(status_code=204)
