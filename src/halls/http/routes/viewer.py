"""The read-only viewer page, served without a token.

The page holds no data: every API call it makes carries the bearer token
the user typed, so serving the page itself openly gives nothing away.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from halls.viewer import viewer_html

router = APIRouter(tags=["viewer"])

# The page only talks to the server that served it; inline code is the whole
# point of a single file, so 'unsafe-inline' is the one allowance. Data is
# never inserted as HTML, and nothing may be loaded from anywhere else.
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@router.get("/viewer", response_class=HTMLResponse, include_in_schema=False)
def viewer() -> HTMLResponse:
    return HTMLResponse(viewer_html(), headers=_HEADERS)
