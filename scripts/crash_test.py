"""Crash safety: acknowledged writes and consolidation runs survive SIGKILL.

Two parts, each against a real ``halls serve`` on 127.0.0.1:

1. **writes**: one client sends ``--writes`` writes (POST /short, and one in
   five POST /journal), one at a time; the server is SIGKILLed ``--kills``
   times at random moments (mid-request, most often) and restarted. After
   each restart every write answered 2xx so far must be there, word for
   word; at the end the file passes ``PRAGMA integrity_check``.
2. **consolidation**: ``--entries`` short-term entries (paraphrases over
   three days, so a run has many facts to promote), then a run is started
   and the server SIGKILLed at a random moment of it (``--run-kills`` times,
   each on a fresh store; a kill that comes after the run answered is
   checked, then tried again earlier, up to three times). After a restart the run is either wholly applied
   (status ``done``, every promoted fact there) or not at all (no fact, no
   entry consumed); the next run succeeds and fails the stale one.

Prints figures, and with ``--json`` one JSON object (the test reads it).
Exits 1 if any check fails. Bounded: ``--time-limit`` seconds in all.

    python scripts/crash_test.py                       # 2,000 writes x 5 kills, 5 killed runs
    python scripts/crash_test.py --writes 300 --kills 2 --entries 600 --run-kills 1
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from live import STORE, Server, chunks, client, entries, integrity, list_all, start


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def check(self, what: str) -> None:
        if time.monotonic() > self.end:
            raise TimeoutError(f"time limit reached during {what}")


# -- part 1: acknowledged writes --


class Writer(threading.Thread):
    """Sends writes one at a time until ``total`` are acknowledged or the server dies."""

    def __init__(self, url: str, start_n: int, total: int, rng: random.Random) -> None:
        super().__init__(daemon=True)
        self.url, self.n, self.total, self.rng = url, start_n, total, rng
        self.short: dict[str, str] = {}
        self.journal: dict[str, str] = {}
        self.in_flight: str | None = None  # the content of a write cut by the kill

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60, params={"store": STORE}) as c:
            while self.n < self.total:
                text = f"crash note {self.n}: locker {self.rng.randrange(10**6):06d} by the door"
                path = "/journal" if self.n % 5 == 4 else "/short"
                self.in_flight = text
                try:
                    r = c.post(path, json={"content": text})
                except httpx.HTTPError:
                    return  # killed mid-request: not acknowledged
                if r.status_code != 201:
                    raise RuntimeError(f"write refused: {r.status_code} {r.text}")
                (self.journal if path == "/journal" else self.short)[r.json()["id"]] = text
                self.in_flight = None
                self.n += 1


def check_writes(c: httpx.Client, short: dict[str, str], journal: dict[str, str]) -> list[str]:
    """What is missing or changed among acknowledged writes."""
    have = {e["id"]: e["content"] for e in list_all(c, "/short")}
    have_j = {e["id"]: e["content"] for e in list_all(c, "/journal")}
    problems = [f"short {i} missing" for i in short if i not in have]
    problems += [f"short {i} changed" for i, t in short.items() if i in have and have[i] != t]
    problems += [f"journal {i} missing" for i in journal if i not in have_j]
    problems += [f"journal {i} changed" for i, t in journal.items() if have_j.get(i, t) != t]
    return problems


def writes_part(args: argparse.Namespace, root: Path, deadline: Deadline) -> dict[str, Any]:
    rng = random.Random(args.seed)
    data = root / "writes" / "data"
    env = _env(args)
    short: dict[str, str] = {}
    journal: dict[str, str] = {}
    per = args.writes / (args.kills + 1)
    restarts: list[float] = []
    problems: list[str] = []
    cut_present = cut_absent = 0
    n = 0
    t0 = time.monotonic()
    server = start(data, env)
    for k in range(1, args.kills + 2):
        writer = Writer(server.url, n, args.writes, rng)
        writer.start()
        if k <= args.kills:
            # A random moment within this segment: after a random count of
            # acknowledgements, then a random fraction of a request later.
            target = n + int(per * rng.uniform(0.5, 1.5))
            while len(writer.short) + len(writer.journal) + n < target and writer.is_alive():
                deadline.check("writes")
                time.sleep(0.001)
            time.sleep(rng.uniform(0, 0.01))
            server.kill()
        writer.join(timeout=max(1.0, deadline.end - time.monotonic()))
        if writer.is_alive():
            raise TimeoutError("the writer did not finish in time")
        short.update(writer.short)
        journal.update(writer.journal)
        n = writer.n
        if k <= args.kills:
            server = Server(data, env)
            restarts.append(server.wait_ready())
        with client(server) as c:
            found = check_writes(c, short, journal)
            problems += [f"after kill {k}: {p}" for p in found]
            if writer.in_flight is not None and k <= args.kills:
                contents = {e["content"] for e in list_all(c, "/short")} | {
                    e["content"] for e in list_all(c, "/journal")
                }
                if writer.in_flight in contents:
                    cut_present += 1
                else:
                    cut_absent += 1
        print(
            f"  segment {k}: {n} acknowledged so far"
            + (f", killed, restarted in {restarts[-1]:.1f} s" if k <= args.kills else "")
            + (f", {len(found)} problems" if found else ", all present"),
            flush=True,
        )
    with client(server) as c:
        sample = rng.sample(sorted(short.items()), min(20, len(short)))
        for id_, text in sample:
            r = c.post("/search", json={"query": text, "n_results": 3, "reinforce": False})
            if id_ not in [h["id"] for h in r.json()["results"]]:
                problems.append(f"search does not find {id_}")
    server.stop()
    check = integrity(data, args.key)
    if check != "ok":
        problems.append(f"integrity_check: {check}")
    return {
        "acknowledged": len(short) + len(journal),
        "kills": args.kills,
        "cut_writes_present": cut_present,
        "cut_writes_absent": cut_absent,
        "restart_seconds": [round(s, 2) for s in restarts],
        "integrity": check,
        "seconds": round(time.monotonic() - t0, 1),
        "problems": problems,
    }


# -- part 2: a consolidation run in flight --


def run_once(
    args: argparse.Namespace,
    data: Path,
    rng: random.Random,
    deadline: Deadline,
    span: tuple[float, float],
):
    env = _env(args)
    server = start(data, env)
    with client(server, timeout=600) as c:
        items = entries(args.entries, time.time())
        for batch in chunks(items, 250):
            deadline.check("writing entries")
            r = c.post("/short/batch", json={"items": batch})
            r.raise_for_status()
        before = c.get("/stats").json()["counts"]
        t = time.monotonic()
        plan = c.post("/consolidate/run", json={"dry_run": True})
        plan.raise_for_status()
        planning = time.monotonic() - t
    # Kill at a random moment inside the run as the dry run timed it (a
    # fraction ``span`` of it): while it reads, plans or applies.
    delay = planning * rng.uniform(*span)
    answer: dict[str, Any] = {}

    def call() -> None:
        try:
            with client(server, timeout=600) as c2:
                answer["status"] = c2.post("/consolidate/run").status_code
        except httpx.HTTPError:
            answer["status"] = None

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    time.sleep(delay)
    # Whether the run was still going when the kill came (no answer yet).
    in_flight = caller.is_alive()
    server.kill()
    caller.join(timeout=60)
    server = Server(data, env)
    server.wait_ready()
    problems: list[str] = []
    with client(server, timeout=600) as c:
        runs = [r for r in c.get("/consolidate/runs").json()["runs"] if not r["dry_run"]]
        after = c.get("/stats").json()["counts"]
        facts = list_all(c, "/long")
        done = [r for r in runs if r["status"] == "done"]
        if done:
            [record] = done
            # The facts the run wrote: each promote's, and each supersede's new one.
            promoted = [a["target_id"] for a in record["actions"] if a["kind"] == "promote"]
            promoted += [
                a["after"]["id"]
                for a in record["actions"]
                if a["kind"] == "supersede" and a.get("after")
            ]
            if not promoted:
                problems.append("a done run promoted nothing")
            missing = [f for f in promoted if c.get(f"/long/{f}").status_code != 200]
            if missing or after["long"] != len(promoted):
                problems.append(
                    f"done run partly applied: {len(missing)} of {len(promoted)} facts missing, "
                    f"{after['long']} stored"
                )
            outcome = "applied"
        else:
            if facts or after["long"] != 0:
                problems.append(f"run not done ({[r['status'] for r in runs]}) but facts exist")
            outcome = "not applied"
        if after["short"] != before["short"]:
            problems.append(f"short-term entries {before['short']} -> {after['short']}")
        again = c.post("/consolidate/run")
        if again.status_code != 201:
            problems.append(f"the next run failed: {again.status_code} {again.text[:200]}")
        stale = [r for r in c.get("/consolidate/runs").json()["runs"] if r["status"] == "running"]
        if stale:
            problems.append(f"{len(stale)} runs still 'running' after the next run")
        if not done and again.status_code == 201 and again.json()["counts"].get("promote", 0) == 0:
            problems.append("the next run promoted nothing after a run that was not applied")
    server.stop()
    check = integrity(data, args.key)
    if check != "ok":
        problems.append(f"integrity_check: {check}")
    statuses = [r["status"] for r in runs]
    return {
        "planning_seconds": round(planning, 2),
        "kill_after_seconds": round(delay, 2),
        "answered_before_kill": answer.get("status"),
        "in_flight": in_flight,
        "run_statuses_after_restart": statuses,
        "outcome": outcome,
        "integrity": check,
        "problems": problems,
    }


def consolidation_part(args: argparse.Namespace, root: Path, deadline: Deadline) -> list[Any]:
    rng = random.Random(args.seed + 1)
    out = []
    for i in range(args.run_kills):
        # A kill meant for a run in flight may come after it answered (a run
        # is faster than its dry run timed): that is checked too, then the
        # kill is tried again earlier, so that every kill counted lands in a run.
        span = (0.1, 0.9)
        for attempt in range(1, RUN_ATTEMPTS + 1):
            result = run_once(args, root / f"run{i}-{attempt}" / "data", rng, deadline, span)
            print(
                f"  run kill {i + 1}: killed {result['kill_after_seconds']} s into a run "
                f"(planning {result['planning_seconds']} s, "
                f"{'in flight' if result['in_flight'] else 'after it answered'}): "
                f"{result['outcome']}, statuses {result['run_statuses_after_restart']}, "
                + ("ok" if not result["problems"] else "; ".join(result["problems"])),
                flush=True,
            )
            out.append(result)
            if result["in_flight"]:
                break
            span = (span[0] / 2, span[1] / 2)
    return out


# Tries per counted kill, when the run answered before the kill came.
RUN_ATTEMPTS = 3


def _env(args: argparse.Namespace) -> dict[str, str]:
    return {"HALLS_STORAGE__ENCRYPTION_KEY": args.key} if args.key else {}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--writes", type=int, default=2000)
    p.add_argument("--kills", type=int, default=5)
    p.add_argument("--entries", type=int, default=3000, help="entries before a killed run")
    p.add_argument("--run-kills", type=int, default=5, help="consolidation runs killed")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--key", help="run on encrypted stores (storage.encryption_key)")
    p.add_argument("--time-limit", type=float, default=1800.0, help="seconds, in all")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = p.parse_args()
    deadline = Deadline(args.time_limit)
    root = Path(tempfile.mkdtemp(prefix="halls-crash-"))
    try:
        print(f"writes: {args.writes}, SIGKILL x {args.kills}", flush=True)
        writes = writes_part(args, root, deadline)
        print(
            f"  {writes['acknowledged']} acknowledged writes, {len(writes['problems'])} problems; "
            f"writes cut by a kill: {writes['cut_writes_present']} stored, "
            f"{writes['cut_writes_absent']} not; integrity {writes['integrity']}; "
            f"{writes['seconds']} s",
            flush=True,
        )
        print(f"consolidation: {args.entries} entries, SIGKILL in a run x {args.run_kills}")
        runs = consolidation_part(args, root, deadline)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    problems = writes["problems"] + [p for r in runs for p in r["problems"]]
    if args.json:
        print(json.dumps({"writes": writes, "runs": runs, "problems": problems}))
    print("PASS" if not problems else f"FAIL: {len(problems)} problems", file=sys.stderr)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
