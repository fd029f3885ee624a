"""The viewer, end to end: a live server with seeded memories, read in headless Chromium.

The browser is Debian's ``chromium`` driven by Playwright (never a downloaded
browser). One server and one browser serve the whole module: starting either
costs seconds, and every test opens its own page (its own sessionStorage).
Screenshots go to docs/ when HALLS_UPDATE_SCREENSHOTS=1, else to a tmp dir.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, Request, expect, sync_playwright

from conftest import REPO, LiveServer, free_port, start_server
from halls import Memory, Settings
from halls.embed import Embedder
from halls.models import LongFact, NewJournal, NewShort, new_id
from halls.store.sqlite import SQLiteStore
from halls.viewer import viewer_html

TOKEN = "viewer-test-token"
STORE = "chad"
DREAMS = "dreams"
HTML = REPO / "src" / "halls" / "viewer" / "halls.html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The launch flags that work in a container: no sandbox, GPU, QUIC or
# background traffic, so the only requests are the ones the page makes.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

# A real browser and a seeded server: ~25 s of CPU a run, and Debian's
# chromium installed. `make test-all` and CI run them.
pytestmark = pytest.mark.slow
ALLOWED_POSTS = {"/search", "/context"}

expect.set_options(timeout=30_000)

# Oldest first: the viewer lists newest first, so the last ones open page one.
SHORT = [
    ("Standup moved to 9:30 on Tuesdays and Thursdays", "meetings"),
    ("The CI runner has 2 CPU cores and 8 GB of RAM", "ci"),
    ("Dana owns the Q3 report; drafts go to her by Friday", "work"),
    ("The staging database is reset every Sunday night", "ops"),
    ("Chad's cat is called Pixel", "personal"),
    ("The deploy key lives in the team vault under infra/deploy", "ops"),
    ("Lunch order for the offsite: two vegetarian, one vegan", "work"),
    ("The flaky test is test_upload_resume; it fails under load", "ci"),
    ("Chad reads email only after 11am", "prefs"),
    ("The office wifi password rotates on the first Monday", "ops"),
    ("Use UTC in every log line", "prefs"),
    ("The budget review is on the 14th", "meetings"),
    ("Chad's laptop is a ThinkPad X1 running Debian", "personal"),
    ("The API rate limit is 600 requests per minute per token", "ops"),
    ("Grafana dashboards live in the monitoring repo", "ops"),
    ("Chad mentioned he now writes everything in Neovim", "prefs"),
    ("The release train leaves every other Wednesday", "work"),
    ("Backups are kept for 35 days", "ops"),
    ("Chad dislikes meetings without an agenda", "prefs"),
    ("The design doc for search lives in docs/recall.md", "work"),
    ("Support rotation: Chad is on call the week of the 20th", "work"),
    ("Slack threads beat DMs for decisions", "prefs"),
    ("The VPN drops when the laptop sleeps", "ops"),
    ("The printer on floor 3 needs A4 paper only", "personal"),
    ("Coffee machine is descaled on Mondays", "personal"),
    ("Tests must pass with filterwarnings=error", "ci"),
    ("The Postgres upgrade window is Saturday 02:00 UTC", "ops"),
    ("Chad wants short commit messages in the imperative", "prefs"),
    ("Remember to rotate the TLS cert before December", "ops"),
    ("Chad prefers absolute paths in configs", "prefs"),
]
PINNED = "Chad prefers absolute paths in configs"


@dataclass
class Seeded:
    facts: dict[str, LongFact]  # by a short name
    journal_id: str


@dataclass
class Viewer:
    """A page on the viewer, with every request it made."""

    page: Page
    server: LiveServer
    requests: list[Request] = field(default_factory=list)
    mark: int = 0  # requests before this index were sent before the token was typed

    def assert_read_only(self) -> None:
        """Only GETs (and preflights), POST /search and POST /context, all to halls."""
        assert self.requests, "the page made no request at all"
        origin = urlsplit(self.server.url)
        for r in self.requests:
            url = urlsplit(r.url)
            if url.scheme in ("file", "data"):
                continue
            assert (url.scheme, url.netloc) == (origin.scheme, origin.netloc), r.url
            assert TOKEN not in r.url, f"the token leaked into a URL: {r.url}"
            if r.method in WRITE_METHODS:
                assert r.method == "POST" and url.path in ALLOWED_POSTS, f"{r.method} {r.url}"


def _ago(**kw: float) -> str:
    return (datetime.now(UTC) - timedelta(**kw)).isoformat()


def _seed(data_dir: Path, embedder: Embedder) -> Seeded:
    """Short entries, loops (one done), a journal event through the service;
    long facts (a supersession pair) straight into the store file, since only
    the consolidator writes facts."""
    settings = Settings(data_dir=data_dir)
    with Memory(settings, embedder=embedder) as m:
        items = [
            NewShort(
                content=text,
                topic=topic,
                pinned=text == PINNED,
                occurred_at=_ago(hours=3 * (len(SHORT) - n)),
                source="claude-code" if n % 3 == 0 else None,
            )
            for n, (text, topic) in enumerate(SHORT)
        ]
        short_ids = [e.id for e in m.remember_many(items, store=STORE)]
        journal_id = m.journal(
            [NewJournal(content="user: I switched to Neovim last month", role="user")],
            store=STORE,
        )[0].id
        done = None
        for intent, kw in [
            ("Send the Q3 report draft to Dana", {"trigger_type": "manual"}),
            ("Ask Chad how the tax filing went", {"trigger_type": "session"}),
            (
                "Remind Chad to book the dentist",
                {"trigger_type": "time", "trigger_value": _ago(hours=2)},
            ),
            ("Renew the TLS certificate", {"trigger_type": "time", "trigger_value": _ago(days=-3)}),
            ("Bring up the flaky upload test", {"trigger_type": "topic", "topic": "ci"}),
        ]:
            loop = m.add_loop(intent, store=STORE, **kw)
            done = done or loop.id
        m.complete_loop(done, store=STORE)  # the first one, sent to Dana
        m.remember("A note in another store", store="work")

    now = datetime.now(UTC)

    def fact(content: str, days: float, **kw: object) -> LongFact:
        born = now - timedelta(days=days)
        fields: dict[str, object] = {
            "id": new_id("long"),
            "content": content,
            "first_seen": born,
            "last_confirmed": born,
            "created_at": born,
            "occurred_at": born,
            **kw,
        }
        return LongFact(**fields)  # type: ignore[arg-type]

    facts = {
        "vim": fact(
            "Chad's editor is Vim",
            60,
            evidence_count=3,
            category="preference",
            topic="prefs",
            status="superseded",
        ),
        "postgres": fact(
            "Production runs PostgreSQL 16 on a managed host",
            40,
            evidence_count=7,
            category="decision",
            topic="ops",
        ),
        "deploys": fact(
            "Deploys happen on Thursdays",
            30,
            evidence_count=0,
            category="procedure",
            status="demoted",
        ),
        "dark": fact(
            "Chad prefers dark themes in every tool",
            20,
            evidence_count=2,
            category="preference",
            topic="prefs",
        ),
    }
    facts["neovim"] = fact(
        "Chad switched his editor from Vim to Neovim",
        5,
        evidence_count=4,
        category="preference",
        topic="prefs",
        supersedes=facts["vim"].id,
        derived_from=[short_ids[15], journal_id],
    )
    facts["vim"] = facts["vim"].model_copy(update={"superseded_by": facts["neovim"].id})
    store = SQLiteStore(data_dir / f"{STORE}.sqlite3", STORE)
    try:
        ordered = ["vim", "postgres", "deploys", "dark", "neovim"]
        vectors = embedder.embed([facts[k].content for k in ordered])
        for key, vec in zip(ordered, vectors, strict=True):
            store.add_fact(facts[key], vec)
    finally:
        store.close()
    return Seeded(facts, journal_id)


@pytest.fixture(scope="module")
def seeded_server(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[tuple[LiveServer, Seeded]]:
    """A live server with a token and CORS for file:// pages, over seeded stores."""
    data_dir = tmp_path_factory.mktemp("viewer") / "data"
    seeded = _seed(data_dir, embedder)
    live = start_server(
        data_dir,
        env={
            "HALLS_SERVER__BEARER_TOKEN": TOKEN,
            # Browsers send Origin: null for pages opened from disk.
            "HALLS_SERVER__CORS_ORIGINS": json.dumps(["null"]),
        },
    )
    yield live, seeded
    live.stop()


