"""/docs (Swagger UI) and /redoc (ReDoc) work offline: every asset comes from the server.

The fast tests read the pages over HTTP from the session's live server; the
slow ones open them in Debian's chromium (as tests/test_viewer.py does) with
every request off loopback aborted, and check the operations rendered.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from playwright.sync_api import BrowserContext, Page, Route, expect, sync_playwright

from conftest import LiveServer

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
PAGES = {"/docs": "swagger", "/redoc": "redoc"}
# src=, href= and url(...) in a page: each must name a path on this server.
LINKS = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url\(\s*["']?([^"')]+)""")


def links(html: str) -> list[str]:
    return [a or b for a, b in LINKS.findall(html)]


@pytest.mark.parametrize("path", sorted(PAGES))
def test_docs_pages_name_no_external_url_and_their_assets_answer(
    server: LiveServer, path: str
) -> None:
    """The page links only to paths of this server, each answering 200 with its content."""
    client = server.client()
    page = client.get(path)
    assert page.status_code == 200
    assert "http://" not in page.text and "https://" not in page.text, page.text
    found = links(page.text)
    assert found, page.text
    for link in found:
        assert link.startswith("/") and not link.startswith("//"), link
        asset = client.get(urljoin(server.url, link))
        assert asset.status_code == 200, link
        assert len(asset.content) > 1000, link
    assert any(link.endswith(".js") for link in found), found


def test_docs_assets_need_the_token_as_the_docs_do(server_factory) -> None:
    """With a bearer token configured, /docs and its assets answer 401 without it."""
    live = server_factory(env={"HALLS_SERVER__BEARER_TOKEN": "apidocs-token-0123456789"})
    anonymous = live.client(token=None)
    for path in ("/docs", "/redoc", "/docs/assets/swagger-ui-bundle.js"):
        assert anonymous.get(path).status_code == 401, path
        assert live.client().get(path).status_code == 200, path


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Debian's chromium, headless, with every request off loopback aborted."""
    assert Path(CHROMIUM).exists(), "the browser tests need Debian's chromium (make chromium)"
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 860},
        )
        yield context
        context.close()


def _offline(page: Page) -> list[str]:
    """Abort every request to a host other than 127.0.0.1; return the list they go on."""
    refused: list[str] = []

    def only_loopback(route: Route) -> None:
        url = urlsplit(route.request.url)
        if url.scheme in ("data", "blob") or url.hostname == "127.0.0.1":
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", only_loopback)
    return refused


@pytest.mark.slow
def test_swagger_ui_renders_every_operation_offline(
    browser: BrowserContext, server: LiveServer
) -> None:
    """/docs with the network cut renders an operation block for each API operation."""
    operations = server.client().get("/openapi.json").json()["paths"]
    count = sum(len(methods) for methods in operations.values())
    page = browser.new_page()
    refused = _offline(page)
    try:
        page.goto(f"{server.url}/docs")
        expect(page.locator(".opblock").first).to_be_visible(timeout=30_000)
        expect(page.locator(".opblock")).to_have_count(count)
        block = page.locator(".opblock-post", has=page.locator("[data-path='/short/batch']"))
        expect(block).to_contain_text("Remember Batch")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("halls")
    finally:
        page.close()
    assert refused == []


@pytest.mark.slow
def test_redoc_renders_the_operations_offline(browser: BrowserContext, server: LiveServer) -> None:
    """/redoc with the network cut renders the API's operations (its side menu and bodies)."""
    page = browser.new_page()
    refused = _offline(page)
    try:
        page.goto(f"{server.url}/redoc")
        heading = page.locator("h2", has_text="Remember Batch")
        expect(heading).to_be_visible(timeout=30_000)
        expect(page.locator("[role=menuitem]", has_text="Remember Batch").first).to_be_visible()
        expect(page.locator("h1").first).to_contain_text("halls")
    finally:
        page.close()
    # ReDoc's bundle links its "API docs by Redocly" footer logo to its CDN;
    # offline that image is missing and nothing else is.
    assert set(refused) <= {REDOC_LOGO}, refused
