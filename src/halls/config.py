"""Settings: the only place that reads the environment or a config file.

Precedence, highest first: explicit arguments (CLI flags), ``HALLS_*``
environment variables (nested fields joined by ``__``, e.g.
``HALLS_SERVER__PORT``), the YAML file (``--config`` or ``HALLS_CONFIG``),
then the defaults below. Every field is documented in ``halls.yaml.sample``;
a test checks that the sample names each one.

One concept over 500 lines: the settings tree, section by section, each
field with its default and why. It is what ``halls.yaml.sample`` and
docs/configuration.md mirror; split, one root model would import every
section back and the unknown-key check would have to walk the modules.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    IPvAnyNetwork,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from halls.config_keys import unknown_env, unknown_keys


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "halls"


def agent_env_dir(var: str, default: Path) -> Path:
    """An agent's directory named by an environment variable (CODEX_HOME, APPDATA,
    XDG_CONFIG_HOME), for `halls install`; read here, where halls reads its environment."""
    return Path(os.environ.get(var) or default)


class TokenSettings(BaseModel):
    """One entry of ``server.tokens``: a bearer token and what it may do."""

    model_config = ConfigDict(extra="forbid")

    # Named in the audit log and the server log; the token itself never is.
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    # The token, or "sha256:<64 hex digits>" (its SHA-256), so that the config
    # file need not hold the secret itself.
    token: SecretStr
    # The stores it opens: a list of names, or "*" for every store.
    stores: list[str] | Literal["*"] = "*"
    # Reads only: every write, deletion and consolidation answers 403.
    read_only: bool = False
    # May delete (journal events, facts, its stores, forget-about) and read the audit log.
    admin: bool = False

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr) -> SecretStr:
        raw = value.get_secret_value()
        if raw.startswith("sha256:"):
            if not re.fullmatch(r"[0-9a-f]{64}", raw[7:]):
                raise ValueError("a sha256: token must be followed by 64 lowercase hex digits")
        elif len(raw) < 16:
            raise ValueError("a token must be at least 16 characters")
        return value

    @field_validator("stores")
    @classmethod
    def _store_names(cls, value: list[str] | str) -> list[str] | str:
        if isinstance(value, list):
            bad = [n for n in value if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", n)]
            if bad:
                raise ValueError(f"invalid store name {bad[0][:70]!r}")
        return value


class ServerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(default=7420, ge=1, le=65535)
    # When set, every endpoint but /healthz requires "Authorization: Bearer <token>".
    # This token opens every store, as an admin (token id "bearer_token").
    bearer_token: SecretStr | None = None
    # More tokens, each scoped to some stores (see TokenSettings).
    tokens: list[TokenSettings] = Field(default_factory=list)
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    # POST /import streams its archive to a temporary file instead: its own limit.
    max_import_bytes: int = Field(default=1024 * 1024 * 1024, ge=1024)
    cors_origins: list[str] = Field(default_factory=list)
    # Requests that read or write records take turns on this many slots,
    # reads first (halls.http.lanes); 0: each on a thread of its own.
    request_slots: int = Field(default=2, ge=0, le=64)
    # GET /metrics (Prometheus text format), behind the bearer token like the API.
    metrics_enabled: bool = True
    # Token bucket per client (the bearer token, else the IP); 0 = off, since a
    # local single-user server and the benchmarks send thousands a minute.
    rate_limit_per_minute: int = Field(default=0, ge=0)
    rate_limit_burst: int = Field(default=60, ge=1)
    # A line per request on the console (uvicorn's access log). Off: hooks and
    # agents call on every prompt, /metrics counts requests, the audit log
    # records what touched memory; and the line costs ~0.3 ms of a search.
    access_log: bool = False
    # Peers (addresses or networks) whose X-Forwarded-For names the client;
    # empty: the header is ignored, so a client cannot pick its own address.
    trusted_proxies: list[IPvAnyNetwork] = Field(default_factory=list)
    # HTTPS: a PEM certificate (chain) and its unencrypted key; the key may
    # be in the certificate file instead.
    tls_certfile: Path | None = None
    tls_keyfile: Path | None = None

    @model_validator(mode="after")
    def _coherent(self) -> ServerSettings:
        if self.tls_keyfile is not None and self.tls_certfile is None:
            raise ValueError("server.tls_keyfile is set without server.tls_certfile")
        ids = [t.id for t in self.tokens]
        if self.bearer_token is not None:
            ids.append("bearer_token")
        dup = next((i for i in ids if ids.count(i) > 1), None)
        if dup is not None:
            raise ValueError(f"token id {dup!r} is used twice")
        return self

    @property
    def auth_enabled(self) -> bool:
        return self.bearer_token is not None or bool(self.tokens)


class ShortSettings(BaseModel):
    ttl_seconds: int = Field(default=691200, ge=60)
    # An entry's TTL is multiplied by importance_ttl_factor ** (2 x importance - 1)
    # (halls.importance): a critical entry lives this many times as long, a
    # low one half as long (with the default 4); unset is the plain TTL.
    importance_ttl_factor: float = Field(default=4.0, ge=1, le=100)


class ScopeSettings(BaseModel):
    # A turn is one write (short-term entries, an open loop, journal events;
    # halls.scopes). An open scope closes when this many turns have passed
    # since the last that wrote for it...
    idle_turns: int = Field(default=6, ge=1, le=10000)
    # ...or when this many turns since then have written for other scopes.
    switch_turns: int = Field(default=3, ge=1, le=10000)


class EmbedderSettings(BaseModel):
    kind: Literal["local", "openai"] = "local"
    # local: which runtime. "onnx" (default, no torch): the packaged int8
    # all-MiniLM-L6-v2. "torch": sentence-transformers (the halls[torch] extra),
    # float32/bfloat16, and any local model directory.
    backend: Literal["onnx", "torch"] = "onnx"
    # local: "all-MiniLM-L6-v2" for the packaged copy, or (torch) a
    # sentence-transformers model directory; openai: the model name sent.
    model: str = "all-MiniLM-L6-v2"
    base_url: str | None = None
    api_key: SecretStr | None = None
    batch_size: int = Field(default=64, ge=1, le=4096)
    timeout_seconds: float = Field(default=30.0, gt=0)
    # local: the arithmetic of the model. "auto" is bfloat16 on a CPU that
    # computes it natively (AVX512-BF16 or AMX), else float32.
    precision: Literal["auto", "float32", "bfloat16"] = "auto"
    # local: threads for a batch of texts; 0 = one per core this process may
    # use. A single query always runs on one thread.
    threads: int = Field(default=0, ge=0, le=256)


EdgeKind = Literal["mentions", "derived_from", "co_recall"]
_DEFAULT_EDGES: tuple[EdgeKind, ...] = ("mentions", "derived_from")


class RecallSettings(BaseModel):
    rrf_k: int = Field(default=60, ge=1)
    candidates: int = Field(default=100, ge=10, le=5000)
    tier_weight_short: float = 1.0
    tier_weight_near: float = 0.9
    tier_weight_long: float = 0.8
    # Raw journal turns, searched only when asked for: below the kept tiers.
    tier_weight_journal: float = 0.7
    evidence_gain: float = Field(default=0.25, ge=0)
    demoted_factor: float = Field(default=0.1, ge=0, le=1)
    # Strength (halls.recall.strength): a hit's score is multiplied by
    # (1 - recency_weight) + recency_weight x strength; strength halves every
    # recency_half_life_days since last use, stretched by recalls and
    # confirmations; superseded and demoted facts fade superseded_decay times
    # faster; a fact confirmed strength_floor_evidence times keeps at least
    # strength_floor.
    recency_weight: float = Field(default=0.2, ge=0, le=1)
    recency_half_life_days: float = Field(default=30.0, gt=0)
    superseded_decay: float = Field(default=4.0, ge=1)
    strength_floor: float = Field(default=0.5, ge=0, le=1)
    strength_floor_evidence: int = Field(default=5, ge=1)
    # Importance (halls.importance): a hit's score is multiplied by
    # 1 + importance_weight x (2 x importance - 1), in [1 - w, 1 + w]; the
    # strength half-life by importance_half_life_factor ** (2 x importance - 1).
    # An unset importance changes neither.
    importance_weight: float = Field(default=0.2, ge=0, le=0.5)
    importance_half_life_factor: float = Field(default=4.0, ge=1, le=100)
    # Reinforcement: a memory opened by id or shown in a /context block
    # counts as used (a search's hits do not: issue 52); uses are written off the
    # request path, every reinforce_flush_seconds. reinforce_top: the best
    # hits of a search linked pairwise when graph_edges lists co_recall.
    reinforce_top: int = Field(default=3, ge=0, le=100)
    reinforce_flush_seconds: float = Field(default=5.0, gt=0, le=3600)
    # How the BM25 and dense lists become one relevance: "score" (each list's
    # scores over its best, mixed by bm25_weight) or "rrf" (rank fusion, rrf_k).
    fusion: Literal["score", "rrf"] = "score"
    bm25_weight: float = Field(default=0.5, ge=0, le=1)
    # Context (retriever "full"): a memory gains context_weight x the best
    # relevance of the memories written up to context_radius places before or
    # after it, over the distance; and episode_weight x the best relevance in
    # its episode (memories of a tier within episode_gap_seconds, chained).
    context_weight: float = Field(default=0.35, ge=0)
    context_radius: int = Field(default=2, ge=0, le=10)
    context_candidates: int = Field(default=50, ge=0, le=1000)
    episode_weight: float = Field(default=0.3, ge=0)
    episode_gap_seconds: float = Field(default=1800.0, ge=0)
    # A memory whose content starts with a speaker label ("Caroline: ...")
    # gains speaker_weight when the query names that speaker.
    speaker_weight: float = Field(default=0.2, ge=0)
    # A memory that happened within a date the query names ("on 13 October
    # 2023", "in July 2023", "in June") gains time_weight; outside the window
    # the bonus halves every time_half_life_days.
    time_weight: float = Field(default=0.2, ge=0)
    time_half_life_days: float = Field(default=7.0, gt=0)
    # Only this many of the most relevant candidates (at least 3 x n_results)
    # are read from the store and weighed by tier, evidence and recency.
    weigh_candidates: int = Field(default=100, ge=1, le=5000)
    # A question asking for a time ("When did ...", "How long ago ...") gains
    # when_weight on memories that say when ("yesterday", "last May", "2022").
    when_weight: float = Field(default=0.2, ge=0)
    # Pseudo-relevance feedback: the content words of the feedback_docs best
    # hits, weighed by how many of them hold the word x its rarity (at most
    # feedback_terms; none held by more than feedback_max_share of the store),
    # form a second full-text query; a memory gains feedback_weight x its
    # score there over the best.
    feedback_weight: float = Field(default=0.2, ge=0)
    feedback_docs: int = Field(default=3, ge=1, le=50)
    feedback_terms: int = Field(default=10, ge=1, le=32)
    feedback_max_share: float = Field(default=0.01, gt=0, le=1)
    # Both searches favour short memories, though longer ones more often hold
    # the answer and a bare question holds none: a memory gains
    # substance_weight x min(1, its distinct content words outside questions
    # / substance_words), so a memory that says something of its own wins a tie.
    substance_weight: float = Field(default=0.2, ge=0)
    substance_words: int = Field(default=20, ge=1, le=1000)
    # Associations (halls.recall.spread): the graph_seeds best hits pass their
    # relevance along the graph's edges of the kinds in graph_edges
    # ("mentions": a name both memories mention; "derived_from": a fact and
    # what it was distilled from; "co_recall": returned together near the top
    # of a search, written only when listed), over graph_hops hops, shared
    # out by ACT-R's fan effect: a node with more than graph_fan_out edges of
    # a kind passes nothing; a memory gains graph_weight x its activation.
    graph_weight: float = Field(default=0.2, ge=0)
    graph_seeds: int = Field(default=5, ge=1, le=100)
    graph_hops: int = Field(default=1, ge=0, le=3)
    graph_fan_out: int = Field(default=20, ge=1, le=1000)
    graph_edges: list[EdgeKind] = Field(default_factory=lambda: list(_DEFAULT_EDGES))


class ContextSettings(BaseModel):
    # The hot set: the facts every /context block shows (halls.service.hot);
    # 0 shows none, and facts come only as recalls.
    hot_tokens: int = Field(default=200, ge=0, le=8000)


class SqliteSettings(BaseModel):
    """Settings only the SQLite backend reads."""

    # FULL fsyncs each commit: an acknowledged write survives a power loss.
    synchronous: Literal["FULL", "NORMAL"] = "FULL"


class PostgresSettings(BaseModel):
    """Settings only the PostgreSQL backend reads."""

    # Connections each process may hold (a pool); one more is taken while
    # this process runs a consolidation (it holds the advisory lock).
    pool_size: int = Field(default=8, ge=1, le=1000)


class StorageSettings(BaseModel):
    """Which backend holds the stores (``halls.store.open_backend``), and its settings."""

    backend: Literal["sqlite", "postgres"] = "sqlite"
    # The PostgreSQL connection string (postgresql://user:pass@host:port/db);
    # required with backend postgres.
    dsn: str | None = Field(default=None, repr=False)
    sqlite: SqliteSettings = Field(default_factory=SqliteSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    # At most this many stores stay open in a process (file descriptors,
    # connections, in-memory indexes); the least recently used idle one is
    # closed to open another, and reopened when it is used again.
    max_open_stores: int = Field(default=64, ge=1, le=100_000)
    # A budget for the in-memory search indexes of the open stores (about
    # 2.1 MB per 1,000 memories): past it, least recently used idle stores
    # are closed, never the one in use.
    max_index_mb: int = Field(default=1024, ge=16, le=1_048_576)
    # Encryption at rest (SQLite only: SQLCipher, the halls[encryption] extra).
    # A secret: never logged, shown in /stats or put in an error.
    encryption_key: SecretStr | None = None

    @field_validator("encryption_key")
    @classmethod
    def _key_not_empty(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and not v.get_secret_value():
            raise ValueError("must not be empty (unset it for no encryption)")
        return v

    @model_validator(mode="after")
    def _postgres_settings(self) -> StorageSettings:
        if self.backend != "postgres":
            return self
        if not self.dsn:
            raise ValueError(
                "storage.backend postgres needs storage.dsn "
                "(HALLS_STORAGE__DSN=postgresql://user:password@host:5432/db)"
            )
        if self.encryption_key is not None:
            # SQLCipher encrypts SQLite files; PostgreSQL's data is encrypted
            # by the server's disk or provider. Refused rather than ignored, so
            # nobody believes their PostgreSQL rows are encrypted by halls.
            raise ValueError(
                "storage.encryption_key encrypts SQLite store files only; with "
                "storage.backend postgres unset it (encrypt PostgreSQL's disk instead)"
            )
        return self

    @model_validator(mode="before")
    @classmethod
    def _old_synchronous(cls, data: Any) -> Any:
        # storage.synchronous (until 0.x) is storage.sqlite.synchronous now;
        # the old name keeps working (file and HALLS_STORAGE__SYNCHRONOUS).
        if isinstance(data, dict) and "synchronous" in data:
            data = dict(data)
            old = data.pop("synchronous")
            sqlite = dict(data.get("sqlite") or {})
            sqlite.setdefault("synchronous", old)
            data["sqlite"] = sqlite
        return data


class McpSettings(BaseModel):
    # Serve MCP (streamable HTTP) on the same server, behind the same bearer token.
    enabled: bool = True
    path: str = Field(default="/mcp", pattern=r"^/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$")
    # The tools served (stdio and HTTP): "agent", the few an agent needs on
    # every turn (each listed tool's schema costs it tokens on every turn), or
    # "all", adding the store's upkeep and the admin's tools. Either way a
    # caller is listed only the tools its token allows.
    tools: Literal["agent", "all"] = "agent"


class ConsolidatorSettings(BaseModel):
    """The consolidator ("dreaming"): when it runs and how it decides."""

    # thread: a background thread in `halls serve` runs each store when due.
    # external: only on request (POST /consolidate/run, `halls consolidate`),
    # e.g. from cron or a systemd timer, or when several servers share a store.
    mode: Literal["thread", "external"] = "thread"
    # 72000 s = 20 h, deliberately not 24: the run window drifts across the
    # day, so it does not always fall in the same busy (or idle) hour.
    interval_seconds: int = Field(default=72000, ge=60)
    # How often the thread checks whether a store is due.
    poll_seconds: float = Field(default=60.0, gt=0, le=3600)
    # heuristic: no LLM (embedding clusters, keyed reconciliation, regex PII).
    # llm: an OpenAI-compatible chat endpoint writes and reconciles facts.
    engine: Literal["heuristic", "llm"] = "heuristic"
    # A cluster is promoted when its evidence reaches this (distinct days
    # count 1, further moments on a day 1/2, repeats within a minute once).
    promote_min_evidence: float = Field(default=2.0, ge=1.0)
    # A lasting statement (a state, a habit, a standing rule) the user tells an
    # assistant is promoted at its first mention: told once, it is meant to be
    # kept ("dont touch vendor/", "our dog Biscuit is a beagle"). Conversations
    # between people and notes still need promote_min_evidence.
    promote_told: bool = True
    # A cluster with an entry its writer marked at least this important
    # (halls.importance: high 0.75) is promoted without recurring; None: never.
    promote_min_importance: float | None = Field(default=0.75, ge=0, le=1)
    # The models a run loads (spaCy's pipeline, the cross-encoder: ~370 MB) are
    # let go when no run has started for this long; null keeps them loaded.
    models_idle_seconds: float | None = Field(default=600.0, gt=0)
    # Cosine similarity above which short-term entries cluster unless the pair
    # judge reads a change (all-MiniLM-L6-v2 paraphrases: ~0.85-0.95).
    cluster_threshold: float = Field(default=0.75, gt=0, le=1)
    # Below this two statements are unrelated; above it the pair judge decides
    # (a candidate against its nearest facts; clustering reads pairs down to
    # cluster_threshold - 0.35 at the lowest). 0.3: a new value said in other
    # words often sits under 0.4 from the fact it replaces; the judge, not the
    # cosine, tells it from another fact (docs/benchmarks.md, session 28).
    related_threshold: float = Field(default=0.3, gt=0, le=1)
    # The local judge's cross-encoder reads at most this many statement pairs
    # a run while clustering, and as many while reconciling (those the words
    # alone read least surely first; ~2 ms a pair on one core); the rest are
    # read by their words alone. 0: never, the words alone (faster; joins
    # fewer rewordings). Measured in docs/benchmarks.md (sessions 25-26).
    cross_pairs: int = Field(default=1500, ge=0)
    # Repeats closer together than this count as one moment of evidence.
    burst_seconds: float = Field(default=60.0, ge=0)
    # A run retires an active, unpinned long-term fact whose strength
    # (halls.recall.strength) fell below this; 0 never retires.
    retire_below: float = Field(default=0.05, ge=0, lt=1)
    # How far back a run reads the journal and briefs' summaries for
    # statements (events a fact already derives from are skipped): 8 days,
    # the lifetime of a short-term entry, so that a statement made once a
    # day is still seen when it is made again.
    journal_window_seconds: int = Field(default=691200, ge=0)
    # llm engine: the endpoint's base URL (POST {model_url}/chat/completions),
    # e.g. http://127.0.0.1:11434/v1 for ollama, http://127.0.0.1:8080/v1 for llama.cpp.
    model_url: str | None = None
    model: str = "qwen2.5:3b-instruct"
    api_key: SecretStr | None = None
    timeout_seconds: float = Field(default=60.0, gt=0)
    # The most tokens a model may write per answer (sent as max_tokens): the
    # longest good answer, a batch of 16 pair labels, is ~120 tokens; a model
    # that rambles or echoes the prompt is cut off there, and the cut answer
    # is a bad one (retried once, then the local decision).
    max_tokens: int = Field(default=512, ge=16, le=8192)
    # At most this many clusters per run go to the model; the rest get the
    # heuristic decision (a run over a huge backlog stays bounded).
    max_llm_items: int = Field(default=200, ge=0)
    # The model also judges statement pairs (clustering, reconciliation)
    # where the local judge is less sure than this; 0: never.
    llm_judge_below: float = Field(default=0.8, ge=0, le=1)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="HALLS_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    # The YAML file to read (set by load_settings on a subclass); None: the
    # file named by HALLS_CONFIG, if any.
    config_file: ClassVar[Path | None] = None

    data_dir: Path = Field(default_factory=_default_data_dir)
    default_store: str = "default"
    server: ServerSettings = Field(default_factory=ServerSettings)
    short: ShortSettings = Field(default_factory=ShortSettings)
    scopes: ScopeSettings = Field(default_factory=ScopeSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    consolidator: ConsolidatorSettings = Field(default_factory=ConsolidatorSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)

    @field_validator("data_dir")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        # YAML and env values like "~/halls" are not expanded by any shell.
        return value.expanduser()

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
    """Reads the YAML file of ``Settings.config_file``, else the one named by HALLS_CONFIG."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = getattr(self.settings_cls, "config_file", None) or os.environ.get("HALLS_CONFIG")
        if not path:
            return {}
        data = read_yaml(Path(path))
        # A misspelt key would otherwise leave its setting at the default in silence.
        unknown = unknown_keys(data, self.settings_cls)
        if unknown:
            more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
            raise ValueError(f"config file {Path(path).name}: {unknown[0]}{more}")
        return data


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


def env_warnings() -> list[str]:
    """A message per ``HALLS_*`` environment variable that sets nothing (a misspelling)."""
    return unknown_env(os.environ, Settings)


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Build Settings from defaults, a YAML file, the environment and overrides.

    ``overrides`` take nested dicts (``server={"port": 1}``) and win over all.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    if config is None:
        return Settings(**clean)
    # The file is passed on a subclass, not through the process environment:
    # a second load with another file (a test, an embedding application) must
    # not inherit the first one's.
    config_cls = type("Settings", (Settings,), {"config_file": config})
    return config_cls(**clean)


__all__ = [
    "ConsolidatorSettings",
    "ContextSettings",
    "EmbedderSettings",
    "McpSettings",
    "RecallSettings",
    "ServerSettings",
    "Settings",
    "ShortSettings",
    "TokenSettings",
    "StorageSettings",
    "load_settings",
]
