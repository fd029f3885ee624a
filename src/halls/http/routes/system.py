"""Health, statistics and the list of stores."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from halls.http.deps import MemoryDep, StoreParam
from halls.http.schemas import StoreIn

router = APIRouter(tags=["system"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/stats")
def stats(memory: MemoryDep, store: StoreParam = None) -> dict[str, Any]:
    return memory.stats(store=store)


@router.get("/stores")
def list_stores(memory: MemoryDep) -> dict[str, list[str]]:
    return {"stores": memory.stores()}


@router.post("/stores", status_code=201)
def create_store(body: StoreIn, memory: MemoryDep) -> dict[str, str]:
    return {"name": memory.create_store(body.name)}
