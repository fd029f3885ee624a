"""Shared route dependencies: the Memory service, the caller's grant, the ``?store=`` parameter.

A route names the store it touches through ``ReadStore``, ``WriteStore`` or
``AdminStore``: the dependency checks the caller's grant on that store
(``Grant.check``, 403 ``forbidden``) before the route runs, so a route cannot
reach a store without the check. The two reads that take several stores in
their body (``POST /search``, ``POST /context``) name them through
``read_stores``, which checks every one the same way before the service runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request

from halls.errors import InvalidInput
from halls.models import MAX_LIST, MAX_OFFSET, STORE_NAME_PATTERN, id_pattern
from halls.service import Action, Grant, Memory, check_store_name, store_names

# The dependencies are ``async``: none blocks, and FastAPI runs a plain
# ``def`` dependency in the thread pool, one hop (~0.3 ms) per dependency
# per request before the route's own.


async def get_memory(request: Request) -> Memory:
    return request.app.state.memory


async def get_grant(request: Request) -> Grant:
    """The grant ``BearerAuth`` resolved for this request."""
    return grant_of(request)


def grant_of(request: Request) -> Grant:
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
        description="Store name; absent or empty: the configured default store.",
        # Documented, not enforced here: the service refuses a bad name with
        # 400 invalid_store_name, the same answer on every interface. Empty
        # is the default store, as no parameter is.
        json_schema_extra={"pattern": f"^$|{STORE_NAME_PATTERN}"},
    ),
]


def _store(action: Action) -> Callable[..., Awaitable[str | None]]:
    async def checked(request: Request, store: StoreParam = None) -> str | None:
        _one_store(request)
        # "?store=" (empty) is the default store, as documented.
        name = check_store_name(store) if store else None
        memory: Memory = request.app.state.memory
        grant_of(request).check(name or memory.settings.default_store, action)
        return name

    return checked


def _one_store(request: Request) -> None:
    # "?store=a&store=b" would otherwise quietly mean b: a write goes to
    # exactly one store, and a read of several names them in `stores`.
    if len(request.query_params.getlist("store")) > 1:
        raise InvalidInput(
            "name one store with ?store= (a search or context reads several "
            "through `stores` in the body)"
        )


def read_stores(request: Request, store: str | None, stores: list[str] | None) -> list[str]:
    """The stores a read names (``?store=`` or the body's ``stores``), each checked
    against the caller's grant (403 ``forbidden`` on the first it does not open)."""
    _one_store(request)
    memory: Memory = request.app.state.memory
    names = store_names(check_store_name(store) if store else None, stores)
    grant = grant_of(request)
    for name in names:
        grant.check(name or memory.settings.default_store, "read")
    return [name or memory.settings.default_store for name in names]


async def _read_stores(request: Request, store: StoreParam = None) -> list[str] | None:
    # As ReadStore, before the body is validated: a store the token does not
    # open is a 403 whatever else is wrong with the request. FastAPI has read
    # the body already (Request caches it); a body whose `stores` is not a
    # list of strings is left to validation (422), and the route checks it.
    try:
        raw = json.loads(await request.body() or b"null")
    except ValueError:
        return None
    stores = raw.get("stores") if isinstance(raw, dict) else None
    if stores is not None and not (
        isinstance(stores, list) and all(isinstance(s, str) for s in stores)
    ):
        return None
    return read_stores(request, store, stores)


# The stores of POST /search and /context: ``?store=`` or the body's ``stores``,
# checked; None only for a body that validation will refuse.
ReadStores = Annotated[list[str] | None, Depends(_read_stores)]


ReadStore = Annotated[str | None, Depends(_store("read"))]
WriteStore = Annotated[str | None, Depends(_store("write"))]
AdminStore = Annotated[str | None, Depends(_store("admin"))]
Limit = Annotated[int, Query(ge=1, le=MAX_LIST)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]
# Opening a memory by id is a use, and reinforces it; false for an inspection (the viewer).
Reinforce = Annotated[bool, Query()]


def _id(kind: str) -> Any:
    # The pattern is documented, not enforced here: the service refuses a
    # malformed or wrong-tier id with 400 invalid_input on every interface.
    return Annotated[
        str, Path(description=f"A {kind} id.", json_schema_extra={"pattern": id_pattern(kind)})
    ]


ShortId = _id("short")
NearId = _id("near")
LongId = _id("long")
JournalId = _id("journal")
RunId = _id("run")


def one_of(values: Sequence[str]) -> Any:
    """An optional query value from ``values``: documented, checked by the service (400)."""
    return Query(description=", ".join(values), json_schema_extra={"enum": list(values)})