@pytest.fixture(scope="module")
def dreamed(seeded_server) -> list[dict]:
    """Two consolidation runs on store "dreams" (promote and expire, then supersede),
    made by the test's own client: the page itself never asks for a run."""
    server, _ = seeded_server
    c = server.client()
    where = {"store": DREAMS}
    lapsed = {"intent": "Ask about the offsite", "expires_at": "2020-01-01T00:00:00Z"}
    assert c.post("/near", params=where, json=lapsed).status_code == 201
    for batch in [
        ["Standup is at 9:30", "The CI runner has 2 cores"],
        ["The CI runner now has 4 cores", "Standup is at 10:00 now"],
    ]:
        r = c.post("/short/batch", params=where, json={"items": [{"content": t} for t in batch]})
        assert r.status_code == 201, r.text
        hints = {"summary": "CI work", "promote_hints": ["CI runner", "Standup"]}
        assert c.post("/brief", params=where, json=hints).status_code == 201
        r = c.post("/consolidate/run", params=where, json={})
        assert r.status_code == 201, r.text
    r = c.get("/consolidate/runs", params=where)
    assert r.status_code == 200, r.text
    return r.json()["runs"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Debian's chromium, headless, on an empty profile."""
    assert Path(CHROMIUM).exists(), "the viewer tests need Debian's chromium (make chromium)"
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 860},
            color_scheme="dark",
        )
        yield context
        context.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: docs/ when asked to update them, else a tmp dir."""
    if os.environ.get("HALLS_UPDATE_SCREENSHOTS") == "1":
        return REPO / "docs"
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def viewer(browser: BrowserContext, seeded_server: tuple[LiveServer, Seeded]) -> Iterator[Viewer]:
    """A fresh page (own sessionStorage) that records every request it makes."""
    server, _ = seeded_server
    page = browser.new_page()
    v = Viewer(page=page, server=server)
    page.on("request", lambda r: v.requests.append(r))
    yield v
    page.close()


def _login(v: Viewer, token: str = TOKEN, store: str = STORE) -> Page:
    page = v.page
    page.goto(f"{v.server.url}/viewer")
    # Without a token the first load ends on the 401 message; nothing is in flight then.
    expect(page.locator(".state.error")).to_have_attribute("data-status", "401")
    page.fill("#token", token)
    v.mark = len(v.requests)
    page.click("#refresh")
    if token == TOKEN:
        expect(page.locator("#status")).to_contain_text("connected")
        page.select_option("#store", store)
    return page


def _from_disk(v: Viewer) -> Page:
    """The page opened as a file, as on a first visit (no server remembered)."""
    page = v.page
    page.goto(HTML.as_uri())
    page.evaluate("localStorage.clear()")
    page.reload()
    return page


def _shot(page: Page, path: Path) -> None:
    """A screenshot without hover or focus rings left over from the last click."""
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.screenshot(path=str(path))


def _tab(page: Page, name: str) -> None:
    page.click(f'.tabs button[data-tab="{name}"]')


def test_viewer_page_is_open_and_self_contained(seeded_server) -> None:
    """/viewer loads without a token, locks itself to its origin, and references nothing outside."""
    server, _ = seeded_server
    r = httpx.get(f"{server.url}/viewer")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert "connect-src 'self'" in r.headers["content-security-policy"]
    assert r.text == viewer_html() == HTML.read_text(encoding="utf-8")
    # Nothing to fetch from elsewhere: no external script, style, font or image.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", r.text)
    assert "@import" not in r.text and "url(" not in r.text
    # The page being open does not open the API.
    assert httpx.get(f"{server.url}/stores").status_code == 401


def test_each_tab_shows_the_seeded_memories(viewer: Viewer, seeded_server, shots: Path) -> None:
    """Short, Near, Long and Dreams tabs show the seeded items, by GETs that carry the token."""
    _, seeded = seeded_server
    page = _login(viewer)

    # ShortTerm: newest first, one page of 25, the pinned one on top.
    rows = page.locator("#short-list .short-row")
    expect(rows).to_have_count(25)
    newest_first = [text for text, _ in reversed(SHORT)]
    # expect() retries until the list settles; a one-shot read could race a re-render.
    expect(rows.locator(".text")).to_have_text(newest_first[:25])
    expect(page.locator('.tabs [data-count="short"]')).to_have_text(str(len(SHORT)))
    top = rows.first
    expect(top.locator(".chip.pinned")).to_be_visible()
    expect(top.locator(".ttl")).to_have_text("never expires")
    expect(rows.nth(1).locator(".ttl")).to_contain_text(re.compile(r"expires in (7d|8d)"))
    # Seeded 3 hours apart, the newest 3 hours ago.
    expect(top.locator(".age")).to_have_text("3h ago")
    expect(rows.nth(1).locator(".age")).to_have_text("6h ago")
    _shot(page, shots / "viewer-short.png")
    page.click(".pager .next")
    expect(rows).to_have_count(len(SHORT) - 25)
    expect(rows.locator(".text")).to_have_text(newest_first[25:])
    expect(page.locator(".pager .range")).to_have_text("26–30")
    page.click(".pager .prev")
    expect(rows).to_have_count(25)

    # NearTerm: trigger and due state; the done loop greyed out.
    _tab(page, "near")
    loops = page.locator("#near-list .near-row")
    expect(loops).to_have_count(5)
    done = loops.filter(has_text="Send the Q3 report draft to Dana")
    expect(done).to_have_class(re.compile(r"\bclosed\b"))
    expect(done).to_have_attribute("data-status", "done")
    expect(page.locator("#near-list .row.closed")).to_have_count(1)
    expect(loops.filter(has_text="book the dentist").locator(".due")).to_contain_text("due now")
    expect(loops.filter(has_text="TLS certificate").locator(".due")).to_have_text(
        re.compile(r"due in (3d|2d 23h)")  # seeded three days ahead, a few seconds ago
    )
    expect(loops.filter(has_text="tax filing").locator(".due")).to_have_text("due next session")
    expect(page.locator("#panel")).not_to_contain_text("null")
    _shot(page, shots / "viewer-near.png")

    # LongTerm: evidence and status; a click shows the chain and the sources.
    _tab(page, "long")
    facts = page.locator("#long-list .long-row")
    expect(facts).to_have_count(5)
    f = seeded.facts
    expect(facts.filter(has_text=f["postgres"].content)).to_contain_text("evidence ×7")
    expect(facts.filter(has_text=f["vim"].content)).to_have_attribute("data-status", "superseded")
    expect(facts.filter(has_text=f["deploys"].content)).to_have_attribute("data-status", "demoted")
    facts.filter(has_text=f["neovim"].content).click()
    chain = page.locator("#fact-chain li")
    expect(chain).to_have_count(2)
    assert chain.evaluate_all("els => els.map(e => e.dataset.id)") == [f["vim"].id, f["neovim"].id]
    expect(chain.nth(1)).to_have_class("current")
    derived = page.locator("#derived-from li")
    expect(derived).to_have_count(2)
    expect(derived.nth(0)).to_contain_text(SHORT[15][0])
    expect(derived.nth(1)).to_contain_text(seeded.journal_id)
    _shot(page, shots / "viewer-long.png")
    chain.nth(0).locator(".text").click()  # walk back to the superseded version
    expect(page.locator("#fact-detail .big")).to_have_text(f["vim"].content)
    expect(page.locator("#fact-chain li.current")).to_have_attribute("data-id", f["vim"].id)

    # Dreams: no consolidation has run on this store.
    _tab(page, "dreams")
    expect(page.locator(".state.empty h3")).to_have_text("No runs yet")

    # The token stays in this tab's sessionStorage, never in localStorage or a URL.
    assert page.evaluate("sessionStorage.getItem('halls.token')") == TOKEN
    assert TOKEN not in json.dumps(page.evaluate("Object.assign({}, localStorage)"))
    assert TOKEN not in page.url
    after = viewer.requests[viewer.mark :]
    assert after and all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in after)
    viewer.assert_read_only()


def test_search_shows_top_hit_with_score_breakdown(
    viewer: Viewer, seeded_server, shots: Path
) -> None:
    """A long-only search ranks the current editor fact first and draws its score parts."""
    _, seeded = seeded_server
    page = _login(viewer)
    _tab(page, "search")
    for tier in ("short", "near"):
        page.uncheck(f'input.tier[value="{tier}"]')
    page.fill("#query", "which editor does Chad use?")
    with page.expect_response(lambda r: urlsplit(r.url).path == "/search") as resp:
        page.click("#search-form button[type=submit]")
    sent = json.loads(resp.value.request.post_data or "{}")
    assert sent["tiers"] == ["long"] and sent["query"] == "which editor does Chad use?"
    assert sent["reinforce"] is False  # looking is not recalling: strength stays as it was
    results = resp.value.json()["results"]

    hits = page.locator("#hits .hit")
    expect(hits).to_have_count(len(results))
    top = hits.first
    expect(top).to_have_attribute("data-id", seeded.facts["neovim"].id)
    expect(top.locator(".text")).to_have_text(seeded.facts["neovim"].content)
    assert set(hits.evaluate_all("els => els.map(e => e.dataset.tier)")) == {"long"}
    # The superseded version is left out unless asked for.
    assert seeded.facts["vim"].id not in hits.evaluate_all("els => els.map(e => e.dataset.id)")

    detail = results[0]["score_detail"]
    parts = {
        b.get_attribute("data-part"): b.get_attribute("data-value")
        for b in top.locator(".bar").all()
    }
    for key in ("relevance", "tier_weight", "evidence", "strength", "recency", "cosine"):
        assert float(parts[key]) == pytest.approx(detail[key]), key
    assert float(parts["score"]) == pytest.approx(results[0]["score"])
    # evidence x4: 1 + 0.25 ln 4 lifts the fact; the bar is drawn, not empty.
    assert detail["evidence"] > 1.0
    width = top.locator('.bar[data-part="evidence"] .fill').evaluate("e => e.style.width")
    assert 50 < float(width.rstrip("%")) < 100
    _shot(page, shots / "viewer-search.png")
    viewer.assert_read_only()


def test_search_journal_only_when_ticked(viewer: Viewer, seeded_server) -> None:
    """The journal box starts unticked (the default tiers); ticked alone, it finds the event."""
    _, seeded = seeded_server
    page = _login(viewer)
    _tab(page, "search")
    expect(page.locator('input.tier[value="journal"]')).not_to_be_checked()
    for tier in ("short", "near", "long"):
        page.uncheck(f'input.tier[value="{tier}"]')
    page.check('input.tier[value="journal"]')
    page.fill("#query", "switched to Neovim last month")
    with page.expect_response(lambda r: urlsplit(r.url).path == "/search") as resp:
        page.click("#search-form button[type=submit]")
    assert json.loads(resp.value.request.post_data or "{}")["tiers"] == ["journal"]
    hits = page.locator("#hits .hit")
    expect(hits.first).to_have_attribute("data-id", seeded.journal_id)
    assert set(hits.evaluate_all("els => els.map(e => e.dataset.tier)")) == {"journal"}
    viewer.assert_read_only()


def test_dreams_tab_shows_runs_and_their_actions(
    viewer: Viewer, dreamed: list[dict], shots: Path
) -> None:
    """Dreams lists the runs newest first with their counts, and opens one to its actions."""
    page = _login(viewer, store=DREAMS)
    _tab(page, "dreams")
    runs = page.locator("#runs .run")
    expect(runs).to_have_count(len(dreamed))
    assert runs.evaluate_all("els => els.map(e => e.dataset.id)") == [r["id"] for r in dreamed]
    for row, run in zip(runs.all(), dreamed, strict=True):
        for kind, n in run["counts"].items():
            chips = row.locator(".counts .chip", has_text=kind.replace("_", " "))
            expect(chips).to_have_count(1 if n else 0)
            if n:
                expect(chips).to_have_text(f"{kind.replace('_', ' ')} {n}")
        expect(row.locator(".side .chip")).to_have_text(run["status"])
    newest = runs.first
    newest.locator(".run-toggle").click()
    actions = newest.locator("tr.action")
    expect(actions).to_have_count(len(dreamed[0]["actions"]))
    for tr, action in zip(actions.all(), dreamed[0]["actions"], strict=True):
        expect(tr).to_have_attribute("data-kind", action["kind"])
        expect(tr).to_have_attribute("data-target", action["target_id"])
        expect(tr.locator(".before")).to_contain_text(action["before"]["content"])
        expect(tr.locator(".after")).to_contain_text(action["after"]["content"])
    assert "supersede" in {a["kind"] for a in dreamed[0]["actions"]}
    expect(page.locator("#panel")).not_to_contain_text("null")
    _shot(page, shots / "viewer-dreams.png")
    viewer.assert_read_only()


def test_wrong_or_missing_token_shows_the_401_message(viewer: Viewer) -> None:
    """No token and a wrong token each get a 401 explanation, not a blank panel."""
    page = viewer.page
    page.goto(f"{viewer.server.url}/viewer")
    error = page.locator(".state.error")
    expect(error).to_have_attribute("data-status", "401")
    expect(error.locator("h3")).to_have_text("This server needs a bearer token (401 Unauthorized)")
    page.fill("#token", "not-the-token")
    page.click("#refresh")
    expect(error.locator("h3")).to_have_text("The bearer token was refused (401 Unauthorized)")
    expect(page.locator("#status")).to_contain_text("401")
    _tab(page, "search")
    page.fill("#query", "anything")
    page.press("#query", "Enter")
    expect(page.locator("#search-results .state.error h3")).to_contain_text("401")
    viewer.assert_read_only()


def test_opened_from_disk_asks_for_the_server(viewer: Viewer) -> None:
    """From file:// the page asks for the base URL, then reads through CORS (Origin: null)."""
    page = _from_disk(viewer)
    expect(page.locator("#welcome-base")).to_have_value("http://127.0.0.1:7420")
    page.fill("#welcome-base", viewer.server.url)
    page.fill("#welcome-token", TOKEN)
    page.click("#welcome-form button[type=submit]")
    expect(page.locator("#status")).to_contain_text("connected")
    page.select_option("#store", STORE)
    expect(page.locator("#short-list .short-row")).to_have_count(25)
    assert page.evaluate("localStorage.getItem('halls.base')") == viewer.server.url
    viewer.assert_read_only()


