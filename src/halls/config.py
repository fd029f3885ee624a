"""Settings: the only place that reads the environment or a config file.

Precedence, highest first: explicit arguments (CLI flags), ``HALLS_*``
environment variables (nested fields joined by ``__``, e.g.
``HALLS_SERVER__PORT``), the YAML file (``--config`` or ``HALLS_CONFIG``),
then the defaults below. Every field is documented in ``halls.yaml.sample``;
a test checks that the sample names each one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "halls"


class ServerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=7420, ge=1, le=65535)
    # When set, every endpoint but /healthz requires "Authorization: Bearer <token>".
    bearer_token: SecretStr | None = None
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    cors_origins: list[str] = Field(default_factory=list)


class ShortSettings(BaseModel):
    ttl_seconds: int = Field(default=691200, ge=60)


class EmbedderSettings(BaseModel):
    kind: Literal["local", "openai"] = "local"
    # local: a sentence-transformers model directory, or "all-MiniLM-L6-v2" for
    # the packaged copy; openai: the model name sent to the endpoint.
    model: str = "all-MiniLM-L6-v2"
    base_url: str | None = None
    api_key: SecretStr | None = None
    batch_size: int = Field(default=64, ge=1, le=4096)
    timeout_seconds: float = Field(default=30.0, gt=0)


class RecallSettings(BaseModel):
    rrf_k: int = Field(default=60, ge=1)
    candidates: int = Field(default=100, ge=10, le=5000)
    tier_weight_short: float = 1.0
    tier_weight_near: float = 0.9
    tier_weight_long: float = 0.8
    evidence_gain: float = Field(default=0.25, ge=0)
    demoted_factor: float = Field(default=0.1, ge=0, le=1)
    recency_weight: float = Field(default=0.2, ge=0, le=1)
    recency_half_life_days: float = Field(default=30.0, gt=0)


class StorageSettings(BaseModel):
    backend: Literal["sqlite"] = "sqlite"
    synchronous: Literal["FULL", "NORMAL"] = "FULL"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="HALLS_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    data_dir: Path = Field(default_factory=_default_data_dir)
    default_store: str = "default"
    server: ServerSettings = Field(default_factory=ServerSettings)
    short: ShortSettings = Field(default_factory=ShortSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlSource(settings_cls))


class _YamlSource(PydanticBaseSettingsSource):
    """Reads the file named by HALLS_CONFIG (set by ``load_settings``)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = os.environ.get("HALLS_CONFIG")
        if not path:
            return {}
        return read_yaml(Path(path))


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError as exc:
        raise ValueError(f"config file not found: {path.name}") from exc
    except yaml.YAMLError as exc:
        raise ValueError(f"config file {path.name} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"config file {path.name} must hold a mapping at the top")
    return data


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Build Settings from defaults, a YAML file, the environment and overrides.

    ``overrides`` take nested dicts (``server={"port": 1}``) and win over all.
    """
    if config is not None:
        os.environ["HALLS_CONFIG"] = str(config)
    clean = {k: v for k, v in overrides.items() if v is not None}
    return Settings(**clean)


__all__ = [
    "EmbedderSettings",
    "RecallSettings",
    "ServerSettings",
    "Settings",
    "ShortSettings",
    "StorageSettings",
    "load_settings",
]
