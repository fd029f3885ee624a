"""The layering rules of docs/architecture.md, checked by parsing imports.

Every ``import`` counts, wherever it stands: at module level, inside a
function (a deferred import, made so that a server that never dreams does
not load the engines) or under ``if TYPE_CHECKING:``. A deferred import
changes when a module loads, not what it depends on, so a rule broken by one
is still broken, and a cycle through one is still a cycle.

Each rule is a function of the import graph, so each is also run on a
small synthetic graph that breaks it: a rule that cannot fail checks nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

import halls

SRC = Path(halls.__file__).resolve().parent
Graph = Mapping[str, set[str]]

CORE = (
    "halls.service",
    "halls.store",
    "halls.recall",
    "halls.embed",
    "halls.models",
    "halls.errors",
    "halls.storable",
    "halls.redact",
    "halls.consolidate",
    "halls.nlp",
)
ADAPTERS = ("halls.http", "halls.mcp", "halls.cli")
WEB = ("fastapi", "starlette", "click", "mcp", "uvicorn")
# What any adapter may import besides its own package: the service's public
# face (the package, not its modules), the values it speaks in, and the
# root package (for __version__).
# halls.client is how an adapter reaches a running server instead of the
# service in its own process (MCP's remote backend, the CLI when a server answers).
ADAPTER_MAY_IMPORT = (
    "halls.service",
    "halls.models",
    "halls.errors",
    # What a store can hold: the edge refuses it in a body or tool arguments.
    "halls.storable",
    "halls.config",
    "halls.client",
)
ADAPTER_EXTRA = {
    # The viewer is a static page the HTTP adapter serves.
    "halls.http": ("halls.viewer",),
    # The CLI is a composition root: it builds the HTTP app and the MCP
    # server around one Memory, and its bench/install commands live in
    # packages of their own.
    "halls.cli": ("halls.http", "halls.mcp", "halls.bench", "halls.integrations"),
}
# A storage backend is a module or package of halls.store named after it:
# halls.store.sqlite, halls.store.sqlite_schema, halls.store.sqlite.search, ...
BACKENDS = ("sqlite", "postgres")
# Modules outside halls.store allowed to import a backend, each with why.
BACKEND_IMPORTERS: set[str] = set()


def _module_names() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        out[".".join(rel.parts).removesuffix(".__init__")] = path
    return out


def _imports(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The halls modules ``name`` imports; ``from pkg import mod`` counts as ``pkg.mod``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in modules else base)
    return out


def _graph() -> dict[str, set[str]]:
    """Every module of the package and everything it imports (absolute names)."""
    modules = _module_names()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


GRAPH = _graph()


def _within(name: str, prefixes: tuple[str, ...] | set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _halls(name: str) -> bool:
    return name == "halls" or name.startswith("halls.")


# The pair judge is sealed: outside it, only its package's face
# (``halls.consolidate.judge``) is imported, never the modules that read words.
JUDGE = "halls.consolidate.judge"
# Modules outside the judge allowed one of its inner modules, each with why.
JUDGE_INNER_IMPORTERS = {
    # Matching a brief's hint to a cluster compares their content words, left
    # out the judge's stop words (one list, not two copies of it).
    ("halls.consolidate.briefs", "halls.consolidate.judge.lexicon"),
}


# -- the rules, as functions of a graph --


def judge_violations(graph: Graph) -> list[tuple[str, str]]:
    """Imports of the judge's inner modules from outside the judge."""
    return sorted(
        (mod, imp)
        for mod, imps in graph.items()
        if not _within(mod, (JUDGE,))
        for imp in imps
        if _within(imp, (JUDGE,)) and imp != JUDGE and (mod, imp) not in JUDGE_INNER_IMPORTERS
    )


def adapter_violations(graph: Graph) -> list[tuple[str, str]]:
    """Imports of an adapter outside its own package and what it may import."""
    bad = []
    for mod, imps in graph.items():
        own = next((a for a in ADAPTERS if _within(mod, (a,))), None)
        if own is None:
            continue
        allowed = (own, *ADAPTER_MAY_IMPORT, *ADAPTER_EXTRA.get(own, ()))
        for imp in imps:
            if not _halls(imp) or imp == "halls":
                continue
            # The service by its package only: halls.service.records is internal.
            if (
                _within(imp, ("halls.service",))
                and imp != "halls.service"
                or not _within(imp, allowed)
            ):
                bad.append((mod, imp))
    return sorted(bad)


def _is_backend(name: str) -> bool:
    if not name.startswith("halls.store."):
        return False
    first = name.removeprefix("halls.store.").split(".")[0]
    return any(first == b or first.startswith(b + "_") for b in BACKENDS)


def backend_violations(graph: Graph) -> list[tuple[str, str]]:
    """Imports of a storage backend from outside halls.store."""
    return sorted(
        (mod, imp)
        for mod, imps in graph.items()
        if not _within(mod, ("halls.store",)) and mod not in BACKEND_IMPORTERS
        for imp in imps
        if _is_backend(imp)
    )


def layer_violations(graph: Graph, layer: str, forbidden: str) -> list[tuple[str, str]]:
    """Imports of ``forbidden`` (or its modules) by ``layer`` (or its modules)."""
    return sorted(
        (mod, imp)
        for mod, imps in graph.items()
        if _within(mod, (layer,))
        for imp in imps
        if _within(imp, (forbidden,))
    )


