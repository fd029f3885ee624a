"""Long-term facts: read-only here; only the consolidator writes them.

There is deliberately no endpoint that creates, edits or deletes a fact: a
user flags one (``/forget``) and the consolidator acts on the flag.
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from halls.http.deps import Limit, MemoryDep, Offset, ReadStore, WriteStore
from halls.http.schemas import ForgetIn
from halls.models import FACT_STATUSES, ForgetFlag, LongFact

router = APIRouter(prefix="/long", tags=["long"])


class FactWithChain(LongFact):
    chain: list[LongFact]


@router.get("", response_model=list[LongFact])
def list_long(
    memory: MemoryDep,
    store: ReadStore,
    status: str | None = Query(default=None, description=", ".join(FACT_STATUSES)),
    limit: Limit = 50,
    offset: Offset = 0,
) -> list[LongFact]:
    return memory.list_long(store=store, status=status, limit=limit, offset=offset)


@router.get("/{id}", response_model=FactWithChain)
def get_long(id: str, memory: MemoryDep, store: ReadStore) -> FactWithChain:
    fact, chain = memory.get_long(id, store=store)
    return FactWithChain(**fact.model_dump(), chain=chain)


@router.post("/{id}/forget", status_code=202, response_model=ForgetFlag)
def forget(id: str, body: ForgetIn, memory: MemoryDep, store: WriteStore) -> ForgetFlag:
    return memory.flag_forget(id, body.reason, store=store)
