"""Health, statistics and the list of stores."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from halls.errors import Forbidden
from halls.http.deps import AdminStore, GrantDep, Limit, MemoryDep, Offset, ReadStore, StoreParam
from halls.http.schemas import ForgetAboutIn, StoreIn
from halls.models import STORE_NAME_PATTERN, ForgetAbout
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


@router.delete("/stores/{name}", status_code=204)
def delete_store(
    name: Annotated[str, Path(json_schema_extra={"pattern": STORE_NAME_PATTERN})],
    memory: MemoryDep,
    grant: GrantDep,
) -> Response:
    """Delete the store and every file of it (admin of that store)."""
    grant.check(check_store_name(name), "admin")
    memory.delete_store(name)
    return Response(status_code=204)


@router.post("/forget-about", response_model=ForgetAbout)
def forget_about(body: ForgetAboutIn, memory: MemoryDep, store: AdminStore) -> ForgetAbout:
    """Everything about a subject, every tier and the journal: listed (dry run) or purged."""
    return memory.forget_about(
        store=store, subject=body.subject, query=body.query, dry_run=body.dry_run
    )


@router.get("/audit")
def audit(
    memory: MemoryDep,
    grant: GrantDep,
    store: StoreParam = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, list[dict[str, Any]]]:
    """The audit log, newest first: of one store (its admin), or of all (an admin of all)."""
    if not store:  # "?store=" (empty) is the same as none
        store = None
        if not grant.global_admin:
            raise Forbidden("the whole audit log needs an admin token of every store")
    else:
        grant.check(check_store_name(store), "admin")
    return {"entries": memory.audit_entries(store=store, limit=limit, offset=offset)}