def cycles(graph: Graph) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one
    module, and modules that import themselves (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.append(member)
                        if member == node:
                            break
                    if len(comp) > 1 or node in graph[node]:
                        found.append(sorted(comp))
    return sorted(found)


# -- the rules, on the package --


def test_core_never_imports_web_or_adapters() -> None:
    """Service, store, recall, embed and models import no web framework or adapter."""
    bad = [
        (mod, imp)
        for mod, imps in GRAPH.items()
        if _within(mod, CORE)
        for imp in imps
        if _within(imp, WEB) or _within(imp, ADAPTERS)
    ]
    assert bad == []


def test_adapters_import_only_the_service_and_its_values() -> None:
    """HTTP, MCP and CLI import the service package, models, errors and config, nothing deeper."""
    assert adapter_violations(GRAPH) == []


def test_only_the_store_imports_a_backend() -> None:
    """No module outside halls.store imports halls.store.sqlite* or halls.store.postgres*."""
    assert backend_violations(GRAPH) == []


def test_recall_does_not_import_the_store() -> None:
    """halls.recall is pure: the service fetches, recall computes."""
    assert layer_violations(GRAPH, "halls.recall", "halls.store") == []


def test_consolidate_does_not_import_the_service() -> None:
    """halls.consolidate is driven by the service and never reaches back into it."""
    assert layer_violations(GRAPH, "halls.consolidate", "halls.service") == []


def test_the_judge_is_sealed() -> None:
    """The planner, clustering, reconciliation and the LLM engine read judgements: none
    of them imports the judge's word features, rules, word lists or model."""
    assert judge_violations(GRAPH) == []


def test_no_import_cycles() -> None:
    """No cycle among the modules of halls, deferred and TYPE_CHECKING imports included."""
    assert cycles(GRAPH) == []


# -- each rule fails on a graph that breaks it --


@pytest.mark.parametrize(
    ("mod", "imp", "bad"),
    [
        ("halls.http.routes.x", "halls.store.base", True),
        ("halls.mcp.server", "halls.recall.rank", True),
        ("halls.cli.memory", "halls.service.records", True),
        ("halls.http.app", "halls.mcp", True),
        ("halls.cli.memory", "halls.mcp", False),
        ("halls.mcp.server", "halls.service", False),
        ("halls.http.app", "halls", False),
    ],
)
def test_adapter_rule_fails_on_a_violation(mod: str, imp: str, bad: bool) -> None:
    """A synthetic adapter reaching into the store, recall or service internals is reported."""
    assert adapter_violations({mod: {imp}}) == ([(mod, imp)] if bad else [])


@pytest.mark.parametrize(
    "backend", ["halls.store.sqlite", "halls.store.sqlite_search", "halls.store.sqlite.search"]
)
def test_backend_rule_fails_on_a_violation(backend: str) -> None:
    """Both layouts of a backend (flat files, a package) are caught outside halls.store only."""
    graph = {"halls.service.stores": {backend}, "halls.store.factory": {backend}}
    assert backend_violations(graph) == [("halls.service.stores", backend)]
    assert not _is_backend("halls.store.sqlitex") and not _is_backend("halls.store.base")


def test_layer_rule_fails_on_a_violation() -> None:
    """recall -> store and consolidate -> service edges are reported."""
    graph = {"halls.recall.rank": {"halls.store.base"}, "halls.consolidate.x": {"halls.service"}}
    assert layer_violations(graph, "halls.recall", "halls.store") == [
        ("halls.recall.rank", "halls.store.base")
    ]
    assert layer_violations(graph, "halls.consolidate", "halls.service") == [
        ("halls.consolidate.x", "halls.service")
    ]


def test_judge_rule_fails_on_a_violation() -> None:
    """A planner module reading the judge's words is reported; its face is not."""
    graph = {
        "halls.consolidate.heuristic": {
            "halls.consolidate.judge",
            "halls.consolidate.judge.lexical",
        },
        "halls.consolidate.judge.local": {"halls.consolidate.judge.lexical"},
    }
    assert judge_violations(graph) == [
        ("halls.consolidate.heuristic", "halls.consolidate.judge.lexical")
    ]


def test_cycle_rule_fails_on_a_cycle() -> None:
    """A three-module cycle and a self-import are reported; a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert cycles(graph) == [["a", "b", "c"], ["e"]]


def test_deferred_imports_count(tmp_path: Path) -> None:
    """An import inside a function or under TYPE_CHECKING is in the graph."""
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from halls.service import Memory\n"
        "def f():\n    from halls.store import base\n"
    )
    modules = {"halls.store.base": path}
    assert _imports("halls.consolidate.m", path, modules) >= {"halls.service", "halls.store.base"}


# -- other rules --


def test_pure_layers_do_no_io() -> None:
    """halls.recall imports no database, network or clock module."""
    io = ("sqlite3", "httpx", "socket", "time", "requests", "urllib")
    bad = [
        (mod, imp)
        for mod, imps in _raw_imports().items()
        if _within(mod, ("halls.recall",))
        for imp in imps
        if _within(imp, io)
    ]
    assert bad == []


def _raw_imports() -> dict[str, set[str]]:
    """Every module and every top-level name it imports (halls or not)."""
    out: dict[str, set[str]] = {}
    for name, path in _module_names().items():
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        out[name] = names
    return out


def test_only_config_reads_the_environment() -> None:
    """os.environ is read only in halls.config (embed sets offline flags; bench launches)."""
    readers = []
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        if "os.environ" in text or "getenv" in text:
            readers.append(path.relative_to(SRC).as_posix())
    # bench/ starts servers as subprocesses and passes them an environment.
    extra = {r for r in readers if r.startswith("bench/")}
    allowed = {"config.py", "embed/local.py"}
    assert set(readers) - extra <= allowed, set(readers) - extra - allowed


def test_public_api() -> None:
    """halls.__all__ is exactly what the package exports, and each name resolves."""
    assert "Memory" in halls.__all__
    for name in halls.__all__:
        assert hasattr(halls, name), name
    assert sorted(halls.__all__) == halls.__all__
    from halls.service import Memory

    assert halls.Memory is Memory
