"""Long-term facts: read here; only the consolidator writes them.

There is deliberately no endpoint that creates or edits a fact: a user flags
one (``/forget``) and the consolidator acts on the flag. An admin may purge
one now (``DELETE /long/{id}``), as a PII forget would, and a user may pin
one, so that it never decays.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response

from halls.http.deps import (
    AdminStore,
    Limit,
    LongId,
    MemoryDep,
    Offset,
    ReadStore,
    Reinforce,
    WriteStore,
    one_of,
)
from halls.http.schemas import ForgetIn
from halls.models import CATEGORIES, FACT_STATUSES, ForgetFlag, LongFact

router = APIRouter(prefix="/long", tags=["long"])


class FactWithChain(LongFact):
    chain: list[LongFact]


@router.get("", response_model=list[LongFact])
def list_long(
    memory: MemoryDep,
    store: ReadStore,
    status: Annotated[str | None, one_of(FACT_STATUSES)] = None,
    category: Annotated[str | None, one_of(CATEGORIES)] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> list[LongFact]:
    return memory.list_long(
        store=store, status=status, limit=limit, offset=offset, category=category
    )


@router.get("/{id}", response_model=FactWithChain)
def get_long(
    id: LongId, memory: MemoryDep, store: ReadStore, reinforce: Reinforce = True
) -> FactWithChain:
    fact, chain = memory.get_long(id, store=store, reinforce=reinforce)
    return FactWithChain(**fact.model_dump(), chain=chain)


@router.post("/{id}/pin", response_model=LongFact)
def pin(id: LongId, memory: MemoryDep, store: WriteStore) -> LongFact:
    """Pin a fact: it never decays and is never retired. 409 while a run holds the store."""
    return memory.pin_fact(id, True, store=store)


@router.post("/{id}/unpin", response_model=LongFact)
def unpin(id: LongId, memory: MemoryDep, store: WriteStore) -> LongFact:
    """Unpin a fact: it decays again from its last use."""
    return memory.pin_fact(id, False, store=store)


@router.post("/{id}/forget", status_code=202, response_model=ForgetFlag)
def forget(id: LongId, body: ForgetIn, memory: MemoryDep, store: WriteStore) -> ForgetFlag:
    return memory.flag_forget(id, body.reason, store=store)


@router.delete("/{id}", status_code=204)
def purge(id: LongId, memory: MemoryDep, store: AdminStore) -> Response:
    """Purge the fact now (admin), its sources and personal data with it, recorded as a run."""
    memory.delete_fact(id, store=store)
    return Response(status_code=204)