def test_server_down_shows_a_clear_message(viewer: Viewer) -> None:
    """A base URL where nothing listens says it cannot reach halls, and how to fix it."""
    page = _from_disk(viewer)
    dead = f"http://127.0.0.1:{free_port()}"
    page.fill("#welcome-base", dead)
    page.click("#welcome-form button[type=submit]")
    error = page.locator(".state.error")
    expect(error.locator("h3")).to_have_text(f"Cannot reach halls at {dead}")
    expect(error).to_contain_text('cors_origins: ["null"]')
    expect(page.locator("#status")).to_have_text("offline")
    # Nothing listened, so no request ever reached a server.
    assert all(r.method == "GET" for r in viewer.requests if r.url.startswith("http"))


def test_empty_store_shows_empty_states(viewer: Viewer) -> None:
    """A store with only a short note shows explained empty states for loops and facts."""
    page = _login(viewer, store="work")
    expect(page.locator("#short-list .short-row")).to_have_count(1)
    _tab(page, "near")
    expect(page.locator(".state.empty h3")).to_have_text("No open loops")
    _tab(page, "long")
    expect(page.locator(".state.empty h3")).to_have_text("No long-term facts yet")
    _tab(page, "search")
    expect(page.locator(".state.empty h3")).to_have_text("Search every tier at once")
    viewer.assert_read_only()


