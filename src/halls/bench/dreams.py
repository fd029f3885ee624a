"""``halls bench dreams``: does consolidation turn what was said into the right facts?

A labelled scenario suite (``bench/data/dreams.yaml``, written by the team)
drives a live server over HTTP as a user would: each scenario gets its own
store, writes short-term entries (``occurred_at`` days in the past, so that
recurrence across days is real), journal events and briefs, runs the
consolidator after each phase (``POST /consolidate/run``), and reads the
active long-term facts back (``GET /long``). Whether the outcome is right is
a pure function (:func:`check`) of the scenario and the facts; pass rates
are reported per kind of scenario.
"""

from __future__ import annotations

import re
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import yaml

from halls.bench.perf import BenchError

DAY = 86400.0
STORE_PREFIX = "dreams-"
KINDS = (
    "paraphrase",
    "one-off",
    "update",
    "update-implicit",
    "retraction",
    "addition",
    "distinct",
    "pinned",
    "hint",
    "journal",
)
_ENTRY = re.compile(r"^(-?\d+(?:\.\d+)?)\s+([a-z][a-z0-9]*)(!?):\s+(\S.*)$")

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Entry:
    day: float  # relative to the start of the scenario (negative: in the past)
    tag: str
    text: str
    pinned: bool = False


@dataclass(frozen=True)
class Phase:
    short: tuple[Entry, ...] = ()
    journal: tuple[Entry, ...] = ()
    hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expect:
    active: tuple[str, ...] = ()
    inactive: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    contains: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Scenario:
    id: str
    kind: str
    phases: tuple[Phase, ...]
    expect: Expect


@dataclass
class Outcome:
    scenario: Scenario
    passed: bool
    problems: list[str] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    engine: str = "?"
    missed: set[str] = field(default_factory=set)  # expected tags that did not end as expected
    wrong_retirements: list[str] = field(default_factory=list)
    retractions_as_evidence: list[str] = field(default_factory=list)


def _entry(text: Any, where: str) -> Entry:
    m = _ENTRY.match(str(text))
    if not m:
        raise BenchError(f"{where}: '{text}' is not 'DAY TAG: text'")
    return Entry(float(m.group(1)), m.group(2), m.group(4).strip(), m.group(3) == "!")


def parse(data: Any) -> list[Scenario]:
    """Scenarios from the YAML structure; a malformed one is a BenchError naming it."""
    if not isinstance(data, list):
        raise BenchError("the scenario file must be a list of scenarios")
    out: list[Scenario] = []
    seen: set[str] = set()
    for n, raw in enumerate(data):
        where = f"scenario {n + 1}"
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise BenchError(f"{where}: needs an id")
        sid = raw["id"]
        where = f"scenario '{sid}'"
        if sid in seen:
            raise BenchError(f"{where}: duplicate id")
        seen.add(sid)
        if raw.get("kind") not in KINDS:
            raise BenchError(f"{where}: kind must be one of {', '.join(KINDS)}")
        phases = []
        for p in raw.get("phases") or []:
            phases.append(
                Phase(
                    short=tuple(_entry(e, where) for e in p.get("short", [])),
                    journal=tuple(_entry(e, where) for e in p.get("journal", [])),
                    hints=tuple(str(h) for h in p.get("hints", [])),
                )
            )
        if not phases:
            raise BenchError(f"{where}: needs at least one phase")
        exp = raw.get("expect") or {}
        expect = Expect(
            active=tuple(exp.get("active", [])),
            inactive=tuple(exp.get("inactive", [])),
            optional=tuple(exp.get("optional", [])),
            contains=tuple(
                tuple(str(w).lower() for w in group) for group in exp.get("contains", [])
            ),
        )
        tags = {e.tag for p in phases for e in (*p.short, *p.journal)}
        named = {*expect.active, *expect.inactive, *expect.optional}
        if named - tags:
            raise BenchError(f"{where}: expect names unknown tags {sorted(named - tags)}")
        if not named and not expect.contains:
            raise BenchError(f"{where}: expects nothing")
        out.append(Scenario(sid, raw["kind"], tuple(phases), expect))
    return out


