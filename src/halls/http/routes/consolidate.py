"""The consolidator over HTTP: run (or plan) it, review a plan and apply it, revert a run.

``POST /consolidate/run`` answers 201 with the run record (200 for a dry
run, whose plan is kept for review and changes no memory), 409 while
another run holds the store, and 503 when the run aborted (e.g. the LLM
endpoint is down; nothing changed). With ``"wait": false`` it answers 202
at once with a job (``halls.service.jobs``), watched at ``GET
/consolidate/jobs/{id}`` or as Server-Sent Events at ``GET
/consolidate/jobs/{id}/events``. The logic is the service's
(``Memory.review_run``, ``apply_run``, ``revert_run``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, BeforeValidator, Field

from halls.http.deps import Limit, MemoryDep, Offset, ReadStore, RunId, WriteStore
from halls.http.schemas import _Body, _integer
from halls.models import Run
from halls.service import JOB_ID, Job

EVENT_SECONDS = 0.25  # how often an event stream looks at its job
JobId = Annotated[
    str, Path(description="A consolidation job id.", json_schema_extra={"pattern": JOB_ID.pattern})
]

router = APIRouter(prefix="/consolidate", tags=["consolidate"])


class RunIn(_Body):
    dry_run: bool = False
    wait: bool = Field(
        True,
        description="false: start the run as a job and answer 202 with it at once "
        "(GET /consolidate/jobs/{id} tells how far it is).",
    )


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
    responses={
        200: {"model": Run, "description": "A dry run: the plan; nothing changed"},
        202: {"model": Job, "description": "wait false: the job, started"},
    },
)
def run(memory: MemoryDep, store: WriteStore, response: Response, body: RunIn | None = None) -> Any:
    dry = body is not None and body.dry_run
    if body is not None and not body.wait:
        job = memory.start_consolidation(store=store, dry_run=dry)
        where = f"/consolidate/jobs/{job.id}?store={quote(job.store, safe='')}"
        shown = job.model_dump(mode="json")
        return JSONResponse(shown, status_code=202, headers={"Location": where})
    if dry:
        response.status_code = 200
    return memory.consolidate(store=store, dry_run=dry)


@router.get("/jobs/{id}", response_model=Job)
def get_job(id: JobId, memory: MemoryDep, store: ReadStore) -> Job:
    return memory.consolidation_job(id, store=store)


@router.get(
    "/jobs/{id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "The job as it changes"}},
)
async def job_events(id: JobId, memory: MemoryDep, store: ReadStore) -> StreamingResponse:
    """The job as Server-Sent Events: one ``progress`` event each time its stage or
    counts change, then one ``done`` or ``failed`` event, and the stream ends."""
    first = memory.consolidation_job(id, store=store)  # 404 before the stream starts

    async def events() -> AsyncIterator[str]:
        job, last = first, None
        while True:
            seen = (job.status, job.stage, job.done, job.total)
            if seen != last:
                kind = job.status if job.status in ("done", "failed") else "progress"
                yield f"event: {kind}\ndata: {job.model_dump_json()}\n\n"
                last = seen
            if job.status in ("done", "failed"):
                return
            await asyncio.sleep(EVENT_SECONDS)
            job = memory.consolidation_job(id, store=store)

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


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
