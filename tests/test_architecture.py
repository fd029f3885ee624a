"""The layering rules of docs/architecture.md, checked by parsing imports."""

from __future__ import annotations

import ast
from pathlib import Path

import halls

SRC = Path(halls.__file__).resolve().parent
CORE = (
    "halls.service",
    "halls.service_dreams",
    "halls.search",
    "halls.store",
    "halls.recall",
    "halls.embed",
    "halls.models",
    "halls.errors",
    "halls.registry",
    "halls.redact",
    "halls.context",
    "halls.consolidate",
)
ADAPTERS = ("halls.http", "halls.mcp", "halls.cli")
WEB = ("fastapi", "starlette", "click", "mcp", "uvicorn")


def _modules() -> dict[str, set[str]]:
    """Every module of the package and the absolute names it imports."""
    out: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module)
        out[name] = imported
    return out


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_core_never_imports_web_or_adapters() -> None:
    """Service, store, recall, embed and models import no web framework or adapter."""
    bad = [
        (mod, imp)
        for mod, imps in _modules().items()
        if _within(mod, CORE)
        for imp in imps
        if _within(imp, WEB) or _within(imp, ADAPTERS)
    ]
    assert bad == []


def test_adapters_do_not_reach_into_backends_or_each_other() -> None:
    """HTTP, MCP and CLI never import a storage backend or another adapter."""
    bad = []
    for mod, imps in _modules().items():
        own = next((a for a in ADAPTERS if _within(mod, (a,))), None)
        if own is None:
            continue
        for imp in imps:
            if imp.startswith("halls.store.sqlite") or imp.startswith("halls.store.postgres"):
                bad.append((mod, imp))
            other = next((a for a in ADAPTERS if _within(imp, (a,))), None)
            if other is not None and other != own and own != "halls.cli":
                bad.append((mod, imp))
    assert bad == []


def test_pure_layers_do_no_io() -> None:
    """halls.recall imports no database, network or clock module."""
    io = ("sqlite3", "httpx", "socket", "time", "requests", "urllib")
    bad = [
        (mod, imp)
        for mod, imps in _modules().items()
        if _within(mod, ("halls.recall",))
        for imp in imps
        if _within(imp, io)
    ]
    assert bad == []


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