def load(path: Path | None = None) -> list[Scenario]:
    """The team's suite (shipped in the package), or another file of the same shape."""
    if path is None:
        text = resources.files("halls.bench").joinpath("data/dreams.yaml").read_text("utf-8")
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BenchError(f"cannot read {path.name}: {exc.strerror}") from None
    try:
        return parse(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise BenchError(f"the scenario file is not valid YAML ({exc})") from None


def check(
    scenario: Scenario,
    ids: dict[str, list[str]],
    facts: list[dict[str, Any]],
    missed: set[str] | None = None,
) -> list[str]:
    """What is wrong with the active ``facts`` (empty: the scenario passed).

    ``ids`` maps each tag to the ids of the records written for it; the tags of
    ``active`` and ``inactive`` that did not end as expected go into ``missed``.
    """
    missed = set() if missed is None else missed
    exp = scenario.expect
    problems: list[str] = []
    covered: set[str] = set()  # fact ids explained by an active or optional tag

    def covering(tag: str) -> list[dict[str, Any]]:
        mine = set(ids.get(tag, []))
        return [f for f in facts if mine & set(f["derived_from"])]

    for tag in exp.active:
        found = covering(tag)
        covered.update(f["id"] for f in found)
        if len(found) != 1:
            problems.append(f"'{tag}': {len(found)} active facts, expected 1")
            missed.add(tag)
            continue
        short = {i for i in ids[tag] if i.startswith("s_")}
        missing = short - set(found[0]["derived_from"])
        if missing:
            problems.append(f"'{tag}': the fact leaves out {len(missing)} of its entries")
            missed.add(tag)
    for tag in exp.inactive:
        found = covering(tag)
        if found:
            problems.append(f"'{tag}': still active in {', '.join(f['id'] for f in found)}")
            missed.add(tag)
    for tag in exp.optional:
        covered.update(f["id"] for f in covering(tag))
    for words in exp.contains:
        hit = [f for f in facts if all(w in f["content"].lower() for w in words)]
        covered.update(f["id"] for f in hit)
        if not hit:
            problems.append(f"no active fact mentions {' + '.join(words)}")
    extra = [f for f in facts if f["id"] not in covered]
    for f in extra:
        problems.append(f"unexpected active fact {f['id']}: '{f['content'][:70]}'")
    return problems


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()


def _ok(r: httpx.Response, status: int, what: str) -> Any:
    if r.status_code != status:
        raise BenchError(f"{what}: HTTP {r.status_code}: {r.text[:200]}")
    return r.json()


def play(client: httpx.Client, scenario: Scenario, store: str) -> Outcome:
    """Run one scenario against a server, in a store of its own."""
    params = {"store": store}
    now = time.time()
    ids: dict[str, list[str]] = {}
    actions: list[str] = []
    made: list[dict[str, Any]] = []  # every run's actions, as the API gives them
    engine = "?"
    for phase in scenario.phases:
        if phase.short:
            items = [
                {"content": e.text, "occurred_at": _iso(now + e.day * DAY), "pinned": e.pinned}
                for e in phase.short
            ]
            got = _ok(
                client.post("/short/batch", params=params, json={"items": items}), 201, "write"
            )
            for e, i in zip(phase.short, got["ids"], strict=True):
                ids.setdefault(e.tag, []).append(i)
        if phase.journal:
            items = [
                {"content": e.text, "role": "user", "occurred_at": _iso(now + e.day * DAY)}
                for e in phase.journal
            ]
            got = _ok(
                client.post("/journal/batch", params=params, json={"items": items}), 201, "journal"
            )
            for e, i in zip(phase.journal, got["ids"], strict=True):
                ids.setdefault(e.tag, []).append(i)
        if phase.hints:
            # A summary is a source of statements since distillation: one
            # that states nothing, so only the hints speak.
            brief = {"summary": "A working session.", "promote_hints": list(phase.hints)}
            _ok(client.post("/brief", params=params, json=brief), 201, "brief")
        run = _ok(client.post("/consolidate/run", params=params, json={}), 201, "run")
        if run["status"] != "done":
            raise BenchError(f"{scenario.id}: run {run['id']} {run['status']}: {run.get('error')}")
        engine = run["engine"]
        actions += [f"{a['kind']} {a['target_id']}: {a['reason']}" for a in run["actions"]]
        made += run["actions"]
    facts = _ok(
        client.get("/long", params={**params, "status": "active", "limit": 1000}), 200, "facts"
    )
    missed: set[str] = set()
    problems = check(scenario, ids, facts, missed)
    retired = _ok(
        client.get("/long", params={**params, "status": "superseded", "limit": 1000}),
        200,
        "superseded facts",
    )
    every = {f["id"]: f for f in [*facts, *retired]}
    wrong = wrong_retirements(scenario, ids, retired, every)
    counted = retractions_as_evidence(scenario, ids, made, every)
    return Outcome(scenario, not problems, problems, facts, actions, engine, missed, wrong, counted)


def wrong_retirements(
    scenario: Scenario,
    ids: dict[str, list[str]],
    retired: list[dict[str, Any]],
    every: dict[str, dict[str, Any]],
) -> list[str]:
    """The retired facts that held a planted fact the user still holds (an ``active``
    tag, not ``inactive``), retired by a statement that did not say that fact again:
    a supersession between two facts ("Raj is in Bangalore" superseded by "Raj
    bumped httpx"), or a retraction of something nobody retracted."""
    tag_of = {i: tag for tag, mine in ids.items() for i in mine}
    held = set(scenario.expect.active) - set(scenario.expect.inactive)

    def tags(fact: dict[str, Any] | None) -> set[str]:
        return {tag_of[i] for i in (fact or {}).get("derived_from", []) if i in tag_of}

    out = []
    for old in retired:
        lost = tags(old) & held
        if not lost:
            continue
        new = every.get(old.get("superseded_by") or "")
        if lost & tags(new):
            continue  # the same fact said again, read as a change of itself
        by = f"by '{new['content'][:60]}'" if new else "(retracted)"
        out.append(f"'{old['content'][:60]}' ({', '.join(sorted(lost))}) retired {by}")
    return out


def retractions_as_evidence(
    scenario: Scenario,
    ids: dict[str, list[str]],
    made: list[dict[str, Any]],
    every: dict[str, dict[str, Any]],
) -> list[str]:
    """The actions that promoted or confirmed a fact holding a planted fact the user
    gave up (an ``inactive`` tag) on the word of a statement the scenario keeps no
    fact of (an ``optional`` tag: the retraction, "I cancelled my climbing gym
    membership", or noise). A retraction that retires the fact adds its sources
    too, as the record of why; that is no evidence and is not counted."""
    tag_of = {i: tag for tag, mine in ids.items() for i in mine}
    given_up = set(scenario.expect.inactive)
    unkept = set(scenario.expect.optional) - set(scenario.expect.active)
    out = []
    for a in made:
        if a["kind"] == "promote" or a["kind"] == "confirm":
            fact = every.get(a["target_id"])
        elif a["kind"] == "supersede":
            fact = every.get((a.get("after") or {}).get("id", ""))
        else:
            continue
        if fact is None:
            continue
        held = {tag_of[i] for i in fact.get("derived_from", []) if i in tag_of} & given_up
        said = {tag_of[i] for i in a.get("inputs", []) if i in tag_of} & unkept
        if held and said:
            tags = f"{', '.join(sorted(said))} for {', '.join(sorted(held))}"
            out.append(f"{a['kind']} '{fact['content'][:60]}' ({tags})")
    return out


def run(
    url: str,
    scenarios: Sequence[Scenario],
    *,
    token: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    # Runs against one server (--url) must not share stores, even within a second.
    stamp = f"{int(time.time()):x}{secrets.token_hex(3)}"
    with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
        for n, scenario in enumerate(scenarios):
            store = f"{STORE_PREFIX}{stamp}-{n}"
            outcomes.append(play(client, scenario, store))
            if progress:
                progress("scenarios", n + 1, len(scenarios))
    engine = outcomes[0].engine if outcomes else "?"
    return summarise(outcomes, engine, time.perf_counter() - started)


def summarise(outcomes: Sequence[Outcome], engine: str, seconds: float) -> dict[str, Any]:
    kinds: dict[str, Counter[str]] = {}
    for o in outcomes:
        c = kinds.setdefault(o.scenario.kind, Counter())
        c["n"] += 1
        c["passed"] += int(o.passed)
    total = len(outcomes)
    passed = sum(o.passed for o in outcomes)
    # Per planted fact, beside per scenario: a scenario with four facts and one
    # lost fails whole, while the user lost one memory of four.
    tags = {
        which: (
            sum(len(getattr(o.scenario.expect, which)) for o in outcomes),
            sum(len(set(getattr(o.scenario.expect, which)) - o.missed) for o in outcomes),
        )
        for which in ("active", "inactive")
    }
    return {
        "engine": engine,
        "scenarios": total,
        "passed": passed,
        "pass_rate": round(passed / total, 3) if total else 0.0,
        "planted": {
            "active": {"n": tags["active"][0], "as_expected": tags["active"][1]},
            "inactive": {"n": tags["inactive"][0], "as_expected": tags["inactive"][1]},
            "unexpected_facts": sum(
                p.startswith("unexpected active fact") for o in outcomes for p in o.problems
            ),
            # A fact the user still holds, superseded by another or retracted.
            "wrong_retirements": sum(len(o.wrong_retirements) for o in outcomes),
            # A retraction (or noise) that made or confirmed a fact the user gave up.
            "retractions_as_evidence": sum(len(o.retractions_as_evidence) for o in outcomes),
        },
        "seconds": round(seconds, 1),
        "kinds": {
            k: {"n": c["n"], "passed": c["passed"], "pass_rate": round(c["passed"] / c["n"], 3)}
            for k, c in sorted(kinds.items(), key=lambda kv: KINDS.index(kv[0]))
        },
        "wrong_retirements": {
            o.scenario.id: o.wrong_retirements for o in outcomes if o.wrong_retirements
        },
        "retractions_as_evidence": {
            o.scenario.id: o.retractions_as_evidence for o in outcomes if o.retractions_as_evidence
        },
        "failures": [
            {
                "id": o.scenario.id,
                "kind": o.scenario.kind,
                "problems": o.problems,
                "facts": [f["content"] for f in o.facts],
                "actions": o.actions,
            }
            for o in outcomes
            if not o.passed
        ],
    }
