"""The interactive API pages, /docs (Swagger UI) and /redoc (ReDoc), served offline.

FastAPI's own pages load their scripts, styles, favicon and (ReDoc) fonts
from CDNs, so on a machine without internet they are blank. Here the same
pages (FastAPI's ``get_swagger_ui_html`` and ``get_redoc_html``) load the
assets that the fastapi-offline package ships, served by the app itself
under ``/docs/assets``. The pages and assets sit behind the bearer token
like the OpenAPI document they render.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS = "/docs"
REDOC = "/redoc"
ASSETS = "/docs/assets"
OAUTH2_REDIRECT = "/docs/oauth2-redirect"


def _assets_dir() -> Path:
    # A wheel installs as files on disk, so the resource is a real directory.
    return Path(str(files("fastapi_offline") / "static"))


def install(app: FastAPI) -> None:
    """Serve /docs, /redoc and their assets on ``app`` (made with docs_url=redoc_url=None)."""
    openapi_url = app.openapi_url or "/openapi.json"
    title = app.title
    app.mount(ASSETS, StaticFiles(directory=_assets_dir()), name="docs-assets")

    @app.get(DOCS, include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{title} - Swagger UI",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
            oauth2_redirect_url=OAUTH2_REDIRECT,
        )

    @app.get(OAUTH2_REDIRECT, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(REDOC, include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{title} - ReDoc",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            # Google's fonts would be one more request to the internet;
            # ReDoc falls back to the system's sans-serif.
            with_google_fonts=False,
        )


__all__ = ["ASSETS", "DOCS", "REDOC", "install"]
