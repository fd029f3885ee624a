"""Shared route dependencies: the Memory service, the caller's grant, the ``?store=`` parameter.

A route names the store it touches through ``ReadStore``, ``WriteStore`` or
``AdminStore``: the dependency checks the caller's grant on that store
(``Grant.check``, 403 ``forbidden``) before the route runs, so a route cannot
reach a store without the check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Query, Request

from halls.models import MAX_LIST, MAX_OFFSET, STORE_NAME_PATTERN
from halls.service import Action, Grant, Memory, check_store_name


def get_memory(request: Request) -> Memory:
    return request.app.state.memory  # type: ignore[no-any-return]


def get_grant(request: Request) -> Grant:
    """The grant ``BearerAuth`` resolved for this request."""
    grant = request.scope.get("state", {}).get("grant")
    # Every API path passes BearerAuth, which always sets one; only an app
    # built without it (never by create_app) would get here empty-handed.
    return grant if isinstance(grant, Grant) else Grant(id=None, stores=frozenset())


MemoryDep = Annotated[Memory, Depends(get_memory)]
GrantDep = Annotated[Grant, Depends(get_grant)]
StoreParam = Annotated[
    str | None,
    Query(
        description="Store name; default: the configured store.",
        # Documented, not enforced here: the service refuses a bad name with
        # 400 invalid_store_name, the same answer on every interface.
        json_schema_extra={"pattern": STORE_NAME_PATTERN},
    ),
]


def _store(action: Action) -> Callable[..., str | None]:
    def checked(request: Request, store: StoreParam = None) -> str | None:
        name = check_store_name(store) if store is not None else None
        get_grant(request).check(name or get_memory(request).settings.default_store, action)
        return name

    return checked


ReadStore = Annotated[str | None, Depends(_store("read"))]
WriteStore = Annotated[str | None, Depends(_store("write"))]
AdminStore = Annotated[str | None, Depends(_store("admin"))]
Limit = Annotated[int, Query(ge=1, le=MAX_LIST)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
