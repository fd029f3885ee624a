"""The consolidator over HTTP: run (or plan) it, review a plan and apply it, revert a run.

``POST /consolidate/run`` answers 201 with the run record (200 for a dry
run, whose plan is kept for review and changes no memory), 409 while
another run holds the store, and 503 when the run aborted (e.g. the LLM
endpoint is down; nothing changed). The logic is the service's
(``Memory.review_run``, ``apply_run``, ``revert_run``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, BeforeValidator, Field

from halls.http.deps import Limit, MemoryDep, Offset, ReadStore, RunId, WriteStore
from halls.http.schemas import _Body, _integer
from halls.models import Run

router = APIRouter(prefix="/consolidate", tags=["consolidate"])


class RunIn(_Body):
    dry_run: bool = False


# An action's number in its run (from 1). The bounds come before the validator
# that takes 3.0 for 3: after it, pydantic cannot write them into the schema.
ActionNumber = Annotated[int, Field(ge=1, le=1_000_000), BeforeValidator(_integer)]


class ReviewIn(_Body):
    approve: list[ActionNumber] = Field(default_factory=list, max_length=10_000)
    reject: list[ActionNumber] = Field(default_factory=list, max_length=10_000)


class RunsOut(BaseModel):
    runs: list[Run]


@router.post(
    "/run",
    status_code=201,
    response_model=Run,
    responses={200: {"model": Run, "description": "A dry run: the plan; nothing changed"}},
)
def run(memory: MemoryDep, store: WriteStore, response: Response, body: RunIn | None = None) -> Run:
    dry = body is not None and body.dry_run
    if dry:
        response.status_code = 200
    return memory.consolidate(store=store, dry_run=dry)


@router.get("/runs", response_model=RunsOut)
def list_runs(
    memory: MemoryDep, store: ReadStore, limit: Limit = 50, offset: Offset = 0
) -> RunsOut:
    return RunsOut(runs=memory.list_runs(store=store, limit=limit, offset=offset))


@router.get("/runs/{id}", response_model=Run)
def get_run(id: RunId, memory: MemoryDep, store: ReadStore) -> Run:
    return memory.get_run(id, store=store)


@router.post("/runs/{id}/review", response_model=Run)
def review_run(id: RunId, body: ReviewIn, memory: MemoryDep, store: WriteStore) -> Run:
    return memory.review_run(id, approve=body.approve, reject=body.reject, store=store)


@router.post("/runs/{id}/apply", status_code=201, response_model=Run)
def apply_run(id: RunId, memory: MemoryDep, store: WriteStore) -> Run:
    return memory.apply_run(id, store=store)


@router.post("/runs/{id}/revert", response_model=Run)
def revert_run(id: RunId, memory: MemoryDep, store: WriteStore) -> Run:
    return memory.revert_run(id, store=store)


@router.get("/status")
def status(memory: MemoryDep, store: ReadStore) -> dict[str, Any]:
    return memory.consolidation_status(store=store)
