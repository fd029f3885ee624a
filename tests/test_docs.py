"""Docs are a tested contract: every setting is documented where users look."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml
from pydantic import BaseModel

from halls.config import Settings

REPO = Path(__file__).resolve().parent.parent


def _fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_fields(ann, f"{prefix}{name}."))
        else:
            out.append(f"{prefix}{name}")
    return out


def _flatten(data: dict, prefix: str = "") -> set[str]:
    out = set()
    for key, value in data.items():
        if isinstance(value, dict):
            out |= _flatten(value, f"{prefix}{key}.")
        else:
            out.add(f"{prefix}{key}")
    return out


def test_sample_config_lists_every_setting() -> None:
    """halls.yaml.sample names every field of Settings, and nothing else."""
    sample = yaml.safe_load((REPO / "halls.yaml.sample").read_text())
    assert _flatten(sample) == set(_fields(Settings))


def test_sample_config_is_a_valid_config(tmp_path: Path) -> None:
    """The sample, as shipped, loads into Settings with the defaults it states."""
    sample = yaml.safe_load((REPO / "halls.yaml.sample").read_text())
    settings = Settings(**sample)
    defaults = Settings()
    for dotted in _fields(Settings):
        if dotted == "data_dir":
            continue  # the sample spells ~; the default is the expanded path
        a, b = settings, defaults
        for part in dotted.split("."):
            a, b = getattr(a, part), getattr(b, part)
        assert a == b, dotted


def test_configuration_doc_names_every_setting() -> None:
    """docs/configuration.md mentions every setting by its dotted name."""
    doc = (REPO / "docs" / "configuration.md").read_text()
    missing = [f for f in _fields(Settings) if f"`{f}`" not in doc]
    assert missing == []


def test_readme_quick_start_matches_ci() -> None:
    """The quick start is `make run` and `make test`; the full suite it names is the one CI runs."""
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in quick.strip().splitlines()] == [
        "make run",
        "make test",
    ]
    assert "`make test-all` is the full suite, the one CI runs" in readme
    assert "\nmake test-all\n" in ci


# Settings this check cannot see read, each with why. Keep it short: a
# setting read by name at run time (getattr) belongs here, a dead one does not.
EXEMPT: frozenset[str] = frozenset()


def _attributes_read(root: Path) -> set[str]:
    """Every attribute name read (``x.name``) anywhere under ``root``, config.py aside."""
    names: set[str] = set()
    for path in root.rglob("*.py"):
        if path.name == "config.py" and path.parent == root:
            continue  # defining a setting is not reading it
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
    return names


def unread_settings(root: Path) -> list[str]:
    """The settings (dotted) whose own name no code under ``root`` reads as an attribute."""
    read = _attributes_read(root)
    return [f for f in _fields(Settings) if f.rsplit(".", 1)[-1] not in read | EXEMPT]


def test_every_setting_is_read_by_some_code() -> None:
    """A setting no code in src/halls reads is dead: remove it, or use it."""
    assert unread_settings(REPO / "src" / "halls") == []


def test_unread_setting_is_caught(tmp_path: Path) -> None:
    """The check fails on a package where a setting is never read (synthetic case)."""
    (tmp_path / "config.py").write_text("x.server.port\n")  # config.py itself does not count
    (tmp_path / "use.py").write_text("def f(s):\n    return s.server.host\n")
    missing = unread_settings(tmp_path)
    assert "server.port" in missing and "server.host" not in missing
