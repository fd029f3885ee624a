"""Health, statistics and the list of stores."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from halls.http.deps import GrantDep, MemoryDep, ReadStore
from halls.http.schemas import StoreIn
from halls.service import check_store_name

router = APIRouter(tags=["system"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/stats")
def stats(memory: MemoryDep, store: ReadStore) -> dict[str, Any]:
    return memory.stats(store=store)


@router.get("/stores")
def list_stores(memory: MemoryDep, grant: GrantDep) -> dict[str, list[str]]:
    """The stores there are, of those the token opens."""
    return {"stores": grant.visible(memory.stores())}


@router.post("/stores", status_code=201)
def create_store(body: StoreIn, memory: MemoryDep, grant: GrantDep) -> dict[str, str]:
    grant.check(check_store_name(body.name), "write")
    return {"name": memory.create_store(body.name)}
