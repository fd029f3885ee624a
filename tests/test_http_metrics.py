"""GET /metrics: Prometheus exposition from a live server, parsed with prometheus_client."""

from __future__ import annotations

from collections import defaultdict

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

import halls
from halls.http.metrics import METHODS
from halls.models import new_id
from http_helpers import assert_error

TOKEN = "metrics-scrape-token-1234"
Samples = dict[str, list[Sample]]


def scrape(c: httpx.Client) -> Samples:
    """Every sample of one scrape, by sample name (e.g. ``halls_http_requests_total``)."""
    r = c.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain"), r.headers["content-type"]
    out: Samples = defaultdict(list)
    for family in text_string_to_metric_families(r.text):
        for sample in family.samples:
            out[sample.name].append(sample)
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels`` (0 if none)."""
    return sum(
        s.value
        for s in samples.get(name, [])
        if all(s.labels.get(k) == v for k, v in labels.items())
    )


def requests(samples: Samples, method: str, route: str, status: str) -> float:
    return value(samples, "halls_http_requests_total", method=method, route=route, status=status)


def test_requests_are_counted_by_method_route_template_and_status(server, store_name) -> None:
    """A write, a read by id, a search, a 404, a 422 and a 405 each add one to their series."""
    c = server.client()
    before = scrape(c)
    r = c.post("/short", params={"store": store_name}, json={"content": "the boiler hums at 3am"})
    assert r.status_code == 201, r.text
    item_id = r.json()["id"]
    assert c.get(f"/short/{item_id}", params={"store": store_name}).status_code == 200
    r = c.post("/search", params={"store": store_name}, json={"query": "boiler noise"})
    assert r.status_code == 200, r.text
    assert_error(c.get(f"/nowhere/{item_id}"), 404, "not_found")
    assert_error(c.post("/short", params={"store": store_name}, json={}), 422, "invalid_request")
    assert_error(c.request("PROPFIND", "/stats"), 405, "method_not_allowed")
    after = scrape(c)

    expected = [
        ("POST", "/short", "201"),
        ("GET", "/short/{id}", "200"),
        ("POST", "/search", "200"),
        ("GET", "other", "404"),
        ("POST", "/short", "422"),
        # A method halls never serves is "other"; the path still names its route.
        ("other", "/stats", "405"),
    ]
    for method, route, status in expected:
        delta = requests(after, method, route, status) - requests(before, method, route, status)
        assert delta == 1, (method, route, status, delta)
    labels = [s.labels for s in after["halls_http_requests_total"]]
    assert not [lab for lab in labels if item_id in lab["route"] or "nowhere" in lab["route"]]
    # Other tests share this server and send PUT or PATCH to get 405s; a
    # method outside the standard ones (PROPFIND) never becomes a label.
    assert {lab["method"] for lab in labels} <= METHODS | {"other"}
    assert "PROPFIND" not in {lab["method"] for lab in labels}


def test_request_duration_histogram_by_route(server, store_name) -> None:
    """Each request lands in the route's histogram; buckets run from 1 ms to 10 s."""
    c = server.client()
    assert c.post("/stores", json={"name": store_name}).status_code == 201
    before = scrape(c)
    for query in ("first", "second"):
        r = c.post("/search", params={"store": store_name}, json={"query": query})
        assert r.status_code == 200, r.text
    after = scrape(c)

    name = "halls_http_request_duration_seconds"
    count = value(after, f"{name}_count", route="/search")
    assert count - value(before, f"{name}_count", route="/search") == 2
    buckets = {
        s.labels["le"]: s.value for s in after[f"{name}_bucket"] if s.labels["route"] == "/search"
    }
    assert buckets["+Inf"] == count
    assert float(min(buckets, key=float)) == 0.001
    assert max(float(le) for le in buckets if le != "+Inf") == 10.0
    # Cumulative buckets never decrease.
    ordered = [buckets[le] for le in sorted(buckets, key=float)]
    assert ordered == sorted(ordered)
    assert value(after, f"{name}_sum", route="/search") > 0
    assert (
        "route" in after[f"{name}_count"][0].labels
        and "status" not in after[f"{name}_count"][0].labels
    )