def test_the_counts_are_those_of_the_store_shown(viewer: Viewer) -> None:
    """A late /stats answer for the store shown before a switch does not overwrite
    the counts of the store switched to (the answers are held back in the page)."""
    page = viewer.page
    page.add_init_script(
        """(() => {
          const fetch0 = window.fetch;
          window.fetch = async (url, opts) => {
            const r = await fetch0(url, opts);
            const u = String(url);
            if (u.includes("/stats") && !u.includes("store=chad")) {
              await new Promise((done) => setTimeout(done, 1500));
            }
            return r;
          };
        })();"""
    )
    _login(viewer)
    count = page.locator('.tabs [data-count="short"]')
    expect(count).to_have_text(str(len(SHORT)))
    page.wait_for_timeout(2000)  # past the held-back answer for the first store
    expect(count).to_have_text(str(len(SHORT)))


def _written(c: httpx.Client, store: str) -> dict[str, str]:
    """What the test wrote to the store, by id, read through the listings (not /records)."""
    out: dict[str, str] = {}
    for path in ("/short", "/journal"):
        r = c.get(path, params={"store": store, "limit": 1000})
        assert r.status_code == 200, r.text
        out.update((e["id"], e["content"]) for e in r.json())
    return out


def _selected(page: Page, tab: str) -> None:
    expect(page.locator(f'.tabs button[data-tab="{tab}"]')).to_have_attribute(
        "aria-selected", "true"
    )


