"""The names a setting may go by, and the misspelt ones, each with its nearest valid name.

pydantic ignores an unknown key of a nested section and pydantic-settings
ignores an unknown ``HALLS_*`` variable, so ``server: {prot: 7421}`` or
``HALLS_SERVER__PROT=7421`` would leave the port at its default without a
word. ``halls.config`` refuses such a key in the config file; the CLI warns
of such a variable (the environment also holds variables meant for other
halls versions or tools, which must not stop a server).
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

# Old names still read (see StorageSettings._old_synchronous).
_ALIASES = ("storage.synchronous",)
# HALLS_* variables that are not settings: read by the CLI (click envvar=),
# by load_settings (HALLS_CONFIG) or by the test suite.
OTHER_ENV = (
    "HALLS_CONFIG",
    "HALLS_TOKEN",
    "HALLS_PASSPHRASE",
    "HALLS_UPDATE_SCREENSHOTS",
    "HALLS_TEST_MIGRATE_N",
)
ENV_PREFIX = "HALLS_"
ENV_DELIMITER = "__"


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model class a field holds (directly, optionally or in a list), and if in a list."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin = typing.get_origin(annotation)
    for arg in typing.get_args(annotation):
        model, _ = _model_of(arg)
        if model is not None:
            return model, origin is list
    return None, False


def setting_names(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every dotted name of ``model``'s settings, sections too (``server``, ``server.port``)."""
    for name, field in model.model_fields.items():
        dotted = f"{prefix}{name}"
        yield dotted
        inner, in_list = _model_of(field.annotation)
        if inner is not None and not in_list:
            yield from setting_names(inner, f"{dotted}.")


def _nearest(name: str, valid: list[str], prefix: str = "") -> str:
    """The hint "; did you mean X?" for the valid name nearest ``name`` ("" if none is near).

    Compared without ``prefix``, which every name shares and which would
    make any two names look alike.
    """
    short = [v.removeprefix(prefix) for v in valid]
    close = difflib.get_close_matches(name.removeprefix(prefix), short, n=1, cutoff=0.6)
    return f"; did you mean {prefix}{close[0]}?" if close else ""


def unknown_keys(data: Mapping[str, Any], model: type[BaseModel], prefix: str = "") -> list[str]:
    """One message per key of ``data`` (a parsed config file) that no setting of ``model`` has."""
    out: list[str] = []
    fields = model.model_fields
    valid = [f"{prefix}{n}" for n in fields] + [a for a in _ALIASES if a.startswith(prefix)]
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in fields:
            if dotted not in _ALIASES:
                out.append(f"unknown setting {dotted}{_nearest(dotted, valid, prefix)}")
            continue
        inner, in_list = _model_of(fields[key].annotation)
        if inner is None:
            continue
        if isinstance(value, Mapping) and not in_list:
            out += unknown_keys(value, inner, f"{dotted}.")
        elif isinstance(value, list) and in_list:
            for n, item in enumerate(value):
                if isinstance(item, Mapping):
                    out += unknown_keys(item, inner, f"{dotted}[{n}].")
    return out


def env_names(model: type[BaseModel]) -> list[str]:
    """Every ``HALLS_*`` variable that sets a setting of ``model`` (nested: joined by ``__``)."""
    dotted = [*setting_names(model), *_ALIASES]
    return [ENV_PREFIX + d.replace(".", ENV_DELIMITER).upper() for d in dotted]


def unknown_env(environ: Mapping[str, str], model: type[BaseModel]) -> list[str]:
    """One message per ``HALLS_*`` variable of ``environ`` that sets nothing."""
    valid = env_names(model)
    known = set(valid) | set(OTHER_ENV)
    out = []
    for name in sorted(environ):
        # pydantic-settings reads names case-insensitively.
        upper = name.upper()
        if upper.startswith(ENV_PREFIX) and upper not in known:
            hint = _nearest(upper, valid, ENV_PREFIX)
            out.append(f"{name} is not a halls setting{hint}")
    return out


__all__ = ["OTHER_ENV", "env_names", "setting_names", "unknown_env", "unknown_keys"]