def test_tier_gauges_match_stats(server, store_name) -> None:
    """halls_memories{store, tier} equals GET /stats' counts for an open store."""
    c = server.client()
    params = {"store": store_name}
    for content in ("the cat is called Miso", "the dog is called Pico"):
        assert c.post("/short", params=params, json={"content": content}).status_code == 201
    r = c.post("/near", params=params, json={"intent": "buy cat food", "trigger_type": "session"})
    assert r.status_code == 201, r.text
    stats = c.get("/stats", params=params).json()["counts"]
    samples = scrape(c)

    for tier in ("short", "near", "long"):
        got = value(samples, "halls_memories", store=store_name, tier=tier)
        assert got == stats[tier], (tier, got, stats)
    assert (stats["short"], stats["near"], stats["long"]) == (2, 1, 0)
    open_stores = {s.labels["store"] for s in samples["halls_memories"]}
    assert store_name in open_stores
    assert value(samples, "halls_stores_open") == len(open_stores)


def test_build_info_names_the_version(server) -> None:
    """halls_build_info is 1, labelled with the running version."""
    samples = scrape(server.client())
    assert [(s.labels, s.value) for s in samples["halls_build_info"]] == [
        ({"version": halls.__version__}, 1.0)
    ]


def test_consolidation_runs_counted_by_outcome(server, store_name) -> None:
    """A dry run over HTTP adds one to outcome planned and to no other outcome."""
    c = server.client()
    assert c.post("/short", params={"store": store_name}, json={"content": "x marks"}).status_code
    before = scrape(c)
    r = c.post("/consolidate/run", params={"store": store_name}, json={"dry_run": True})
    assert r.status_code == 200, r.text
    after = scrape(c)

    name = "halls_consolidation_runs_total"
    outcomes = {s.labels["outcome"] for s in after[name]}
    assert {"done", "planned", "failed", "busy"} <= outcomes
    for outcome in outcomes:
        delta = value(after, name, outcome=outcome) - value(before, name, outcome=outcome)
        assert delta == (1 if outcome == "planned" else 0), (outcome, delta)


def test_mcp_requests_count_under_mcp(server) -> None:
    """A request to the MCP endpoint counts under route /mcp, whatever it answers."""
    c = server.client()
    before = scrape(c)
    r = c.post("/mcp", content=b"not json-rpc", headers={"Content-Type": "application/json"})
    after = scrape(c)

    status = str(r.status_code)
    assert requests(after, "POST", "/mcp", status) - requests(before, "POST", "/mcp", status) == 1


def test_metrics_need_the_token(server_factory) -> None:
    """With a bearer token, /metrics is 401 without it, and the refusal is itself counted."""
    live = server_factory(env={"HALLS_SERVER__BEARER_TOKEN": TOKEN})
    anonymous = live.client(token=None)
    assert_error(anonymous.get("/metrics"), 401, "unauthorized")
    assert_error(live.client(token="wrong-token").get("/metrics"), 401, "unauthorized")
    # Refused before routing, yet still labelled by its template.
    assert_error(anonymous.get(f"/short/{new_id('short')}"), 401, "unauthorized")
    samples = scrape(live.client())
    assert requests(samples, "GET", "/metrics", "401") == 2
    assert requests(samples, "GET", "/short/{id}", "401") == 1
    assert value(samples, "halls_build_info", version=halls.__version__) == 1


def test_metrics_disabled_is_404(server_factory) -> None:
    """server.metrics_enabled false: /metrics is a 404 in the error shape, and not in OpenAPI."""
    live = server_factory(env={"HALLS_SERVER__METRICS_ENABLED": "false"})
    c = live.client()
    assert_error(c.get("/metrics"), 404, "not_found")
    assert c.get("/stats").status_code == 200
    assert "/metrics" not in c.get("/openapi.json").json()["paths"]


def test_requests_print_no_console_line_unless_the_access_log_is_asked_for(
    server_factory, store_name
) -> None:
    """Requests are counted here, not printed: server.access_log turns uvicorn's lines on."""
    quiet = server_factory()
    loud = server_factory(env={"HALLS_SERVER__ACCESS_LOG": "true"})
    for live in (quiet, loud):
        c = live.client()
        r = c.post("/short", params={"store": store_name}, json={"content": "the boiler is fixed"})
        assert r.status_code == 201, r.text
        r = c.post("/search", params={"store": store_name}, json={"query": "the boiler"})
        assert r.status_code == 200 and r.json()["results"], r.text
        assert c.get("/stats", params={"store": store_name}).status_code == 200
    quiet.stop()
    loud.stop()
    assert '"POST /search' not in quiet.log() and '"GET /stats' not in quiet.log(), quiet.log()
    assert "halls: serving on" in quiet.log(), quiet.log()
    assert '"POST /search' in loud.log() and '"GET /stats' in loud.log(), loud.log()