def test_a_runs_actions_show_their_inputs_text(viewer: Viewer, dreamed: list[dict]) -> None:
    """Each action of an opened run lists its inputs with their text, not only their ids,
    fetched in one GET /records for the run."""
    texts = _written(viewer.server.client(), DREAMS)
    newest = dreamed[0]
    shown = [i for a in newest["actions"] for i in a["inputs"] if i in texts]
    assert shown, newest["actions"]
    page = _login(viewer, store=DREAMS)
    _tab(page, "dreams")
    run = page.locator(f'#runs .run[data-id="{newest["id"]}"]')
    run.locator(".run-toggle").click()
    for action in newest["actions"]:
        row = run.locator(f'tr.action[data-target="{action["target_id"]}"]')
        for input_id in action["inputs"]:
            item = row.locator(f'li.input[data-id="{input_id}"]')
            expect(item).to_contain_text(texts[input_id])
            expect(item.locator(".chip")).to_have_text("short-term")
    asked = [r for r in viewer.requests if urlsplit(r.url).path == "/records"]
    assert len(asked) == 1, [r.url for r in asked]
    expect(page.locator("#panel")).not_to_contain_text("(deleted)")
    viewer.assert_read_only()


def test_a_deep_link_opens_a_run_whose_deleted_input_says_so(
    viewer: Viewer, dreamed: list[dict]
) -> None:
    """#dreams/<run id> opens that run on load; an input deleted since the run shows
    "(deleted)" while the others keep their text."""
    c = viewer.server.client()
    texts = _written(c, DREAMS)
    older = dreamed[1]
    newer_inputs = {i for a in dreamed[0]["actions"] for i in a["inputs"]}
    inputs = [i for a in older["actions"] for i in a["inputs"] if i in texts]
    gone = next(i for i in inputs if i not in newer_inputs)
    kept = [i for i in inputs if i != gone]
    assert kept, older["actions"]
    r = c.delete(f"/short/{gone}", params={"store": DREAMS})
    assert r.status_code == 204, r.text

    page = _login(viewer, store=DREAMS)
    page.goto("about:blank")  # a fresh load, not a jump within the page
    page.goto(f"{viewer.server.url}/viewer#dreams/{older['id']}")
    _selected(page, "dreams")
    run = page.locator(f'#runs .run[data-id="{older["id"]}"]')
    expect(run.locator(".run-toggle")).to_have_attribute("aria-expanded", "true")
    expect(run.locator(f'li.input[data-id="{gone}"] .input-text')).to_have_text("(deleted)")
    for i in kept:
        expect(run.locator(f'li.input[data-id="{i}"]')).to_contain_text(texts[i])
    # A deep link to a tab opens that tab.
    page.goto("about:blank")
    page.goto(f"{viewer.server.url}/viewer#long")
    _selected(page, "long")
    expect(page.locator(".bar h2")).to_contain_text("Long-term facts")
    viewer.assert_read_only()


