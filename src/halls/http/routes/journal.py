"""The journal: append-only raw events, redacted for secrets on ingest."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Response

from halls.http.deps import AdminStore, JournalId, Limit, MemoryDep, Offset, ReadStore, WriteStore
from halls.http.schemas import IdsOut, JournalBatchIn, JournalIn
from halls.models import JournalEvent, NewJournal

router = APIRouter(prefix="/journal", tags=["journal"])


@router.post("", status_code=201, response_model=JournalEvent)
def append(body: JournalIn, memory: MemoryDep, store: WriteStore) -> JournalEvent:
    return memory.journal([NewJournal(**body.model_dump())], store=store)[0]


@router.post("/batch", status_code=201, response_model=IdsOut)
def append_batch(body: JournalBatchIn, memory: MemoryDep, store: WriteStore) -> IdsOut:
    events = memory.journal([NewJournal(**i.model_dump()) for i in body.items], store=store)
    return IdsOut(ids=[e.id for e in events])


@router.delete("/batch", include_in_schema=False)
def batch_is_post_only() -> None:
    # Else DELETE /journal/batch would reach DELETE /journal/{id} with the id "batch".
    raise HTTPException(405)


@router.get("", response_model=list[JournalEvent])
def list_journal(
    memory: MemoryDep, store: ReadStore, limit: Limit = 50, offset: Offset = 0
) -> list[JournalEvent]:
    return memory.list_journal(store=store, limit=limit, offset=offset)


@router.delete("/{id}", status_code=204)
def delete_event(id: JournalId, memory: MemoryDep, store: AdminStore) -> Response:
    """Purge the event for good (admin): its bytes leave the store's files."""
    memory.delete_journal(id, store=store)
    return Response(status_code=204)
