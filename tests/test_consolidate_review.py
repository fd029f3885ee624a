"""The review queue and reverting any run, over HTTP and MCP, on a live in-process server.

A dry run keeps its plan; each planned action is approved or rejected; an
apply applies the approved ones as one run, or refuses (409, naming the
action) when the store moved on, with nothing written. Any run can be
reverted unless a later run built on it (409 naming that run). Real SQLite
(and PostgreSQL where parametrized) and the real embedding model; only time
is injected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession

from clock_server import DAY, FakeClock, InProcessServer, serve
from conftest import BOTH
from halls import Memory, Settings
from halls.config import StorageSettings
from mcp_scenario import call, error, over_http
from test_consolidate_http import PATHS, S, _busy_store, facts, kinds, paraphrases, run, state

TEA = ["Dana drinks green tea every morning", "Every morning Dana has a cup of green tea"]
TILDES = "Chad now prefers tildes like ~/src instead of absolute paths in configs"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def live(
    tmp_path: Path, embedder: Any, clock: FakeClock, storage: StorageSettings
) -> Iterator[Callable[[], InProcessServer]]:
    """An in-process server (with MCP, the `all` profile) on the ``storage`` backend."""
    with ExitStack() as stack:

        def make() -> InProcessServer:
            settings = Settings(
                data_dir=tmp_path / "data", storage=storage, consolidator={"mode": "external"}
            )
            memory = Memory(settings, embedder=embedder, clock=clock)
            return stack.enter_context(serve(memory, mcp=True))

        yield make


def _post(c: httpx.Client, path: str, body: Any = None) -> httpx.Response:
    return c.post(f"/consolidate/runs/{path}", params=S, json=body)


def _get_run(c: httpx.Client, id: str) -> dict[str, Any]:
    r = c.get(f"/consolidate/runs/{id}", params=S)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _status(c: httpx.Client, id: str) -> int:
    return c.get(f"/{'long' if id.startswith('l_') else 'short'}/{id}", params=S).status_code


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_a_rejected_action_is_left_out_and_the_approved_ones_applied(live, clock) -> None:
    """Reject the supersede, approve the rest: the store shows every effect but the supersede."""
    c = live().client
    _busy_store(c, clock)
    before = state(c)
    plan = run(c, dry_run=True)
    [sup] = [a for a in plan["actions"] if a["kind"] == "supersede"]
    rest = [a["id"] for a in plan["actions"] if a["id"] != sup["id"]]
    assert {"age_out", "expire", "demote"} <= {a["kind"] for a in plan["actions"]}
    r = _post(c, f"{plan['id']}/review", {"approve": rest, "reject": [sup["id"]]})
    assert r.status_code == 200, r.text
    reviews = {a["id"]: a["review"] for a in r.json()["actions"]}
    assert reviews == {n: "rejected" if n == sup["id"] else "approved" for n in reviews}
    assert state(c) == before  # a review changes no memory

    r = _post(c, f"{plan['id']}/apply")
    assert r.status_code == 201, r.text
    applied = r.json()
    assert applied["id"] == plan["id"] and applied["status"] == "done"
    assert applied["dry_run"] is False and "supersede" not in kinds(applied)
    assert kinds(applied) == [k for k in kinds(plan) if k != "supersede"]
    assert f"{sup['id']} (rejected: supersede {sup['target_id']})" in applied["notes"][-1]
    # The rejected supersede's effect is absent: the old fact stands, the new one was never made.
    old = c.get(f"/long/{sup['target_id']}", params=S).json()
    assert old["status"] == "active" and old["superseded_by"] is None
    assert _status(c, sup["after"]["id"]) == 404
    # The approved ones' effects are there.
    for a in plan["actions"]:
        if a["kind"] == "age_out":
            assert _status(c, a["target_id"]) == 404
        elif a["kind"] == "expire":
            loop = c.get(f"/near/{a['target_id']}", params=S).json()
            assert loop["status"] == "expired"
        elif a["kind"] == "demote":
            assert c.get(f"/long/{a['target_id']}", params=S).json()["status"] == "demoted"
    assert _get_run(c, plan["id"])["status"] == "done"
    again = _post(c, f"{plan['id']}/apply")
    assert again.status_code == 409 and "only a dry run's plan" in again.json()["error"]["message"]
    # The applied plan is a run like any other: its revert puts everything back.
    assert _post(c, f"{plan['id']}/revert").status_code == 200
    assert state(c) == before


def test_an_action_the_store_moved_past_refuses_the_whole_apply(live, clock) -> None:
    """The loop a plan expires is completed meanwhile: the apply is a 409 naming that action,
    and none of the approved actions (the supersede among them) is applied."""
    c = live().client
    _busy_store(c, clock)
    plan = run(c, dry_run=True)
    [expire] = [a for a in plan["actions"] if a["kind"] == "expire"]
    every = [a["id"] for a in plan["actions"]]
    assert _post(c, f"{plan['id']}/review", {"approve": every}).status_code == 200
    done = c.post(f"/near/{expire['target_id']}/complete", params=S)
    assert done.status_code == 200, done.text
    before = state(c)
    r = _post(c, f"{plan['id']}/apply")
    assert r.status_code == 409, r.text
    message = r.json()["error"]["message"]
    assert f"action {expire['id']} of run {plan['id']} (expire {expire['target_id']})" in message
    assert "nothing was applied" in message and ".py" not in message
    assert state(c) == before
    assert _get_run(c, plan["id"])["status"] == "planned"
    # A real run since the plan consumed the same entries: refused again, by the first action.
    run(c)
    after_run = state(c)
    r = _post(c, f"{plan['id']}/apply")
    assert r.status_code == 409 and "no longer applies" in r.json()["error"]["message"]
    assert state(c) == after_run


def _three_runs(c: httpx.Client, clock: FakeClock) -> tuple[dict, dict, dict]:
    """Run 1 promotes the paths fact; run 2 a tea fact (independent); run 3 supersedes
    the paths fact (it builds on run 1)."""
    paraphrases(c, clock, PATHS[:2])
    first = run(c)
    paraphrases(c, clock, TEA)
    second = run(c)
    clock.advance(DAY)
    c.post("/short", params=S, json={"content": TILDES})
    third = run(c)
    assert kinds(first) == ["promote"] and kinds(second) == ["promote"], (first, second)
    assert kinds(third) == ["supersede"], third
    assert third["actions"][0]["target_id"] == first["actions"][0]["target_id"]
    return first, second, third


@pytest.mark.parametrize("storage", BOTH, indirect=True)
def test_an_older_run_is_reverted_unless_a_later_run_built_on_it(live, clock) -> None:
    """Reverting run 1 is a 409 naming run 3 (it superseded run 1's fact); run 2, older than
    run 3 but independent of it, is reverted and run 3 stays."""
    c = live().client
    first, second, third = _three_runs(c, clock)
    before = state(c)
    r = _post(c, f"{first['id']}/revert")
    assert r.status_code == 409, r.text
    assert f"run {third['id']} built on run {first['id']}" in r.json()["error"]["message"]
    assert state(c) == before
    r = _post(c, f"{second['id']}/revert")
    assert r.status_code == 200, r.text
    tea = second["actions"][0]["target_id"]
    assert _status(c, tea) == 404  # withdrawn
    new = third["actions"][0]["after"]["id"]
    assert c.get(f"/long/{new}", params=S).json()["status"] == "active"
    assert {f["id"] for f in facts(c, "active")} == {new}
    statuses = {r["id"]: r["status"] for r in c.get("/consolidate/runs", params=S).json()["runs"]}
    assert statuses == {first["id"]: "done", second["id"]: "reverted", third["id"]: "done"}
    # Once run 3 is reverted, nothing builds on run 1 any more.
    assert _post(c, f"{third['id']}/revert").status_code == 200
    assert _post(c, f"{first['id']}/revert").status_code == 200
    assert facts(c, "active") == []


def test_bad_ids_are_refused_and_change_nothing(live, clock) -> None:
    """Unknown runs and actions are 404, malformed ones 400 (a run id) or 422; a plan's
    reviews stay as they were, and nothing of memory changes."""
    c = live().client
    _busy_store(c, clock)
    plan = run(c, dry_run=True)
    n = len(plan["actions"])
    before = state(c)
    cases = [
        (f"{plan['id']}/review", {"approve": [1, n + 1]}, 404, f"has no action {n + 1}"),
        (f"{plan['id']}/review", {"approve": ["one"]}, 422, None),
        (f"{plan['id']}/review", {"reject": [0]}, 422, None),
        (f"{plan['id']}/review", {"reject": [1.5]}, 422, None),
        (f"{plan['id']}/review", {"reject": ["1"]}, 422, None),
        (f"{plan['id']}/review", {"approve": [1], "reject": [1]}, 400, "both approved"),
        (f"{plan['id']}/review", {"approve": [1], "pending": [2]}, 422, None),
        ("r_01M80YCVG916T9CTQ9BG6QPSX1/review", {"approve": [1]}, 404, "no consolidation run"),
        ("nope/review", {"approve": [1]}, 400, None),
        ("r_01M80YCVG916T9CTQ9BG6QPSX1/apply", None, 404, "no consolidation run"),
        (f"{plan['id']}/apply", None, 409, "no approved action"),
        (f"{plan['id']}/revert", None, 409, "is planned"),
    ]
    for path, body, code, said in cases:
        r = _post(c, path, body)
        assert r.status_code == code, (path, body, r.text)
        assert "Traceback" not in r.text and ".py" not in r.text
        if said:
            assert said in r.json()["error"]["message"], r.text
    assert {a["review"] for a in _get_run(c, plan["id"])["actions"]} == {"pending"}
    assert state(c) == before
    done = run(c)
    r = _post(c, f"{done['id']}/review", {"approve": [1]})
    assert r.status_code == 409 and "only a dry run's plan" in r.json()["error"]["message"]


def test_review_apply_and_revert_through_mcp(live, clock) -> None:
    """The `consolidate` tool (the `all` profile): revert an older independent run, a clear
    error for a dependent one; plan, review, reject one action, apply the rest; bad ids."""
    server = live()
    c = server.client
    first, second, third = _three_runs(c, clock)

    async def reverts(session: ClientSession) -> dict[str, Any]:
        dependent = await error(session, "consolidate", action="revert", id=first["id"], store="s")
        assert f"run {third['id']} built on run {first['id']}" in dependent
        return await call(session, "consolidate", action="revert", id=second["id"], store="s")

    reverted = asyncio.run(over_http(f"{server.url}/mcp", reverts))
    assert reverted["status"] == "reverted"
    assert _status(c, second["actions"][0]["target_id"]) == 404
    assert _get_run(c, first["id"])["status"] == _get_run(c, third["id"])["status"] == "done"

    loop = c.post("/near", params=S, json={"intent": "Renew the TLS cert", "expires_at": clock()})
    once = c.post("/short", params=S, json={"content": "I had pasta for lunch today"}).json()["id"]
    clock.advance(9 * DAY)

    async def review(session: ClientSession) -> dict[str, Any]:
        plan = await call(session, "consolidate", action="dry_run", store="s")
        assert plan["status"] == "planned" and len(plan["actions"]) >= 2
        shown = await call(session, "consolidate", action="review", id=plan["id"], store="s")
        assert [a["review"] for a in shown["actions"]] == ["pending"] * len(plan["actions"])
        [aged] = [a for a in plan["actions"] if a["target_id"] == once]
        rest = [a["id"] for a in plan["actions"] if a["id"] != aged["id"]]
        said = await error(
            session, "consolidate", action="approve", id=plan["id"], actions=[99], store="s"
        )
        assert "has no action 99" in said
        assert "run's id" in await error(session, "consolidate", action="apply", store="s")
        bad = await error(session, "consolidate", action="review", id="nope", store="s")
        assert "not a valid run id" in bad
        await call(
            session, "consolidate", action="reject", id=plan["id"], actions=[aged["id"]], store="s"
        )
        await call(session, "consolidate", action="approve", id=plan["id"], actions=rest, store="s")
        return await call(session, "consolidate", action="apply", id=plan["id"], store="s")

    applied = asyncio.run(over_http(f"{server.url}/mcp", review))
    assert applied["status"] == "done" and "expire" in kinds(applied)
    assert _status(c, once) == 200  # its age-out was rejected
    assert c.get(f"/near/{loop.json()['id']}", params=S).json()["status"] == "expired"
    for a in applied["actions"]:
        if a["kind"] == "age_out":
            assert _status(c, a["target_id"]) == 404
        if a["kind"] == "promote":
            assert c.get(f"/long/{a['target_id']}", params=S).json()["status"] == "active"