def test_tabs_and_the_open_run_follow_back_and_forward(viewer: Viewer, dreamed: list[dict]) -> None:
    """Each tab switch and each run opened is a history step: Back and Forward restore them."""
    newest = dreamed[0]["id"]
    page = _login(viewer, store=DREAMS)
    _tab(page, "near")
    expect(page).to_have_url(re.compile(r"#near$"))
    _tab(page, "dreams")
    page.locator(f'#runs .run[data-id="{newest}"] .run-toggle').click()
    expect(page).to_have_url(re.compile(rf"#dreams/{newest}$"))
    _tab(page, "long")
    _selected(page, "long")

    page.go_back()  # to the open run
    _selected(page, "dreams")
    run = page.locator(f'#runs .run[data-id="{newest}"]')
    expect(run.locator(".run-toggle")).to_have_attribute("aria-expanded", "true")
    expect(run.locator("tr.action")).to_have_count(len(dreamed[0]["actions"]))
    page.go_back()  # to the list, no run open
    expect(page).to_have_url(re.compile(r"#dreams$"))
    expect(run.locator(".run-toggle")).to_have_attribute("aria-expanded", "false")
    expect(run.locator("tr.action")).to_have_count(0)
    page.go_back()
    _selected(page, "near")
    expect(page.locator(".bar h2")).to_contain_text("Open loops")
    page.go_forward()
    _selected(page, "dreams")
    page.go_forward()
    expect(run.locator(".run-toggle")).to_have_attribute("aria-expanded", "true")
    viewer.assert_read_only()
