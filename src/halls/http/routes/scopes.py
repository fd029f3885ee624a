"""Work scopes: listed, and marked done (``halls.scopes``); writes open and close them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import Field

from halls.http.deps import Limit, MemoryDep, Offset, ReadStore, WriteStore, one_of
from halls.http.schemas import _Body
from halls.models import SCOPE_PATTERN, SCOPE_STATUSES, Scope, Scopes

router = APIRouter(prefix="/scopes", tags=["scopes"])


class CloseIn(_Body):
    name: str = Field(pattern=SCOPE_PATTERN, description="The scope to mark done.")


@router.get("", response_model=Scopes)
def list_scopes(
    memory: MemoryDep,
    store: ReadStore,
    status: Annotated[str | None, one_of(SCOPE_STATUSES)] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> Scopes:
    return memory.list_scopes(store=store, status=status, limit=limit, offset=offset)


@router.post("/close", response_model=Scope)
def close_scope(body: CloseIn, memory: MemoryDep, store: WriteStore) -> Scope:
    """Mark a scope done: it closes, and its memories leave the session-start block."""
    return memory.close_scope(body.name, store=store)
