"""Long-term facts: read here; only the consolidator writes them.

There is deliberately no endpoint that creates, edits or deletes a fact: a
user flags one (``/forget``) and the consolidator acts on the flag. A user
may pin one, so that it never decays.
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from halls.http.deps import Limit, MemoryDep, Offset, StoreParam
from halls.http.schemas import ForgetIn
from halls.models import CATEGORIES, FACT_STATUSES, ForgetFlag, LongFact

router = APIRouter(prefix="/long", tags=["long"])


class FactWithChain(LongFact):
    chain: list[LongFact]


@router.get("", response_model=list[LongFact])
def list_long(
    memory: MemoryDep,
    store: StoreParam = None,
    status: str | None = Query(default=None, description=", ".join(FACT_STATUSES)),
    category: str | None = Query(default=None, description=", ".join(CATEGORIES)),
    limit: Limit = 50,
    offset: Offset = 0,
) -> list[LongFact]:
    return memory.list_long(
        store=store, status=status, limit=limit, offset=offset, category=category
    )


@router.get("/{id}", response_model=FactWithChain)
def get_long(id: str, memory: MemoryDep, store: StoreParam = None) -> FactWithChain:
    fact, chain = memory.get_long(id, store=store)
    return FactWithChain(**fact.model_dump(), chain=chain)


@router.post("/{id}/pin", response_model=LongFact)
def pin(id: str, memory: MemoryDep, store: StoreParam = None) -> LongFact:
    """Pin a fact: it never decays and is never retired. 409 while a run holds the store."""
    return memory.pin_fact(id, True, store=store)


@router.post("/{id}/unpin", response_model=LongFact)
def unpin(id: str, memory: MemoryDep, store: StoreParam = None) -> LongFact:
    """Unpin a fact: it decays again from its last use."""
    return memory.pin_fact(id, False, store=store)


@router.post("/{id}/forget", status_code=202, response_model=ForgetFlag)
def forget(id: str, body: ForgetIn, memory: MemoryDep, store: StoreParam = None) -> ForgetFlag:
    return memory.flag_forget(id, body.reason, store=store)
