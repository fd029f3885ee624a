"""Short-term working memory: free read, write and delete."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Response

from halls.http.deps import Limit, MemoryDep, Offset, ReadStore, Reinforce, ShortId, WriteStore
from halls.http.schemas import IdsOut, ShortBatchIn, ShortIn, ShortPatch
from halls.models import NewShort, ShortEntry

router = APIRouter(prefix="/short", tags=["short"])


@router.post("", status_code=201, response_model=ShortEntry)
def remember(body: ShortIn, memory: MemoryDep, store: WriteStore) -> ShortEntry:
    return memory.remember_many([NewShort(**body.model_dump())], store=store)[0]


@router.post("/batch", status_code=201, response_model=IdsOut)
def remember_batch(body: ShortBatchIn, memory: MemoryDep, store: WriteStore) -> IdsOut:
    items = [NewShort(**item.model_dump()) for item in body.items]
    return IdsOut(ids=[e.id for e in memory.remember_many(items, store=store)])


@router.api_route("/batch", methods=["GET", "DELETE", "PATCH"], include_in_schema=False)
def batch_is_post_only() -> None:
    # Without this, GET /short/batch would reach GET /short/{id} with the id
    # "batch" (400) where the answer is that /short/batch takes POST only.
    raise HTTPException(405)


@router.get("", response_model=list[ShortEntry])
def list_short(
    memory: MemoryDep, store: ReadStore, limit: Limit = 50, offset: Offset = 0
) -> list[ShortEntry]:
    return memory.list_short(store=store, limit=limit, offset=offset)


@router.get("/{id}", response_model=ShortEntry)
def get_short(
    id: ShortId, memory: MemoryDep, store: ReadStore, reinforce: Reinforce = True
) -> ShortEntry:
    return memory.get_short(id, store=store, reinforce=reinforce)


@router.patch("/{id}", response_model=ShortEntry)
def edit_short(id: ShortId, body: ShortPatch, memory: MemoryDep, store: WriteStore) -> ShortEntry:
    """Change the fields given (null: unchanged, but a null topic or importance clears it);
    re-embed content."""
    given = body.model_dump(exclude_unset=True)
    changes = {k: v for k, v in given.items() if v is not None or k in ("topic", "importance")}
    return memory.edit_short(id, changes, store=store)


@router.delete("/{id}", status_code=204)
def delete_short(id: ShortId, memory: MemoryDep, store: WriteStore) -> Response:
    memory.delete_short(id, store=store)
    return Response(status_code=204)
