"""load_settings: the config file is passed explicitly, never through the process environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from halls import Settings, load_settings


def test_config_file_does_not_leak_into_the_environment_or_later_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load with a file leaves os.environ alone; the next load without one uses defaults."""
    monkeypatch.delenv("HALLS_CONFIG", raising=False)
    first = tmp_path / "a.yaml"
    first.write_text("server:\n  port: 7001\n")
    second = tmp_path / "b.yaml"
    second.write_text("server:\n  port: 7002\n")
    assert load_settings(first).server.port == 7001
    assert "HALLS_CONFIG" not in os.environ
    assert load_settings(second).server.port == 7002
    assert load_settings().server.port == Settings().server.port


def test_halls_config_still_names_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HALLS_CONFIG set by the user is read; an explicit file wins over it."""
    env_file = tmp_path / "env.yaml"
    env_file.write_text("server:\n  port: 7003\n")
    given = tmp_path / "given.yaml"
    given.write_text("server:\n  port: 7004\n")
    monkeypatch.setenv("HALLS_CONFIG", str(env_file))
    assert load_settings().server.port == 7003
    assert load_settings(given).server.port == 7004


def test_overrides_and_environment_win_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Precedence: overrides, then HALLS_* variables, then the file."""
    path = tmp_path / "c.yaml"
    path.write_text("server:\n  port: 7005\ndefault_store: fromfile\n")
    monkeypatch.setenv("HALLS_DEFAULT_STORE", "fromenv")
    settings = load_settings(path, data_dir=tmp_path)
    assert settings.default_store == "fromenv"
    assert settings.server.port == 7005
    assert settings.data_dir == tmp_path
    assert isinstance(settings, Settings)
