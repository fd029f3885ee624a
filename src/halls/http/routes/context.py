"""Session-start context: a token-budgeted block for a system prompt."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import Field

from halls.http.deps import MemoryDep, ReadStores, StoreParam, read_stores
from halls.http.schemas import Integer, MinRelevance, Stores, _Body
from halls.models import MAX_CONTENT_CHARS, SCOPE_PATTERN
from halls.service import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, ContextBlock, ContextFormat

router = APIRouter(tags=["context"])


class ContextIn(_Body):
    query: str | None = Field(
        default=None,
        max_length=MAX_CONTENT_CHARS,
        description="What the session is about; adds memories relevant to it.",
    )
    project: str | None = Field(
        default=None,
        max_length=200,
        description="The session's project (e.g. the directory's name): its memories and "
        "topic loops come first.",
    )
    scope: str | None = Field(
        default=None,
        pattern=SCOPE_PATTERN,
        description="The work scope the session is in: its memories come first.",
    )
    budget_tokens: Integer = Field(default=DEFAULT_BUDGET, ge=MIN_BUDGET, le=MAX_BUDGET)
    min_relevance: float = MinRelevance
    format: ContextFormat = Field(
        default="verbose",
        description="verbose (bulleted sentences) or terse (the notation of docs/http-api.md).",
    )
    stores: Stores = None


@router.post("/context", response_model=ContextBlock)
def context(
    memory: MemoryDep,
    request: Request,
    checked: ReadStores,
    store: StoreParam = None,
    body: ContextIn | None = None,
    format: Annotated[
        ContextFormat | None, Query(description="As the body's `format`, which it overrides.")
    ] = None,
) -> ContextBlock:
    body = body or ContextIn()
    names = checked or read_stores(request, store, body.stores)
    return memory.context(
        stores=names,
        query=body.query,
        project=body.project,
        budget_tokens=body.budget_tokens,
        min_relevance=body.min_relevance,
        format=format or body.format,
        scope=body.scope,
    )
