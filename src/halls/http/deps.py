"""Shared route dependencies: the Memory service and the ``?store=`` parameter."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from halls.service import Memory


def get_memory(request: Request) -> Memory:
    return request.app.state.memory  # type: ignore[no-any-return]


MemoryDep = Annotated[Memory, Depends(get_memory)]
StoreParam = Annotated[
    str | None,
    Query(description="Store name ([a-z0-9][a-z0-9_-]{0,63}); default: the configured store."),
]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0)]
